"""The metric-kind contract: one class declares one kind of ``[MONITORS]`` metric.

A ``[MONITORS]`` line ``metric NAME KIND ARGS...`` names a kind registered under
``coopsim.metrics`` (the built-ins too: ``distance``, ``speed``, ``at_target``, ``python`` beside
the monitors rule, ``min_sonar`` beside the sonar module that it reads). The kind says how many
arguments it takes and what they mean, checks them against the file (:meth:`MetricKind.parse`)
and against the scenario's robots and objects (:meth:`MetricKind.check`), and builds the function
the ``monitors`` rule calls with every step's snapshot (:meth:`MetricKind.build`). Nothing here
imports pymunk or zmq.
"""

from __future__ import annotations

import math
from typing import Callable, ClassVar, Mapping

import numpy as np


class MetricKind:
    """Base of metric kinds; subclasses set the class attributes and override :meth:`build`
    (and :meth:`parse` / :meth:`check` when their arguments need more than a count).

    Class attributes:
        label: The kind's name in ``metric NAME KIND ...``, registered under it.
        description: One line for ``coopsim list``: the arguments and the unit of the value.
        args: (min, max) number of arguments.
        runs_code: True when its first argument names code to import and run
            (``MODULE:FUNCTION``): such a metric runs only from a file given on the command
            line, or with ``--allow-python`` (docs/reliability.md).
        copy_term: What the ``copies`` batch backend computes for it in every copy
            (:mod:`coopsim.env.copysense`): ``"near_target"`` (arguments ``ROBOT [RADIUS]
            [COLOR]``: 1 when the robot's centre is within RADIUS m, default 0.5, of a target
            of COLOR, default any, else 0); "" (the default): not computed there.
    """

    label: ClassVar[str] = ""
    description: ClassVar[str] = ""
    args: ClassVar[tuple[int, int]] = (1, 1)
    runs_code: ClassVar[bool] = False
    copy_term: ClassVar[str] = ""

    @classmethod
    def parse(cls, args: tuple[str, ...]) -> None:
        """Check the arguments' own syntax (numbers, words) as the file is read.

        Raises:
            ValueError: a sentence saying which argument is wrong (reported at the line).
        """

    @classmethod
    def check(cls, args: tuple[str, ...], robots: Mapping[str, tuple[str, ...]],
              objects: frozenset) -> None:
        """Check the arguments against the scenario; the default wants ``args[0]`` a robot.

        Args:
            robots: Every robot's network name -> the module labels it carries.
            objects: Every object name in the world and scenario.

        Raises:
            ValueError: a sentence saying what is missing (reported at the line).
        """
        need_robot(args[0], robots)

    @classmethod
    def build(cls, *args: str) -> Callable:
        """The function of one snapshot (:class:`~coopsim.model.snapshot.Snapshot`) that
        gives the metric's value this step: a float in SI units, NaN when it cannot be computed
        (a robot or object not in the world then)."""
        raise NotImplementedError

    @classmethod
    def validate(cls) -> None:
        """Check the declaration (called when the kind registers).

        Raises:
            ValueError: a label that is no identifier, or an impossible argument count.
        """
        if not cls.label.isidentifier():
            raise ValueError(f"metric kind label {cls.label!r} is not an identifier")
        low, high = cls.args
        if not 0 <= low <= high:
            raise ValueError(f"metric kind {cls.label}: args {cls.args} is not a (min, max)")


def need_robot(name: str, robots: Mapping) -> None:
    """Raise ValueError unless ``name`` is a robot of the scenario."""
    if name not in robots:
        raise ValueError(f"no robot named {name!r}")


def robot_row(snap, name: str, fn: Callable) -> float:
    """``fn(row)`` for robot ``name``'s row in ``snap``, or NaN when it is not there."""
    i = snap.index.get(name)
    return float("nan") if i is None else float(fn(i))


_SPOTS: dict[str, tuple] = {}  # colour -> (the targets tuple, its spots of that colour)
_LAST: list[tuple] = [(None, -1, "", 0.0)]  # the last (snapshot, row, colour, distance)


def nearest_target(snap, row: int, color: str = "any") -> float:
    """Distance from robot ``row``'s centre in ``snap`` to the nearest target of ``color``
    (``any``: every target), m; NaN without such a target.

    Each distance is numpy's ``hypot`` of the differences, as an array of them would give
    (a few targets: one scalar call each, cheaper). The spots of a colour are kept until the
    snapshot's ``targets`` tuple changes (it changes with the layout only), and the last
    answer for the same snapshot (snapshots never change).
    """
    last = _LAST[0]  # two metrics of one step often ask the same (at_target, a distance)
    if last[0] is snap and last[1] == row and last[2] == color:
        return last[3]
    known = _SPOTS.get(color)
    if known is None or known[0] is not snap.targets:
        known = _SPOTS[color] = (snap.targets, [t.position[:2] for t in snap.targets
                                                if color in ("any", t.color)])
    if not known[1]:
        return math.nan
    x, y = snap.poses[row, :2].tolist()
    value = float(min(np.hypot(tx - x, ty - y) for tx, ty in known[1]))
    _LAST[0] = (snap, row, color, value)
    return value
