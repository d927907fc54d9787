"""``joints``: a 3D arm's joints (the robot's ``arm``), read and driven by set points.

Reading (rad, rad/s, N m; joints beyond the arm's ``dof`` read 0): ``dof``, the angles
``q1..q7``, the rates ``qd1..qd7`` and the drive torques ``e1..e7`` of the last step. The
angles are recorded and streamed as ``arm_q1..arm_q7`` (0.1 mrad steps), which is all a
replay needs to redraw the arm (:func:`coopsim.model.arm.frames`).

Commands (motion: the latest wins; checked against the robot's arm when they arrive):

* ``set_positions q1..qdof [speed]``: a synchronised joint move (every joint starts and stops
  together) at ``speed`` (0-1], default 0.5) of the joints' top speeds;
* ``set_velocities qd1..qdof``: joint rates held (each joint stops at its limit);
* ``set_trajectory t1 q1..qdof t2 ...``: up to 8 waypoints, ``t`` seconds from the step that
  takes the command, strictly increasing; piecewise linear in joint space;
* ``stop``: hold the angles the arm has when the step takes it;
* ``wait``: change nothing: the current move goes on (in lockstep: one more step).

A target beyond a joint's limits (or not a number), a rate beyond its top speed or a waypoint
segment needing more than a joint's top speed is refused with error 4 naming the joint and
its limit, and nothing moves. The segment from where the arm is to the first waypoint is
known only when a step takes the command: when it would need more than a joint's top speed,
the whole trajectory starts later by what it lacks (that segment then runs at top speed).

A command takes effect in the step that takes it: the set points it gives for the end of that
step go to the engine's joint servos (:meth:`~coopsim.model.module.PhysicsAccess.
set_arm_targets`) before the physics runs. A stored command is told apart from the one before
by its values: sending the same command again (the client's ``repeat()``) goes on with it. The
motion state (the plan each robot follows) is kept on the run's board (``_joints``, by robot
name). ``tool.move_to`` (an action, between two steps) leaves a ``set_positions`` for the next
step on the board (``_arm_moves``): a ``wait`` taken with it goes on with that move.
"""

from __future__ import annotations

import math

import numpy as np

from ...model import armkernel
from ...model.arm import MAX_JOINTS, ArmSpec, limit_reason
from ...model.commands import OUT_OF_RANGE, WRONG_ARITY, Command
from ...model.errors import ProtocolError
from ...model.limits import shown
from ...model.module import Column, Module
from . import armkernels
from .common import ByName, row_names

MAX_POINTS = 8  # waypoints of one set_trajectory
POINT = 1 + MAX_JOINTS  # t, q1..q7
HEAD = 3  # mode, speed, count
WIDTH = HEAD + MAX_POINTS * POINT
NONE, POSITIONS, VELOCITIES, TRAJECTORY, STOP, WAIT = 0.0, 1.0, 2.0, 3.0, 4.0, 5.0
DEFAULT_SPEED = 0.5
#: The slowest move, as a fraction of the joints' top speeds: a smaller one takes hours (the
#: IRB 120's 800-degree wrist at 1e-6 of 420 deg/s: 22 days; at 5e-324 the time is inf).
MIN_SPEED = 0.001
MOVES = "_arm_moves"  # the board's moves tool.move_to left for the next step, by robot name
_J = range(1, MAX_JOINTS + 1)
_ANY = np.logical_or.reduce  # ndarray.any without its Python wrapper (a step calls it often)


def _fields() -> tuple[str, ...]:
    return ("mode", "speed", "count") + tuple(
        f"p{k}_{n}" for k in range(1, MAX_POINTS + 1) for n in ("t", *(f"q{j}" for j in _J)))


