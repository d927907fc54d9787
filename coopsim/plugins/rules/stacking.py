"""``stacked`` and ``delivered``: the grades of manipulation tasks (CoopDynSim's arms).

Both read the objects' 3D poses (``Snapshot.object_pose3d``: centre x, y, z in m, world frame)
and their sizes (``Snapshot.object_specs``); an object's speed is its centre's displacement
between two graded steps over their time (m/s). A *spot* is a ``[TARGET]`` marker of a named
colour: its x, y are where the stack (or the object) must stand, its z the height of the
surface it stands on (0 on the floor, a table's top height on a table).

* ``stacked``: the objects of a stack stand one on another on their spot: sorted by height, the
  lowest one's bottom is within ``gap`` m of the spot's z and its centre within ``radius`` m of
  the spot's x, y; each next one's centre is within ``radius`` m (horizontally) of the one below
  and ``(h_below + h) / 2`` above it within ``gap`` m; every one moves slower than ``speed``
  m/s. ``color red`` stacks every object of that colour on the red target; ``color red+blue``
  grades two stacks (each colour's objects on its own target); ``objects OBJECT_1+OBJECT_2``
  names the objects of one stack (on the target of ``color``). PASS once every stack has stood
  ``hold`` s, at the time the last one was complete; FAIL after ``limit`` s, saying what is
  wrong with each unfinished stack.
* ``delivered``: one named object rests on its spot (a stack of one): within ``radius`` m of the
  spot's x, y, its bottom within ``gap`` m of the spot's z, slower than ``speed`` m/s.

**Arm metrics** (the arm comparison of docs/experiments/arms.md). ``stacked`` also measures, for
every robot with a ``joints`` and a ``tool`` module (an arm), from the step readings: the
length of the tool point's path (m, world frame), the joint effort (the integral over time of
the sum of the joints' absolute drive torques, N m s) and its finishing time (s: when the stack
on the spot nearest its base was complete, the one it is taken to work on). Both integrals stop
then. They are the rule's ``metrics`` (names
``ROBOT.time``, ``ROBOT.path``, ``ROBOT.effort``): on the state stream, in ``/sim state`` and in
recordings, and ``coopsim export RECORDING --csv OUT --metrics-csv FILE`` writes them per step.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.driver import Rule
from ...model.errors import RuleParameterError
from ...model.params import ParamSpec
from ...model.specs import COLORS
from ..params import number

SEPARATOR = "+"  # between names in one word: a scenario's parameter values are single words


def _words(value: str) -> list[str]:
    return [w for w in value.split(SEPARATOR) if w]


def _spot(scenario, color: str, rule: str, param: str):
    """The first ``[TARGET]`` of ``color``; RuleParameterError naming ``param`` when none."""
    for t in scenario.targets:
        if t.color == color:
            return t
    have = sorted({t.color for t in scenario.targets})
    raise RuleParameterError([param], f"{rule}: no {color} target to stand on: add "
                                      f"'{color} x y z' to [TARGET] (the scenario has "
                                      f"{', '.join(have) or 'no target'})")


class _Motion:
    """Object speeds from the displacement of their centres between graded steps."""

    def __init__(self) -> None:
        self.last: tuple[float, np.ndarray] | None = None
        self.speeds = np.zeros(0)

    def update(self, time: float, centres: np.ndarray) -> np.ndarray:
        """(M,) speeds, m/s (infinite at the first step: nothing is at rest before it is
        seen twice)."""
        if self.last is None or self.last[1].shape != centres.shape or time <= self.last[0]:
            self.speeds = np.full(len(centres), np.inf)
        else:
            self.speeds = np.linalg.norm(centres - self.last[1], axis=1) / (time - self.last[0])
        self.last = (time, centres.copy())
        return self.speeds


def stack_problem(centres, heights, speeds, spot, radius: float, gap: float,
                  speed: float) -> str:
    """Why objects with these ``centres`` ((k, 3) m), ``heights`` ((k,) m) and ``speeds``
    ((k,) m/s) are not a stack resting on ``spot`` ((x, y, surface z) m); "" when they are."""
    order = np.argsort(centres[:, 2], kind="stable")
    below = None
    for k, i in enumerate(order, 1):
        c, h = centres[i], heights[i]
        if below is None:
            off = math.hypot(c[0] - spot[0], c[1] - spot[1])
            if off > radius:
                return f"the lowest is {off:.3f} m from the spot (at most {radius:g} m)"
            rise = c[2] - h / 2 - spot[2]
            if abs(rise) > gap:
                return f"the lowest's bottom is {rise:+.3f} m off the surface (at most {gap:g} m)"
        else:
            bc, bh = below
            off = math.hypot(c[0] - bc[0], c[1] - bc[1])
            if off > radius:
                return f"number {k} from the bottom is {off:.3f} m beside the one below " \
                       f"(at most {radius:g} m)"
            rise = c[2] - bc[2] - (bh + h) / 2
            if abs(rise) > gap:
                return f"number {k} from the bottom is {rise:+.3f} m off the one below " \
                       f"(at most {gap:g} m)"
        below = (c, h)
    fast = float(np.max(speeds)) if len(speeds) else 0.0
    if fast > speed:
        return f"it still moves ({fast:.3f} m/s; at rest below {speed:g} m/s)"
    return ""


class _Stack:
    """One graded stack: its objects (indices into the snapshot's objects) and its spot."""

    def __init__(self, color: str, names: list[str], spot) -> None:
        self.color, self.names, self.spot = color, names, tuple(spot.position)
        self.problem = "not graded yet"
        self.since: float | None = None  # complete since, s
        self.done: float | None = None  # complete and held, from when, s

    def fields(self) -> dict:
        return {"color": self.color, "objects": self.names, "complete_since": self.since,
                "done": self.done, "problem": self.problem}


def grade(stack: _Stack, snap, speeds, p) -> None:
    """Update one stack's state from this step's poses (``p``: the rule's radius, gap, speed
    and hold)."""
    if stack.done is not None:
        return
    present = [n for n in stack.names if n in snap.objects]
    if len(present) < len(stack.names):
        stack.problem, stack.since = "an object of it is not in the world", None
        return
    rows = [snap.objects.index(n) for n in present]
    centres = np.asarray(snap.object_pose3d[rows, :3])
    heights = np.array([snap.object_specs[r].size[2] for r in rows])
    stack.problem = stack_problem(centres, heights, speeds[rows], stack.spot, p["radius"],
                                  p["gap"], p["speed"])
    if stack.problem:
        stack.since = None
        return
    stack.since = snap.time if stack.since is None else stack.since
    if snap.time - stack.since >= p["hold"] - 1e-9:
        stack.done = stack.since


class Stacked(Rule):
    """PASS when every stack stands on its spot at rest for ``hold`` s within ``limit`` s."""

    label = "stacked"
    description = ("grade stacking: objects (named, or every one of a colour) one on another "
                   "on the target of their colour, at rest; per-arm time, path and effort")
    params = (
        ParamSpec("color", "str", "colour of the stack's objects and of its target; several "
                                  "stacks as red+blue", "red"),
        ParamSpec("objects", "str", "names of one stack's objects (OBJECT_1+OBJECT_2...), or "
                                    "'any' for every object of the colour", "any"),
        number("radius", "largest horizontal offset, from the spot and between neighbours, m",
               0.02, 0.001, 10.0, "m"),
        number("gap", "largest vertical misfit of a bottom on what is under it, m", 0.01,
               0.0001, 10.0, "m"),
        number("speed", "objects slower than this are at rest, m/s", 0.02, 0.0001, 10.0, "m/s"),
        number("hold", "how long the stacks must stand, s", 0.5, 0.0, 600.0, "s"),
        number("limit", "FAIL when the stacks do not stand this long into the run, s", 120.0,
               0.1, 86400.0, "s"),
    )

    def __init__(self, params) -> None:
        super().__init__(params)
        self.stacks: list[_Stack] = []
        self.motion = _Motion()
        self.arms: dict[str, dict] = {}  # robot -> its metrics and the stack it works on
        self.finished: float | None = None

    def check(self, scenario) -> None:
        colors, named = _words(self.p["color"]), self.p["objects"]
        if not colors:
            raise RuleParameterError(["color"], "stacked: name a colour (red, or red+blue)")
        for c in colors:
            if c not in COLORS:
                raise RuleParameterError(["color"], f"stacked: {c!r} is not a named colour "
                                                    f"({', '.join(COLORS)})")
        objects = {o.name: o for o in scenario.objects + scenario.world.objects}
        if named != "any":
            if len(colors) != 1:
                raise RuleParameterError(["objects"], "stacked: named objects make one stack: "
                                                      "give one colour (its target's)")
            names = _words(named)
            missing = [n for n in names if n not in objects]
            if missing or len(names) < 2:
                raise RuleParameterError(["objects"], f"stacked: a stack needs 2 or more of "
                                         f"the scenario's objects ({', '.join(objects)}); "
                                         f"{', '.join(missing) or named} is not")
            self.stacks = [_Stack(colors[0], names, _spot(scenario, colors[0], "stacked",
                                                          "color"))]
            return
        self.stacks = []
        for c in colors:
            names = [n for n, o in objects.items() if o.mass > 0 and o.color == COLORS[c]]
            if len(names) < 2:
                raise RuleParameterError(["color"], f"stacked: a {c} stack needs 2 or more "
                                                    f"movable {c} objects, the scenario has "
                                                    f"{len(names)}")
            self.stacks.append(_Stack(c, names, _spot(scenario, c, "stacked", "color")))

    def after_step(self, sim, snap) -> None:
        if snap.object_pose3d is None:
            self.end("FAIL: stacked needs a 3D world (engine mujoco); this run's engine is "
                     "planar")
            return
        speeds = self.motion.update(snap.time, np.asarray(snap.object_pose3d[:, :3]))
        if not self.arms:
            self._find_arms(snap)
        for stack in self.stacks:
            grade(stack, snap, speeds, self.p)
        self._measure(snap)
        if self.finished is None and all(s.done is not None for s in self.stacks):
            self.finished = max(s.done for s in self.stacks)
            self.end(f"PASS: {self._said()} stacked at t = {self.finished:.2f} s and stood "
                     f"{self.p['hold']:g} s")
        elif self.finished is None and snap.time >= self.p["limit"] - 1e-9:
            open_ = [f"{s.color} ({s.problem})" for s in self.stacks if s.done is None]
            self.end(f"FAIL: not stacked in {self.p['limit']:g} s: {'; '.join(open_)}")

    def _said(self) -> str:
        return " and ".join(f"{len(s.names)} {s.color}" for s in self.stacks)

    # -- per-arm metrics ------------------------------------------------------------------------

    def _find_arms(self, snap) -> None:
        """The robots with joints and tool readings, each given the stack nearest its base."""
        if "joints" not in snap.readings or "tool" not in snap.readings:
            return
        for name in snap.robots:
            i = snap.index[name]
            if np.isnan(snap.readings["tool"][i]).all():
                continue
            d = [math.hypot(s.spot[0] - snap.poses[i, 0], s.spot[1] - snap.poses[i, 1])
                 for s in self.stacks]
            self.arms[name] = {"stack": int(np.argmin(d)), "path": 0.0, "effort": 0.0,
                               "time": None, "tool": None, "t": snap.time}

    def _measure(self, snap) -> None:
        """Add this step's tool path and effort of every arm still working."""
        if not self.arms:
            return
        jf, tf = snap.fields["joints"], snap.fields["tool"]
        efforts = [jf.index(f"e{k}") for k in range(1, 8) if f"e{k}" in jf]
        xyz = [tf.index(k) for k in ("x", "y", "z")]
        for name, arm in self.arms.items():
            if arm["time"] is not None:
                continue
            i = snap.index.get(name)
            if i is None:
                continue
            tool = np.asarray(snap.readings["tool"][i, xyz], dtype=float)
            dt = snap.time - arm["t"]
            if arm["tool"] is not None and np.isfinite(tool).all():
                arm["path"] += float(np.linalg.norm(tool - arm["tool"]))
            torque = np.nan_to_num(np.asarray(snap.readings["joints"][i, efforts], dtype=float))
            arm["effort"] += float(np.abs(torque).sum()) * max(dt, 0.0)
            arm["tool"], arm["t"] = tool, snap.time
            stack = self.stacks[arm["stack"]]
            if stack.done is not None:
                arm["time"] = stack.done

    def fields(self) -> dict:
        metrics = {}
        for name, arm in self.arms.items():
            metrics[f"{name}.time"] = arm["time"]
            metrics[f"{name}.path"] = round(arm["path"], 5)
            metrics[f"{name}.effort"] = round(arm["effort"], 4)
        return {"stacks": [s.fields() for s in self.stacks], "finished": self.finished,
                "metrics": metrics}


class Delivered(Rule):
    """PASS when ``object`` rests on the target of ``color`` for ``hold`` s within ``limit``."""

    label = "delivered"
    description = "grade a delivery: an object at rest on the target of a colour"
    params = (
        ParamSpec("object", "str", "name of the object to deliver", "OBJECT_1"),
        ParamSpec("color", "str", "colour of the target it must rest on", "red"),
        number("radius", "largest horizontal distance from the target, m", 0.1, 0.001, 10.0,
               "m"),
        number("gap", "largest height of its bottom off the target's z, m", 0.02, 0.0001,
               10.0, "m"),
        number("speed", "slower than this it is at rest, m/s", 0.02, 0.0001, 10.0, "m/s"),
        number("hold", "how long it must rest there, s", 0.5, 0.0, 600.0, "s"),
        number("limit", "FAIL when not delivered this long into the run, s", 120.0, 0.1,
               86400.0, "s"),
    )

    def __init__(self, params) -> None:
        super().__init__(params)
        self.stack: _Stack | None = None
        self.motion = _Motion()

    def check(self, scenario) -> None:
        name = self.p["object"]
        objects = {o.name for o in scenario.objects + scenario.world.objects}
        if name not in objects:
            raise RuleParameterError(["object"], f"delivered: no object {name!r} in the "
                                                 f"scenario (it has "
                                                 f"{', '.join(sorted(objects)) or 'none'})")
        color = self.p["color"]
        self.stack = _Stack(color, [name], _spot(scenario, color, "delivered", "color"))

    def after_step(self, sim, snap) -> None:
        if snap.object_pose3d is None:
            self.end("FAIL: delivered needs a 3D world (engine mujoco); this run's engine is "
                     "planar")
            return
        speeds = self.motion.update(snap.time, np.asarray(snap.object_pose3d[:, :3]))
        s, p = self.stack, self.p
        grade(s, snap, speeds, p)  # the same grade: a stack of one
        name = s.names[0]
        if s.done is not None:
            self.end(f"PASS: {name} delivered on the {s.color} target at t = {s.done:.2f} s "
                     f"and rested {p['hold']:g} s")
        elif snap.time >= p["limit"] - 1e-9:
            self.end(f"FAIL: {name} not delivered on the {s.color} target in "
                     f"{p['limit']:g} s: {s.problem}")

    def fields(self) -> dict:
        return self.stack.fields() if self.stack else {}
