"""How a robot's modules become a learner's observation and action (docs/learning.md).

Observations: every module of the robot that has reading fields gives one entry, its reading
as float64 (the snapshot's own values, bit for bit). Bounds come from :data:`OBSERVATION_BOUNDS`
where a module guarantees them (the sonar clips to ``[0, max_range]``); elsewhere they are
unbounded. Actions go to the robot's motion module through :data:`ACTIONS`: the Box holds the
module's real limits (its parameters), and a valid action is stored as the module's command
exactly as the network's ``set_speeds``/``set_velocity`` would store it.

This module imports no Gymnasium: it returns plain ``(low, high)`` arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from ..model.errors import CoopsimError
from ..model.plugins import MODULES


class LearningError(CoopsimError):
    """A learning environment cannot be made as asked (unknown robot, module, metric...)."""


class ActionError(LearningError, ValueError):
    """An action outside its space, or of the wrong shape; the message names the agent and
    the bound."""


Bounds = Callable[[Mapping[str, float], int], tuple]

#: module label -> (robot's parameter values, width) -> (low, high) of its reading.
OBSERVATION_BOUNDS: dict[str, Bounds] = {
    "sonar": lambda p, n: (np.zeros(n), np.full(n, float(p["max_range"]))),
    "bumper": lambda p, n: (np.zeros(n), np.ones(n)),
}


@dataclass(frozen=True)
class ActionMap:
    """How one motion module takes actions.

    Attributes:
        fields: Names of the action's values, with units (for messages).
        bounds: Robot's parameter values -> (low, high) arrays.
        command: Action array -> the module's stored command row.
    """

    fields: tuple[str, ...]
    bounds: Callable[[Mapping[str, float]], tuple]
    command: Callable[[np.ndarray], tuple]


def _symmetric(*limits: str):
    return lambda p: (-np.array([float(p[k]) for k in limits]),
                      np.array([float(p[k]) for k in limits]))


#: motion module label -> its ActionMap (a plugin's motion module adds a row here).
ACTIONS: dict[str, ActionMap] = {
    "motors": ActionMap(("left m/s", "right m/s"), _symmetric("max_speed", "max_speed"),
                        lambda a: (float(a[0]), float(a[1]))),
    "velocity": ActionMap(("vx m/s", "vy m/s", "yaw_rate rad/s"),
                          _symmetric("max_speed", "max_speed", "max_yaw_rate"),
                          lambda a: (float(a[0]), float(a[1]), float(a[2]), 0.0, 0.0, 0.0)),
}


@dataclass(frozen=True)
class AgentMap:
    """One agent's mapping, fixed at make.

    Attributes:
        name: The robot's network name.
        observe: Module labels observed, in order. widths: Width of each.
        low, high: Observation bounds per module (arrays).
        motion: The motion module label. action_low, action_high: The action Box bounds.
    """

    name: str
    observe: tuple[str, ...]
    widths: tuple[int, ...]
    low: tuple[np.ndarray, ...]
    high: tuple[np.ndarray, ...]
    motion: str
    action_low: np.ndarray
    action_high: np.ndarray

    def check_action(self, action) -> np.ndarray:
        """``action`` as a float64 array, checked against the space.

        Raises:
            ActionError: wrong shape, not finite, or outside the bounds (names the agent,
                the value and the bound).
        """
        fields = ACTIONS[self.motion].fields
        try:
            a = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError):
            raise ActionError(f"{self.name}: action {action!r} is not an array of "
                              f"{len(fields)} numbers ({', '.join(fields)})") from None
        if a.shape != self.action_low.shape:
            raise ActionError(f"{self.name}: action has shape {a.shape}, the {self.motion} "
                              f"space has shape {self.action_low.shape} ({', '.join(fields)})")
        bad = ~((a >= self.action_low) & (a <= self.action_high))  # NaN is outside too
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ActionError(f"{self.name}: action {fields[i]} = {float(a[i])!r} is outside the "
                              f"{self.motion} bound [{self.action_low[i]:g}, "
                              f"{self.action_high[i]:g}]")
        return a


def agent_map(world, name: str, observe=None) -> AgentMap:
    """The mapping of robot ``name`` of a :class:`~coopsim.sim.world.World`.

    Args:
        observe: Module labels to observe (None: every module of the robot with a reading,
            in the robot type's order).

    Raises:
        LearningError: no such robot, a module it lacks, no motion module with a mapping.
    """
    robots = {r.name: r for r in world.robots}
    if name not in robots:
        raise LearningError(f"no robot named {name!r} (robots: {', '.join(robots) or 'none'})")
    robot = robots[name]
    n_targets = len(world.targets)
    carried = [m for m in robot.modules if MODULES.get(m).field_names(n_targets)]
    observe = tuple(carried if observe is None else observe)
    for label in observe:
        if label not in robot.modules:
            raise LearningError(f"robot {name} has no module {label!r} to observe (it has: "
                                f"{', '.join(robot.modules)})")
    widths, lows, highs = [], [], []
    for label in observe:
        n = len(MODULES.get(label).field_names(n_targets))
        params = robot.modules[label]
        low, high = OBSERVATION_BOUNDS.get(label, lambda p, n: (np.full(n, -np.inf),
                                                                np.full(n, np.inf)))(params, n)
        widths.append(n)
        lows.append(np.asarray(low, dtype=np.float64))
        highs.append(np.asarray(high, dtype=np.float64))
    motion = [m for m in robot.modules if m in ACTIONS]
    if not motion:
        raise LearningError(f"robot {name} has no motion module with an action mapping "
                            f"(known: {', '.join(ACTIONS)})")
    alow, ahigh = ACTIONS[motion[0]].bounds(robot.modules[motion[0]])
    return AgentMap(name, observe, tuple(widths), tuple(lows), tuple(highs), motion[0],
                    np.asarray(alow, dtype=np.float64), np.asarray(ahigh, dtype=np.float64))