class Joints(Module):
    """An arm's joint angles, rates and torques; synchronised moves, rates, trajectories.

    On the wire (robot endpoint commands; the protocol's section 3):

    - ``read`` (4000): request nothing; reply ``[dof, q1..q7, qd1..qd7, e1..e7]``: an arm's
      joint count, angles rad, rates rad/s and drive torques N m of the last step (joints
      beyond ``dof`` read 0); recorded and streamed as columns ``arm_q1``..``arm_q7`` (0.1
      mrad)
    - ``set_positions`` (4001): request data = ``dof`` angles rad, optionally followed by a
      speed fraction in [0.001, 1] (default 0.5); reply a motion command: a synchronised joint
      move (every joint starts and stops together, the slowest at that fraction of its top
      speed) from the angles the arm has when a step takes it; error 4 for an angle beyond its
      joint's limits or NaN (the text names the joint and its range in rad and degrees) or a
      fraction outside [0.001, 1] (a slower move would take hours; the text says so); error 3
      for another count than ``dof`` or ``dof + 1``. Nothing moves on an error
    - ``set_trajectory`` (4003): request data = k ≤ 8 waypoints of ``dof + 1`` values each,
      ``[t, q1..qdof, t, ...]``, t s from the step that takes it, > 0 and strictly increasing;
      reply a motion command: piecewise linear in joint space through the waypoints. **A
      trajectory faster than the arm is refused**: error 4 naming the segment, the joint and
      its top speed when a segment between two waypoints needs more than a joint's top speed,
      error 4 for a waypoint beyond the limits or times that do not increase, error 3 for a
      count that is not a multiple of ``dof + 1`` or more than 8 waypoints; nothing moves. The
      segment from where the arm is to the first waypoint is known only when a step takes the
      command: when it would need more than a joint's top speed, the whole trajectory starts
      later by what it lacks (that segment at top speed)
    """

    label = "joints"
    description = ("a 3D arm's joints: angles (rad), rates (rad/s), torques (N m); "
                   "synchronised moves, rates and trajectories within the data sheet's limits")
    commands = (
        Command(4000, "read", "joints", kind="read",
                doc="dof, q1..q7 (rad), qd1..qd7 (rad/s), e1..e7 (N m); unused joints 0"),
        Command(4001, "set_positions", "joints", data=(1, MAX_JOINTS + 1), kind="motion",
                doc="dof angles (rad) [, speed fraction of the top speeds in [0.001, 1], default "
                    "0.5]: a synchronised move"),
        Command(4002, "set_velocities", "joints", data=(1, MAX_JOINTS), kind="motion",
                doc="dof joint rates (rad/s), each within its top speed, held until the limit"),
        Command(4003, "set_trajectory", "joints", data=(2, MAX_POINTS * POINT), kind="motion",
                doc="k <= 8 waypoints 't q1..qdof' (t s from now, increasing): piecewise "
                    "linear; a segment faster than a joint's top speed is refused (error 4)"),
        Command(4004, "stop", "joints", kind="motion", doc="hold the angles the arm has now"),
        Command(4005, "wait", "joints", kind="motion",
                doc="change nothing: the current move goes on (in lockstep: one more step)"),
    )
    fields = ("dof", *(f"q{j}" for j in _J), *(f"qd{j}" for j in _J), *(f"e{j}" for j in _J))
    command_fields = _fields()
    columns = tuple(Column(f"arm_q{j}", 1e-4, 2, j, "reading", stream=True) for j in _J)

    @classmethod
    def command_row(cls, command, data, params, robot):
        arm = getattr(robot, "arm", None)
        if arm is None:
            raise ProtocolError(OUT_OF_RANGE, f"{getattr(robot, 'name', 'this robot')} has no "
                                              "arm: joints commands need a robot type with one")
        name = command.name
        if name in ("stop", "wait"):
            return _row(STOP if name == "stop" else WAIT)
        if name == "set_positions":
            return positions_row(arm, *_positions(arm, data))
        if name == "set_velocities":
            _arity(name, arm, data, arm.dof, f"{arm.dof} rates")
            for link, rate in zip(arm.links, data):
                _rate_within(name, arm, link, rate)
            return _row(VELOCITIES, points=[(0.0, *data)])
        return _row(TRAJECTORY, points=_trajectory(arm, data))

    kernel_views = ("arm", "arm_chain")  # its reading: one compiled call (armkernels)
    kernel_sense = armkernels.joints_sense

    @classmethod
    def actuate(cls, frame, rows, p, commands):
        board = frame.extra.get("_joints")
        if board is None:
            board = frame.extra["_joints"] = Plans()
        at = board.slots(frame, rows)
        if frame.extra.get(MOVES):
            _take_moves(frame, rows, at, board)
        arrays = board.arrays  # every robot of the board, in its order: no gather
        whole = board.ordered and len(at) == len(arrays["t0"])
        changed = _ANY(commands != (arrays["last"] if whole else arrays["last"][at]), axis=1)
        if _ANY(changed):
            plan = {k: v[at] for k, v in board.arrays.items()}
            # a cleared command (a layout restored) drops the plan: the arm holds where it is
            cleared = changed & (commands[:, 0] == NONE)
            plan["mode"][cleared], plan["live"][cleared] = NONE, False
            fresh = changed & (commands[:, 0] != NONE)
            if _ANY(fresh):
                _start(frame, rows[fresh], commands[fresh], plan, fresh)
            plan["last"][changed] = commands[changed]
            board.put(at, plan)
        live = board.arrays["live"][at]
        if _ANY(live):
            slots, arrays = at[live], board.arrays
            # every robot of the board live, in its order (one arm moving): the arrays
            # themselves, read only; else a gather of what _evaluate reads (not the commands)
            plan = arrays if board.ordered and len(slots) == len(arrays["t0"]) else \
                {k: arrays[k][slots] for k in _EVALUATED}
            e = frame.time + frame.dt - plan["t0"]
            q, qd, done = _evaluate(plan, e)
            frame.physics.set_arm_targets(rows[live], q, qd)
            if _ANY(done):  # its last set point is held by the engine: nothing more to send
                board.arrays["live"][at[live][done]] = False
        return None


