"""The Crazyflie hover task as a Gymnasium environment (``coopsim/CrazyflieHover-v0``,
docs/learning.md), and the learner's view of the ``rotors`` module it needs.

The ``rotors`` module declares no action hooks itself; this file registers an adapter
(:func:`coopsim.model.capabilities.register_adapter`) so that a learner drives it: an action is
four normalised propeller commands in [-1, 1], -1 stopped and 1 the airframe's largest speed
(``max_speed`` rad/s), stored as ``set_rotors`` would store the speeds. The environment is
``coopsim/Scenario-v0`` on ``scenarios/crazyflie_hover.scenario`` (one Crazyflie on the
``mujoco`` engine, reward and ends in its ``[TASK]``), observing ``mocap`` and ``imu``.
Gymnasium is imported only by :func:`make`.
"""

from __future__ import annotations

import numpy as np

from ..model.bundled import resolve
from ..model.capabilities import Learnable, register_adapter

SCENARIO = "scenarios/crazyflie_hover.scenario"
SET_ROTORS = 1.0  # the rotors module's stored mode of set_rotors


class RotorsActions:
    """Learnable members for ``rotors``: four normalised propeller commands."""

    action_fields = ("u1 (-1..1 of max_speed)", "u2 (-1..1)", "u3 (-1..1)", "u4 (-1..1)")

    @staticmethod
    def action_space(params):
        return np.full(4, -1.0), np.full(4, 1.0)

    @staticmethod
    def from_action(action, params):
        speeds = (np.asarray(action, dtype=float).ravel() + 1.0) * 0.5 * float(params["max_speed"])
        return (SET_ROTORS, *speeds.tolist(), 0.0, 0.0, 0.0, 0.0)


register_adapter(Learnable, "rotors", RotorsActions)


def make(**kwargs):
    """``coopsim/CrazyflieHover-v0``: the hover task (keyword arguments as CoopsimEnv's; by
    default a flat observation of mocap and imu)."""
    from ..env.gym import CoopsimEnv

    kwargs.setdefault("observe", ("mocap", "imu"))
    kwargs.setdefault("flat", True)
    return CoopsimEnv(resolve(SCENARIO), **kwargs)
