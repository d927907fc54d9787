"""How a robot's modules become a learner's observation and action (docs/learning.md).

Each module says it itself, as the optional capability
:class:`~coopsim.model.capabilities.Learnable` (or an adapter a user registered for it):
observations: every module of the robot with a reading gives one entry, its reading as float64
(the snapshot's own values, bit for bit), bounded as the module's ``observation_space`` declares
(the sonar's ``[0, max_range]``; unbounded by default). Actions go to the robot's motion module,
the first of its modules that declares ``action_fields``: the Box holds the module's real limits
(``action_space``, from its parameters), and a valid action is stored as the module's command
(``from_action``) exactly as the network's ``set_speeds``/``set_velocity`` would store it.

This module imports no Gymnasium: it returns plain ``(low, high)`` arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from ..model.errors import CoopsimError
from ..model.capabilities import Learnable, capability, reading_fields, supplies
from ..model.plugins import MODULES, motion_module


class LearningError(CoopsimError):
    """A learning environment cannot be made as asked (unknown robot, module, metric...)."""


class Unsupported(LearningError):
    """The scenario (or the batch asked for) is outside what the ``copies`` batch backend
    runs (:mod:`coopsim.env.copies`)."""


class ActionError(LearningError, ValueError):
    """An action outside its space, or of the wrong shape; the message names the agent and
    the bound."""


@dataclass(frozen=True)
class AgentMap:
    """One agent's mapping, fixed at make.

    Attributes:
        name: The robot's network name.
        observe: Module labels observed, in order. widths: Width of each.
        low, high: Observation bounds per module (arrays).
        motion: The motion module label. action_low, action_high: The action Box bounds.
        action_fields: The action's value names, with units (for messages).
        to_command: A checked action -> the motion module's stored command row
            (``Learnable.from_action`` with the robot's parameter values).
        per_target: Per observed module, its values per target (``Learnable.per_target``).
    """

    name: str
    observe: tuple[str, ...]
    widths: tuple[int, ...]
    low: tuple[np.ndarray, ...]
    high: tuple[np.ndarray, ...]
    motion: str
    action_low: np.ndarray
    action_high: np.ndarray
    action_fields: tuple[str, ...] = ()
    to_command: Callable[[np.ndarray], tuple] | None = None
    per_target: tuple[int, ...] = ()

    def command(self, action) -> tuple:
        """The motion module's command row for ``action``, checked first (:meth:`check_action`).

        Raises:
            ActionError: as :meth:`check_action`.
        """
        return self.to_command(self.check_action(action))

    def check_action(self, action) -> np.ndarray:
        """``action`` as a float64 array, checked against the space.

        Raises:
            ActionError: wrong shape, not finite, or outside the bounds (names the agent,
                the value and the bound).
        """
        fields = self.action_fields
        try:
            a = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError):
            raise ActionError(f"{self.name}: action {action!r} is not an array of "
                              f"{len(fields)} numbers ({', '.join(fields)})") from None
        if a.shape != self.action_low.shape:
            raise ActionError(f"{self.name}: action has shape {a.shape}, the {self.motion} "
                              f"space has shape {self.action_low.shape} ({', '.join(fields)})")
        self.check_bounds(a)
        return a

    def check_bounds(self, a: np.ndarray) -> None:
        """Check a float64 action of the right shape against the bounds.

        Raises:
            ActionError: a value outside its bound or not a number (names the agent, the
                value and the bound).
        """
        # a few numbers: compared as Python floats (cheaper than four numpy calls)
        lows, highs = self._bounds
        for i, (v, low, high) in enumerate(zip(a.ravel().tolist(), lows, highs)):
            if low <= v <= high:  # NaN is outside too
                continue
            raise ActionError(f"{self.name}: action {self.action_fields[i]} = {float(a[i])!r} "
                              f"is outside the {self.motion} bound [{self.action_low[i]:g}, "
                              f"{self.action_high[i]:g}]")

    @property
    def _bounds(self) -> tuple[list, list]:
        """The action's bounds as Python floats (made once; the map is frozen)."""
        bounds = self.__dict__.get("_bounds_lists")
        if bounds is None:
            bounds = (self.action_low.ravel().tolist(), self.action_high.ravel().tolist())
            object.__setattr__(self, "_bounds_lists", bounds)
        return bounds


def agent_map(world, name: str, observe=None, n_targets: int | None = None) -> AgentMap:
    """The mapping of robot ``name`` of a :class:`~coopsim.sim.world.World`.

    Args:
        observe: Module labels to observe (None: every module of the robot that can be
            observed, in the robot type's order).
        n_targets: The targets an agent sees (None: the world's; a batched world's copy sees
            its own, not every copy's).

    Raises:
        LearningError: no such robot, a module it lacks or that cannot be observed, no motion
            module a learner can drive.
    """
    robots = {r.name: r for r in world.robots}
    if name not in robots:
        raise LearningError(f"no robot named {name!r} (robots: {', '.join(robots) or 'none'})")
    robot = robots[name]
    n_targets = len(world.targets) if n_targets is None else n_targets
    observe, lows, highs = _observed(robot, observe, n_targets)
    motion = motion_module(robot.modules)
    if motion is None:
        raise LearningError(f"robot {name} has no motion module a learner can drive (a module "
                            "declaring action_fields; it has: "
                            f"{', '.join(robot.modules)})")
    module, params = _learnable(motion), robot.modules[motion]
    alow, ahigh = _pair(module.action_space(params), len(module.action_fields), motion,
                        "action_space")
    return AgentMap(name, observe, tuple(len(low) for low in lows), lows, highs, motion, alow,
                    ahigh, tuple(module.action_fields),
                    lambda a: module.from_action(a, params),
                    tuple(_learnable(label).per_target for label in observe))


def _observed(robot, observe, n_targets: int) -> tuple[tuple, tuple, tuple]:
    """(labels, lows, highs) of what ``robot`` observes: ``observe``, or every module of it
    that can be observed.

    Raises:
        LearningError: a module it lacks or that cannot be observed.
    """
    if observe is None:
        observe = [m for m, params in robot.modules.items()
                   if _learnable(m).observation_space(params, n_targets) is not None]
    for label in observe:
        if label not in robot.modules:
            raise LearningError(f"robot {robot.name} has no module {label!r} to observe (it "
                                f"has: {', '.join(robot.modules)})")
    bounds = [observation_bounds(label, robot.modules[label], n_targets, robot.name)
              for label in observe]
    return tuple(observe), tuple(b[0] for b in bounds), tuple(b[1] for b in bounds)


def plain_actions(label: str) -> bool:
    """Whether module ``label`` stores an action as it is, zero-padded (it keeps
    ``Learnable.from_action``'s default): what batched worlds store, for every copy at once."""
    return not supplies(MODULES.get(label), Learnable, "from_action")


def _learnable(label: str):
    """Module ``label`` as a learner sees it (its :class:`~coopsim.model.capabilities.
    Learnable` members, the defaults for those it leaves out)."""
    return capability(MODULES.get(label), Learnable, default=True)


def observation_bounds(label: str, params, n_targets: int, robot: str) -> tuple:
    """(low, high) float64 arrays of module ``label``'s reading as ``robot`` observes it.

    Raises:
        LearningError: the module has no reading, or declares bounds of the wrong width.
    """
    bounds = _learnable(label).observation_space(params, n_targets)
    if bounds is None:
        raise LearningError(f"robot {robot}: module {label} cannot be observed (it has no "
                            "reading; its observation_space says None)")
    width = len(reading_fields(MODULES.get(label), n_targets))
    return _pair(bounds, width, label, "observation_space")


def _pair(bounds, width: int, label: str, hook: str) -> tuple[np.ndarray, np.ndarray]:
    """A module's ``(low, high)`` declaration as float64 arrays of ``width`` values each."""
    try:
        low, high = (np.asarray(b, dtype=np.float64).reshape(-1) for b in bounds)
    except (TypeError, ValueError):
        raise LearningError(f"module {label}: {hook} must return (low, high) arrays, "
                            f"got {bounds!r}") from None
    if low.shape != (width,) or high.shape != (width,):
        raise LearningError(f"module {label}: {hook} gives {low.size} and {high.size} bounds "
                            f"for {width} values")
    return low, high