def _take_moves(frame, rows, at, board) -> None:
    """Start the moves ``tool.move_to`` left on the board for robots ``rows`` (before the
    stored commands: a ``wait`` taken in the same step goes on with the move, any other
    joints command taken in it wins)."""
    moves = frame.extra[MOVES]
    names = row_names(frame, rows)
    hit = np.array([i for i, n in enumerate(names) if n in moves], dtype=np.int64)
    if not len(hit):
        return
    orders = np.array([moves.pop(names[i]) for i in hit], dtype=float)
    plan = {k: v[at[hit]] for k, v in board.arrays.items()}
    _start(frame, rows[hit], orders, plan, np.ones(len(hit), bool))
    board.put(at[hit], plan)


def start_move(extra: dict, robot: str, row: tuple) -> None:
    """Leave a stored ``set_positions`` row for ``robot`` on the run's board (``extra``):
    the next step starts it (what ``tool.move_to`` does between two steps)."""
    extra.setdefault(MOVES, {})[robot] = row


#: The plan of one robot's arm (the board's arrays): the stored command it came from, its
#: start time (s), its kind, and the waypoints from the angles at its start (times s, angles
#: rad; padded with the last point at t = inf) or the rates and limits of a rate command;
#: ``live`` while it still has set points to send.
PLAN = {"last": np.zeros(WIDTH), "t0": 0.0, "mode": NONE, "count": 1.0, "live": False,
        "times": np.full(MAX_POINTS + 1, np.inf), "points": np.zeros((MAX_POINTS + 1,
                                                                       MAX_JOINTS)),
        "rates": np.zeros(MAX_JOINTS), "lo": np.zeros(MAX_JOINTS), "hi": np.zeros(MAX_JOINTS)}


_EVALUATED = ("t0", "mode", "count", "times", "points", "rates", "lo", "hi")  # what _evaluate reads


class Plans(ByName):
    """The robots' plans by name (robots come and go, names stay), with the slots of the
    frame's rows kept between steps while the layout (the frame's ``names``) is the same."""

    def __init__(self) -> None:
        super().__init__(**PLAN)
        self.arrays["live"] = self.arrays["live"].astype(bool)
        self._key: tuple = (None, b"")
        self._at = np.zeros(0, np.int64)
        self.ordered = True  # _at is 0, 1, ...: the board's slots in the rows' order

    def slots(self, frame, rows: np.ndarray) -> np.ndarray:
        """(len(rows),) the board's slot of each robot (new robots get one)."""
        key = (frame.names, rows.tobytes())
        if key[0] is not self._key[0] or key[1] != self._key[1]:
            names = row_names(frame, rows)
            self.put(names, {})  # slots for robots not seen before
            self._at = np.array([self.index[n] for n in names], dtype=np.int64)
            self.ordered = bool((self._at == np.arange(len(self._at))).all())
            self._key = key
        return self._at

    def put(self, names_or_slots, values: dict) -> None:
        """Store ``values`` at slots (an index array) or for robot names."""
        if isinstance(names_or_slots, np.ndarray):
            for k, v in values.items():
                self.arrays[k][names_or_slots] = v
            return
        super().put(names_or_slots, values)
        self.arrays["live"] = self.arrays["live"].astype(bool)


