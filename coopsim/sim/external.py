"""External robots: robots whose pose comes from outside, held as bodies that
follow the poses they are sent, with their staleness and the latency of their poses measured.

A pose arrives on the robot's endpoint (``external_pose``, command 20, docs/protocol.md) or
from the ROS 2 bridge, on whatever thread serves it: :meth:`ExternalRobots.receive` checks it
and stores it under a lock. A pose is [x, y, yaw] or the full [x, y, z, qw, qx, qy, qz].
Each step, before the engine steps, :meth:`ExternalRobots.apply` puts every external robot
where its stream is at the step's start, moving so that it ends the step where the stream is
then (interpolated over the interval poses come at: the position on a straight line, the
attitude by slerp), held through the step by the engine's ``hold_rows``: on ``mujoco`` and
``aerial`` at its streamed height and attitude, immovable (simulated robots collide with it and
cannot push it); on a 2D engine in the plane. Frames and units: world frame, m, rad, s;
simulated time for staleness, wall-clock time (``time.perf_counter``) for latencies.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ..model import held
from ..model.commands import POSE_FLOOD, POSE_REFUSED
from ..model.errors import ProtocolError
from ..model.limits import field_problem
from ..model.statedoc import DocKey

#: The longest interval a pose is interpolated over, s (a slower stream jumps at its end).
MAX_INTERPOLATION = 0.25
#: Latency samples kept for the percentiles (the latest ones).
SAMPLES = 20_000
#: A burst of this many seconds' worth of ``max_rate`` poses is let through.
BURST = 0.1
#: The lowest height (m) a pose's origin may have: a little below the floor (a motion-capture
#: system's noise on a robot standing on it); lower is refused (error 14).
MIN_Z = -0.05
#: The highest (m): farther above the floor is refused as a bad frame (error 14).
MAX_Z = 1000.0


#: s: the longest a backlog's arrivals are spread over (see :func:`arrivals`)
SPREAD = 0.5


def arrivals(empty: float, now: float, n: int) -> list[float]:
    """The arrival times (perf_counter s) of ``n`` requests received together at ``now``,
    the socket last seen empty at ``empty``: spread evenly over that interval (at most its
    last :data:`SPREAD` s), the last at ``now``.

    Why: the flood limit (error 15, ``max_rate``) and the pose latencies count from a pose's
    arrival, not from when the thread serving them (the pose channel's, the robot hub's) got
    to it. ZeroMQ stamps no arrival time, and a thread kept off the CPU (a loaded machine) found a steady 200 Hz stream's poses queued
    and took them in one burst: counted then, they were a flood. Each of them arrived after
    the socket was last seen empty and before now; spread over that interval, a stream
    that kept its rate keeps it. A sender cannot fake a stamp (it is the server's clock),
    and the bound still holds: a flood found in a backlog is spread over at most
    :data:`SPREAD` s, so it gains at most ``max_rate`` x SPREAD poses over its rate, once
    (the token bucket is then empty), and its rate stays refused."""
    if n <= 1:
        return [now] * n
    start = max(empty, now - SPREAD)
    return [start + (now - start) * (i + 1) / n for i in range(n)]


@dataclass
class _Track:
    """One external robot's stream: its segment from ``start`` (at ``t_start``) to ``end``
    (at ``t_end``), simulated time, poses (x, y, z, qw, qx, qy, qz; m, unit quaternion body to
    world); ``flat`` when its latest pose came as [x, y, yaw] (held in the plane, at the
    body's own height, level); its counts and pending receipts."""

    spec: object
    start: tuple | None = None
    end: tuple | None = None
    flat: bool = False
    t_start: float = 0.0
    t_end: float = 0.0
    last_sim: float | None = None  # simulated time of the last pose received
    last_wall: float | None = None
    refilled: float | None = None  # wall time the flood allowance was last topped up at
    received: int = 0
    refused: dict = field(default_factory=dict)  # error code -> count
    tokens: float = 0.0
    stale: bool = False
    stale_since: float | None = None
    stale_count: int = 0
    pending: list = field(default_factory=list)  # receipt times of poses not yet applied
    shown: list = field(default_factory=list)  # receipt times shown, no reading served yet


def _at(track: _Track, t: float) -> tuple:
    """The track's pose at simulated time ``t``: along its segment (the position on the
    straight line, the attitude by slerp), held after its end."""
    if track.t_end <= track.t_start or t >= track.t_end:
        return track.end
    f = (t - track.t_start) / (track.t_end - track.t_start)
    return track.start if f <= 0.0 else held.lerp_pose(track.start, track.end, f)


def _pose(track: _Track, robot: str, data: list) -> tuple:
    """A pose's 7 values and whether it came flat ([x, y, yaw]: at the last pose's height,
    level), its height and quaternion checked (the quaternion normalised).

    Raises:
        ProtocolError: POSE_REFUSED: not a unit quaternion (within ``QUAT_TOLERANCE``), or a
            height below ``MIN_Z`` or above ``MAX_Z``.
    """
    if len(data) == 3:
        if field_problem("yaw", data[2]):  # the bounds of every yaw coopsim takes
            raise ProtocolError(POSE_REFUSED, f"{robot}: {field_problem('yaw', data[2])}: "
                                              "refused")
        z = track.end[2] if track.end is not None else 0.0
        return (data[0], data[1], z, *held.yaw_quat(data[2])), True
    norm = math.sqrt(sum(v * v for v in data[3:]))
    if abs(norm - 1.0) > held.QUAT_TOLERANCE:
        raise ProtocolError(POSE_REFUSED, f"{robot}: the quaternion is not a unit one "
                                          f"(norm {norm:.3g})")
    if not MIN_Z <= data[2] <= MAX_Z:
        where = "below the floor" if data[2] < MIN_Z else "too far above the floor"
        raise ProtocolError(POSE_REFUSED, f"{robot}: z {data[2]:.3g} m is {where} (a pose's "
                                          f"height is {MIN_Z:g} to {MAX_Z:g} m): refused")
    return (*data[:3], *(v / norm for v in data[3:])), False


class ExternalRobots:
    """The external robots of a run: their streams, staleness and latencies.

    Args:
        robots: The scenario's RobotSpecs (those with ``external`` set are tracked).
        floor: The FloorSpec (a pose off the floor is refused).
    """

    def __init__(self, robots, floor) -> None:
        self.tracks = {r.name: _Track(r.external) for r in robots
                       if getattr(r, "external", None) is not None}
        self.floor = floor
        self.lock = threading.Lock()
        self.to_snapshot: deque = deque(maxlen=SAMPLES)  # s: pose received -> its snapshot
        self.to_reading: deque = deque(maxlen=SAMPLES)  # s: pose received -> a reading served
        self._applied: list = []  # receipts applied by the step being taken
        self.now = 0.0  # simulated time of the last step (poses are stamped with it)

    def __bool__(self) -> bool:
        return bool(self.tracks)

    def follow(self, robots) -> None:
        """Track the external robots among ``robots`` (RobotSpecs, the world's sections now)
        and forget those gone: robots inserted at run time can be external (protocol 11, the
        stepper's thread; a kept robot keeps its stream)."""
        specs = {r.name: r.external for r in robots if getattr(r, "external", None) is not None}
        with self.lock:
            for name in [n for n in self.tracks if specs.get(n) is None]:
                del self.tracks[name]
            for name, spec in specs.items():
                if name not in self.tracks or self.tracks[name].spec != spec:
                    self.tracks[name] = _Track(spec)

    # -- poses in (any thread) ------------------------------------------------------------------

    def check_shape(self, robot: str, data) -> None:
        """Refuse a pose that is not 3 or 7 finite numbers before anything else about it (its
        owner) is looked at, counted in the robot's ``refused`` as :meth:`receive` counts.

        Raises:
            ProtocolError: POSE_REFUSED with the sentence.
        """
        why = _malformed(data)
        if not why:
            return
        track = self.tracks.get(robot)
        if track is not None:
            with self.lock:
                track.refused[POSE_REFUSED] = track.refused.get(POSE_REFUSED, 0) + 1
        raise ProtocolError(POSE_REFUSED, f"{robot}: {why}")

    def receive(self, robot: str, data, wall: float | None = None) -> None:
        """Take one pose of ``robot`` (``[x, y, yaw]`` or ``[x, y, z, qw, qx, qy, qz]``, m and
        rad, world frame) that arrived at ``wall`` (``time.perf_counter`` s; default now): the
        flood limit and the latencies count from its arrival (the pose channel stamps it as
        it receives it: coopsim.net.posechannel.arrivals).

        Raises:
            ProtocolError: POSE_REFUSED (not external, not finite, off the floor, a jump
                beyond ``max_speed``), POSE_FLOOD (beyond ``max_rate``). Nothing is stored.
        """
        wall = time.perf_counter() if wall is None else wall
        track = self.tracks.get(robot)
        if track is None:
            raise ProtocolError(POSE_REFUSED, f"{robot} is not an external robot: its pose is "
                                              "the simulation's (mark it 'external' in its "
                                              "[ROBOT_n] section)")
        with self.lock:
            try:
                pose = self._checked(track, robot, data, wall)
            except ProtocolError as exc:
                track.refused[exc.code] = track.refused.get(exc.code, 0) + 1
                raise
            self._store(track, pose, wall)

    def _checked(self, track: _Track, robot: str, data, wall: float) -> tuple:
        """The pose ``data`` as (pose 7-tuple, flat), checked: its numbers, its place, the
        stream's rate and the jump from the last pose."""
        spec = track.spec
        if _malformed(data):
            raise ProtocolError(POSE_REFUSED, f"{robot}: {_malformed(data)}")
        pose, flat = _pose(track, robot, [float(v) for v in data])
        x, y = pose[0], pose[1]
        if not self.floor.contains(x, y):
            raise ProtocolError(POSE_REFUSED, f"{robot}: ({x:.3g}, {y:.3g}) m is off the "
                                              "floor: refused")
        if track.refilled is None:
            track.tokens = spec.max_rate * BURST + 1.0
        else:  # arrivals from two paths (the channel, a robot's endpoint) may cross: >= 0
            track.tokens = min(spec.max_rate * BURST + 1.0, track.tokens + max(
                0.0, wall - track.refilled) * spec.max_rate)
        track.refilled = wall if track.refilled is None else max(track.refilled, wall)
        if track.tokens < 1.0:
            raise ProtocolError(POSE_FLOOD, f"{robot}: poses come faster than its max_rate "
                                            f"{spec.max_rate:g} Hz: this one is dropped")
        if track.end is not None and not track.stale:
            # in 3D when both poses have a height, in the plane when either came without
            jump = math.dist(pose[:2 if flat or track.flat else 3],
                             track.end[:2 if flat or track.flat else 3])
            allowed = spec.max_jump + spec.max_speed * max(0.0, wall - track.last_wall)
            if jump > allowed:
                raise ProtocolError(POSE_REFUSED, f"{robot}: a jump of {jump:.3g} m from its "
                                                  f"last pose (at most {allowed:.3g} m at its "
                                                  f"max_speed {spec.max_speed:g} m/s): refused")
        return pose, flat

    def _store(self, track: _Track, checked: tuple, wall: float) -> None:
        pose, track.flat = checked
        interval = 0.0 if track.last_wall is None or track.stale else \
            min(MAX_INTERPOLATION, max(0.0, wall - track.last_wall))
        track.start = pose if track.end is None else _at(track, self.now)
        track.end, track.t_start, track.t_end = pose, self.now, self.now + interval
        track.last_sim, track.last_wall = self.now, wall
        track.tokens -= 1.0
        track.received += 1
        if len(track.pending) < 1024:
            track.pending.append(wall)

    # -- the step (the stepper's thread) ----------------------------------------------------------

    def apply(self, sim) -> None:
        """Before the engine steps: every external robot with a pose put where its stream is
        at the step's start, moving so that it is where the stream is at the step's end
        (position and attitude; at rest when stale), held there through the step
        (``Engine.hold_rows``: on ``mujoco`` and ``aerial`` at its height and attitude, on a
        2D engine in the plane; a robot streaming [x, y, yaw] through ``reset_rows``, level at
        its own height); staleness updated."""
        if not self.tracks:
            return
        t0, t1 = sim.time, sim.time + sim.dt
        held_rows, states, flat_rows, flat = [], [], [], []
        with self.lock:
            self.now = t1
            for name, track in self.tracks.items():
                row = sim.robots.index.get(name)
                if row is None or track.end is None:
                    continue
                self._mark_stale(track, t1)
                a = _at(track, t0)
                state = held.carrying(a, a if track.stale else _at(track, t1), sim.dt)
                (flat_rows if track.flat else held_rows).append(row)
                (flat if track.flat else states).append(state)
                self._applied.extend((name, w) for w in track.pending)
                track.pending.clear()
        engine = sim.world.engine
        if held_rows:
            engine.hold_rows(np.array(held_rows), np.array(states, dtype=float))
        if flat_rows:
            engine.reset_rows(np.array(flat_rows), held.planar(np.array(flat, dtype=float)))
        sim.extra["external_stale"] = self.stale_robots()  # readers: HUD, summary, rules

    def _mark_stale(self, track: _Track, now: float) -> None:
        stale = now - track.last_sim > track.spec.stale
        if stale and not track.stale:
            track.stale_count += 1
            track.stale_since = track.last_sim + track.spec.stale
        track.stale = stale
        if not stale:
            track.stale_since = None

    def published(self) -> None:
        """The step's snapshot is out: each pose it applied has its pose -> snapshot time."""
        if not self._applied:
            return
        now = time.perf_counter()
        with self.lock:
            for name, wall in self._applied:
                self.to_snapshot.append(now - wall)
                self.tracks[name].shown.append(wall)
            self._applied = []

    def served(self, robot: str) -> None:
        """A reading of ``robot`` was served: each pose shown since has its pose -> reading."""
        track = self.tracks.get(robot)
        if track is None or not track.shown:
            return
        now = time.perf_counter()
        with self.lock:
            self.to_reading.extend(now - w for w in track.shown)
            track.shown.clear()

    # -- what readers see -------------------------------------------------------------------------

    def stale_robots(self) -> tuple[str, ...]:
        """The robots stale now, and those still waiting for their first pose."""
        return tuple(n for n, t in self.tracks.items() if t.stale or t.end is None)

    def state(self) -> dict:
        """The ``external`` entry of ``/sim state`` (docs/protocol.md section 4)."""
        with self.lock:
            robots = {name: {"status": "waiting" if t.end is None else
                             "stale" if t.stale else "live",
                             "received": t.received, "last": t.last_sim,
                             "stale_since": t.stale_since, "stale_count": t.stale_count,
                             "refused": {str(k): v for k, v in sorted(t.refused.items())},
                             "last_pose": None if t.end is None else list(t.end)}
                      for name, t in self.tracks.items()}
            latency = {"to_snapshot": _figures(self.to_snapshot),
                       "to_reading": _figures(self.to_reading)}
        return {"robots": robots, "latency": latency}

    def summary(self) -> str:
        """One line for a headless run's summary ("" without external robots)."""
        if not self.tracks:
            return ""
        state = self.state()
        words = [f"{n} {r['status']} ({r['received']} poses, stale {r['stale_count']} "
                 "times)" for n, r in state["robots"].items()]
        lat = state["latency"]
        ms = [f"{SUMMARY_WORDS[k]} p95 {v['p95'] * 1e3:.1f} ms" for k, v in lat.items()
              if v["count"]]
        return "; ".join(words + ms)


#: The summary's words for the latencies: ``to_reading`` ends when a client reads, so it says
#: how long a reader waited for the pose, not how soon a reading held it.
SUMMARY_WORDS = {"to_snapshot": "to snapshot", "to_reading": "to the next read by a client"}


def _malformed(data) -> str:
    """Why ``data`` is no pose (not 3 or 7 numbers, or one not finite), or ""."""
    if len(data) not in (3, 7):
        got = f"{len(data)} numbers"
    elif not all(math.isfinite(v) for v in data):
        got = "a number that is not finite (NaN or infinity)"
    else:
        return ""
    return (f"a pose is 3 numbers [x, y, yaw] or 7 [x, y, z, qw, qx, qy, qz], all finite; got "
            f"{got}: refused")


def _figures(samples) -> dict:
    """Count, p50, p95 and max (s) of latency samples (zeros without any)."""
    if not samples:
        return {"count": 0, "p50": 0.0, "p95": 0.0, "max": 0.0}
    a = np.fromiter(samples, dtype=float)
    p50, p95 = np.percentile(a, [50, 95])
    return {"count": int(len(a)), "p50": float(p50), "p95": float(p95), "max": float(a.max())}


#: The keys of ``/sim state``'s ``external`` (docs/reference/state.md is generated from them).
EXTERNAL_KEYS = (
    DocKey("robots", "robot -> object", "each external robot's stream", fields=(
        DocKey("status", "string", "`waiting` (no pose yet), `live`, or `stale` (no pose for "
               "its `stale` timeout)"),
        DocKey("received", "integer", "poses taken"),
        DocKey("last", "number, s", "the simulated time of the latest"),
        DocKey("stale_since", "number or null, s", "when it went stale; null while live"),
        DocKey("stale_count", "integer", "how often it went stale"),
        DocKey("refused", "code -> integer", "poses refused by error code (as a string: 14, "
               "15); a pose of a robot that is not external is not counted"),
        DocKey("last_pose", "[x, y, z, qw, qx, qy, qz] or null", "the latest pose taken (a "
               "3-value one at the last height, level; the quaternion normalised); null "
               "before the first", since=11))),
    DocKey("latency", "object", f"wall-clock latencies over the latest {SAMPLES:,} poses, "
           "each `{count, p50, p95, max}` in s", fields=(
        DocKey("to_snapshot", "object", "pose received -> the snapshot of the step that "
               "applied it published"),
        DocKey("to_reading", "object", "pose received -> the first reading of that robot "
               "served after that snapshot"))),
)
#: ``/sim state``'s ``external`` entry.
EXTERNAL = DocKey("external", "object", "the external robots' pose streams "
                  "(docs/in-the-loop.md)", since=10, present="a run with external robots",
                  fields=EXTERNAL_KEYS)
