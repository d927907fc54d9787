"""The Crazyflie hover task as a Gymnasium environment (``coopsim/CrazyflieHover-v0``,
docs/learning.md): ``coopsim/Scenario-v0`` on ``scenarios/crazyflie_hover.scenario`` (one
Crazyflie on the ``mujoco`` engine; reward and episode ends in its ``[TASK]``).

The quadrotor's drive module (its member's ``drive``) declares no action hooks; :func:`make`
registers an adapter for it (:func:`coopsim.model.capabilities.register_adapter`, only where the
module has none of its own) so that a learner drives it: an action is four normalised propeller
commands in [-1, 1], -1 stopped and 1 the airframe's largest speed (``max_speed``, rad/s),
stored through the module's own ``set_rotors`` command (``command_row``: its checks included).
"""

from __future__ import annotations

import numpy as np

from ..model.bundled import resolve
from ..model.capabilities import Learnable, capability, register_adapter
from ..model.plugins import MODULES, ROBOT_TYPES
from .episode import load

SCENARIO = "scenarios/crazyflie_hover.scenario"
COMMAND = "set_rotors"  # the drive module's command taking four propeller speeds, rad/s


class PropellerActions:
    """Learnable members for a drive module with a ``set_rotors`` command."""

    action_fields = ("u1 (-1..1 of max_speed)", "u2 (-1..1)", "u3 (-1..1)", "u4 (-1..1)")

    def __init__(self, module) -> None:
        self.module = module
        self.command = next(c for c in module.commands if c.name == COMMAND)

    def action_space(self, params):
        return np.full(4, -1.0), np.full(4, 1.0)

    def from_action(self, action, params):
        a = np.clip(np.asarray(action, dtype=float).ravel(), -1.0, 1.0)
        speeds = (a + 1.0) * 0.5 * float(params["max_speed"])
        return tuple(self.module.command_row(self.command, tuple(speeds.tolist()), params, None))


def drive_label(scenario) -> str:
    """The drive module's label of the scenario's first robot (its first member's ``drive``)."""
    robot = scenario.robots[0]
    return ROBOT_TYPES.get(robot.type).build(robot).members[0].drive


def make(**kwargs):
    """``coopsim/CrazyflieHover-v0``: the hover task (keyword arguments as CoopsimEnv's; a flat
    observation by default)."""
    from .gym import CoopsimEnv

    spec = load(resolve(SCENARIO))
    label = drive_label(spec)
    module = MODULES.get(label)
    if not capability(module, Learnable, default=True).action_fields:
        register_adapter(Learnable, label, PropellerActions(module))
    kwargs.setdefault("flat", True)
    return CoopsimEnv(spec, **kwargs)