def arm_state(frame, rows) -> np.ndarray:
    """(len(rows), MAX_JOINTS, 3) the arms' angle, rate, torque, once per frame and rows
    (the plans' start)."""
    key = ("arm_state", rows.tobytes())
    if key not in frame.memo:
        frame.memo[key] = frame.physics.arm_state(rows)
    return frame.memo[key]


def _row(mode: float, speed: float = 0.0, points=()) -> tuple[float, ...]:
    """A stored command: mode, speed, count and the points, zero-padded (WIDTH floats)."""
    out = np.zeros(WIDTH)
    out[:HEAD] = mode, speed, len(points)
    for k, point in enumerate(points):
        out[HEAD + k * POINT: HEAD + k * POINT + len(point)] = point
    return tuple(float(v) for v in out)


def positions_row(arm: ArmSpec, q, speed: float = DEFAULT_SPEED) -> tuple[float, ...]:
    """The stored ``set_positions`` command of angles ``q`` (rad, checked already) at
    ``speed`` (0-1] of the top speeds (what ``tool.move_to`` stores too)."""
    return _row(POSITIONS, speed, [(0.0, *q)])


def _arity(name: str, arm: ArmSpec, data, want: int | tuple, what: str) -> None:
    if len(data) not in (want if isinstance(want, tuple) else (want,)):
        raise ProtocolError(WRONG_ARITY, f"{name} for arm {arm.key} ({arm.dof} joints) takes "
                                         f"{what}, got {len(data)} values")


def _angles(name: str, arm: ArmSpec, q, where: str = "") -> None:
    reason = limit_reason(arm, q)
    if reason:
        raise ProtocolError(OUT_OF_RANGE, f"{name}{where}: {reason}")


def _positions(arm: ArmSpec, data) -> tuple[tuple, float]:
    name = "set_positions"
    _arity(name, arm, data, (arm.dof, arm.dof + 1),
           f"{arm.dof} angles and optionally a speed fraction")
    q = tuple(data[:arm.dof])
    _angles(name, arm, q)
    speed = float(data[arm.dof]) if len(data) > arm.dof else DEFAULT_SPEED
    return q, speed_fraction(name, speed)


def speed_fraction(name: str, speed: float) -> float:
    """A move's speed fraction of the joints' top speeds, checked: within [MIN_SPEED, 1].

    Raises:
        ProtocolError: OUT_OF_RANGE (4) outside it or NaN, with the number.
    """
    if not MIN_SPEED <= speed <= 1.0:
        raise ProtocolError(OUT_OF_RANGE, f"{name}: the speed fraction must be within "
                                          f"[{MIN_SPEED:g}, 1] of the joints' top speeds (a "
                                          f"slower move would take hours, or never end), got "
                                          f"{shown(speed, MIN_SPEED, 1.0)}")
    return float(speed)


def _rate_within(name: str, arm: ArmSpec, link, rate: float, where: str = "") -> None:
    top = link.max_speed
    if not abs(rate) <= top:  # NaN fails too
        raise ProtocolError(OUT_OF_RANGE, f"{name}{where}: joint {link.key} of {arm.key} "
                                          f"turns at most {top:.4g} rad/s "
                                          f"({math.degrees(top):.0f} deg/s), not "
                                          f"{shown(rate, top, -top)}")


def _trajectory(arm: ArmSpec, data) -> list[tuple]:
    """The waypoints of a set_trajectory, checked: count, times, limits, segment speeds."""
    name, width = "set_trajectory", arm.dof + 1
    k = len(data) // width
    if len(data) % width or not 1 <= k <= MAX_POINTS:
        raise ProtocolError(WRONG_ARITY, f"{name} for arm {arm.key} takes 1 to {MAX_POINTS} "
                                         f"waypoints of {width} values (t and {arm.dof} "
                                         f"angles), got {len(data)} values")
    points = [tuple(data[i * width:(i + 1) * width]) for i in range(k)]
    before = None
    for i, (t, *q) in enumerate(points, 1):
        where = f" waypoint {i}"
        last = before[0] if before else 0.0
        if not t > last or not math.isfinite(t):
            raise ProtocolError(OUT_OF_RANGE, f"{name}{where}: times must be seconds from now, "
                                              f"> 0 and strictly increasing, got "
                                              f"{shown(t, last)}")
        _angles(name, arm, q, where)
        if before is not None:
            span = t - before[0]
            for link, a, b in zip(arm.links, before[1:], q):
                _rate_within(name, arm, link, (b - a) / span, f" segment {i - 1}-{i}")
        before = (t, *q)
    return points


def _limits(frame, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, MAX_JOINTS) lower and upper limits (rad) and top speeds (rad/s) of the robots'
    arms; unused joints 0, 0 and 1."""
    n = len(rows)
    lo, hi, speeds = np.zeros((n, MAX_JOINTS)), np.zeros((n, MAX_JOINTS)), \
        np.ones((n, MAX_JOINTS))
    for i, arm in enumerate(frame.physics.arms(rows)):
        if arm is not None:
            lo[i, :arm.dof], hi[i, :arm.dof], speeds[i, :arm.dof] = arm.lower, arm.upper, \
                arm.speeds
    return lo, hi, speeds


def _start(frame, rows, commands, plan, fresh) -> None:
    """Plan the new commands of robots ``rows`` from their angles now (into ``plan``)."""
    q0 = np.nan_to_num(arm_state(frame, rows)[:, :, 0])
    lo, hi, speeds = _limits(frame, rows)
    mode = commands[:, 0]
    keep = mode == WAIT
    n = len(rows)
    times = np.full((n, MAX_POINTS + 1), np.inf)
    times[:, 0] = 0.0
    pts = commands[:, HEAD:].reshape(n, MAX_POINTS, POINT)
    count = np.where(mode == STOP, 0, commands[:, 2]).astype(np.int64)
    points = np.repeat(q0[:, None, :], MAX_POINTS + 1, axis=1)
    for k in range(MAX_POINTS):  # waypoints, and the last one repeated after them
        has = (k < count) & (mode != VELOCITIES)
        points[has, k + 1:] = pts[has, k, None, 1:]
        times[has, k + 1] = pts[has, k, 0]
    pos = mode == POSITIONS
    if pos.any():  # the synchronised move's time, from the angles now
        speed = np.where(commands[pos, 1] > 0, commands[pos, 1], DEFAULT_SPEED)
        need = np.abs(points[pos, 1] - q0[pos]) / (speeds[pos] * speed[:, None])
        times[pos, 1] = need.max(axis=1)
    traj = mode == TRAJECTORY
    if traj.any():  # a first segment too fast for the arm: start later by what it lacks
        need = (np.abs(points[traj, 1] - q0[traj]) / speeds[traj]).max(axis=1)
        times[traj, 1:] += np.maximum(need - times[traj, 1], 0.0)[:, None]
    new = {"t0": np.full(n, frame.time), "mode": mode, "live": np.ones(n, bool),
           "count": count + 1.0, "times": times,
           "points": points, "rates": np.where((mode == VELOCITIES)[:, None], pts[:, 0, 1:], 0.0),
           "lo": lo, "hi": hi}
    where = np.flatnonzero(fresh)
    for k, v in new.items():
        plan[k][where[~keep]] = v[~keep]


def _evaluate(plan: dict, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Set points (n, MAX_JOINTS) angle (rad) and rate (rad/s) of the plans ``e`` s after
    their starts, and (n,) whether each is its plan's last (held from then on): one compiled
    call (:func:`coopsim.model.armkernel.evaluate_plans`)."""
    n = len(e)
    q, qd, done = np.empty((n, MAX_JOINTS)), np.empty((n, MAX_JOINTS)), np.empty(n, bool)
    armkernel.evaluate_plans(plan["times"], plan["points"], plan["count"],
                             plan["mode"] == VELOCITIES, plan["rates"], plan["lo"],
                             plan["hi"], np.ascontiguousarray(e, float), q, qd, done)
    return q, qd, done
