"""Robot-side behaviours: the state a robot reads, the commands it obeys, and its reflexes.

A behaviour is any object with ``active(state) -> bool`` and ``act(state) -> (left, right)``
(wheel speeds, m/s); an :class:`~coopsim.swarm.arbitrator.Arbitrator` runs the highest-priority
active one. The layers, highest priority first:

1. reflexes: :class:`AvoidCollision` (bumpers, near sonar echoes), :class:`AvoidLines` (zone
   outlines seen by the front floor sensors), :class:`RespectBorders` (floor edges, no-go
   polygons such as water, from the map);
2. commands: :class:`CommandLayer` runs one :class:`GoTo`, :class:`Rotate`, :class:`Stop`,
   :class:`PickUp`, :class:`Drop` or :class:`~coopsim.swarm.structure.Track` (keep a slot of a
   squad's moving formation);
3. sequence commands: :class:`SequenceLayer` runs a :class:`Sequence` of commands in order;
4. squad behaviours: anything a squad installs (e.g. :class:`Hold`), then :class:`Idle`.

Robots are duck-typed: anything with ``gps.read()``, ``compass.read()``, ``sonar.read()``,
``bumper.read()`` and ``motors.set_speeds()`` -- a :class:`coopsim.client.Robot` over the network,
or an in-process stand-in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence as Seq

import numpy as np

from ..model.specs import FloorSpec

from .errors import SwarmError
from .follower import Drive, PathFollower, steer, wheel_speeds, wrap
from .structure import Track

#: Bearing of each sonar beam relative to the nose, rad: right (-90 deg) to left (+90 deg).
SONAR_ANGLES = tuple(math.radians(-90.0 + 18.0 * i) for i in range(11))
SONAR_RANGE = 2.0  # m


@dataclass(frozen=True)
class RobotState:
    """One reading of a robot's sensors.

    Attributes:
        x, y: Position, m, world frame.
        yaw: Heading, rad, CCW from +x.
        sonar: 11 distances from the chassis edge, m, right (-90 deg) to left (+90 deg).
        bumper: (front, rear), 1 when pressed.
        time: When it was read, s (the caller's clock; only differences matter).
        line: (left, right) front floor sensors, 1 where one sees a zone (the ``line``
            module; (0, 0) for robots without it).
    """

    x: float
    y: float
    yaw: float
    sonar: tuple[float, ...] = (SONAR_RANGE,) * 11
    bumper: tuple[int, int] = (0, 0)
    time: float = 0.0
    line: tuple[int, int] = (0, 0)

    @classmethod
    def read(cls, robot, time: float = 0.0) -> "RobotState":
        """Read gps, compass, sonar and bumper once each (and line, if the robot has it)."""
        x, y = robot.gps.read()[:2]
        line = tuple(int(v) for v in robot.line.read()[:2]) if hasattr(robot, "line") \
            else (0, 0)
        return cls(float(x), float(y), float(robot.compass.read()[0]),
                   tuple(float(d) for d in robot.sonar.read()),
                   tuple(int(b) for b in robot.bumper.read()[:2]), float(time), line)


# --- commands --------------------------------------------------------------------------------
@dataclass(frozen=True)
class GoTo:
    """Drive to (x, y), m, world frame; done within ``tolerance`` m."""

    x: float
    y: float
    tolerance: float = 0.15


@dataclass(frozen=True)
class Rotate:
    """Turn on the spot by ``angle`` rad (CCW positive) from the heading when it starts."""

    angle: float
    tolerance: float = 0.05


@dataclass(frozen=True)
class Stop:
    """Stand still until another command replaces this one."""


@dataclass(frozen=True)
class PickUp:
    """Mark ``item`` as carried (coopsim robots have no gripper: game logic reads the flag)."""

    item: str = "flag"


@dataclass(frozen=True)
class Drop:
    """Mark the carried item as dropped."""


@dataclass(frozen=True)
class Sequence:
    """Commands run one after the other."""

    commands: tuple = ()

    def __post_init__(self) -> None:
        for c in self.commands:
            if not isinstance(c, SIMPLE_COMMANDS):
                raise SwarmError(f"a Sequence holds simple commands, not {type(c).__name__}")


SIMPLE_COMMANDS = (GoTo, Rotate, Stop, PickUp, Drop, Track)


@dataclass
class Cargo:
    """What a robot carries (set by PickUp, cleared by Drop); shared by its command layers."""

    item: str | None = None


class _Run:
    """Carries out one simple command (or a run of consecutive GoTos, as one path)."""

    def __init__(self, commands: Seq, drive: Drive, cargo: Cargo) -> None:
        self.command = commands[0]
        self.drive, self.cargo = drive, cargo
        self.follower = None
        if isinstance(self.command, GoTo):
            self.follower = PathFollower([(c.x, c.y) for c in commands],
                                         [c.tolerance for c in commands], drive)
        self.target_yaw: float | None = None
        self.applied = False

    def finished(self, s: RobotState) -> bool:
        c = self.command
        if isinstance(c, Track):
            return c.structure.arrived
        if self.follower is not None:
            return self.follower.done(s.x, s.y)
        if isinstance(c, Rotate):
            if self.target_yaw is None:
                self.target_yaw = s.yaw + c.angle
            return abs(wrap(self.target_yaw - s.yaw)) <= c.tolerance
        if isinstance(c, (PickUp, Drop)):
            return self.applied
        return False  # Stop lasts until replaced

    def act(self, s: RobotState) -> tuple[float, float]:
        if isinstance(self.command, Track):
            return self.command.structure.control(self.command.index, s)
        if self.follower is not None:
            return self.follower.speeds(s.x, s.y, s.yaw)
        if isinstance(self.command, Rotate):
            error = wrap(self.target_yaw - s.yaw)
            return wheel_speeds(0.0, self.drive.k_heading * error, self.drive)
        if isinstance(self.command, (PickUp, Drop)) and not self.applied:
            self.cargo.item = self.command.item if isinstance(self.command, PickUp) else None
            self.applied = True
        return 0.0, 0.0


class CommandLayer:
    """Runs the robot's single current command (a new one replaces it)."""

    name = "command"

    def __init__(self, drive: Drive = Drive(), cargo: Cargo | None = None) -> None:
        self.drive, self.cargo = drive, cargo if cargo is not None else Cargo()
        self.command = None
        self._run: _Run | None = None

    def set(self, command) -> None:
        """Replace the current command (None clears it)."""
        if command is not None and not isinstance(command, SIMPLE_COMMANDS):
            raise SwarmError(f"not a simple command: {command!r}")
        self.command = command
        self._run = None if command is None else _Run([command], self.drive, self.cargo)

    def active(self, state: RobotState) -> bool:
        return self._run is not None and not self._run.finished(state)

    def act(self, state: RobotState) -> tuple[float, float]:
        return self._run.act(state)


class SequenceLayer:
    """Runs the robot's current :class:`Sequence`, consecutive GoTos followed as one path."""

    name = "sequence"

    def __init__(self, drive: Drive = Drive(), cargo: Cargo | None = None) -> None:
        self.drive, self.cargo = drive, cargo if cargo is not None else Cargo()
        self.command: Sequence | None = None
        self.index = 0  # first command not yet finished
        self._run: _Run | None = None
        self._run_length = 0

    def set(self, sequence: Sequence | None) -> None:
        """Replace the current sequence (None clears it)."""
        self.command, self.index, self._run = sequence, 0, None

    def active(self, state: RobotState) -> bool:
        while self.command is not None and self.index < len(self.command.commands):
            if self._run is None:
                self._start()
            if not self._run.finished(state):
                return True
            self.index += self._run_length
            self._run = None
        return False

    @property
    def running(self):
        """The simple command being carried out now (the first of a run of GoTos), or None
        before the sequence's next command has started."""
        return None if self._run is None else self._run.command

    @property
    def follower(self):
        """The PathFollower of the GoTo run being carried out, or None (another command, or
        none started)."""
        return None if self._run is None else self._run.follower

    def _start(self) -> None:
        rest = self.command.commands[self.index:]
        n = 1
        if isinstance(rest[0], GoTo):
            while n < len(rest) and isinstance(rest[n], GoTo):
                n += 1
        self._run, self._run_length = _Run(rest[:n], self.drive, self.cargo), n

    def act(self, state: RobotState) -> tuple[float, float]:
        return self._run.act(state)


class Hold:
    """A squad behaviour: return to a station (x, y) m when pushed more than ``tolerance`` m
    away from it, then stand still."""

    name = "hold"

    def __init__(self, x: float, y: float, tolerance: float = 0.2, drive: Drive = Drive()):
        self.point, self.tolerance, self.drive = (x, y), tolerance, drive

    def active(self, state: RobotState) -> bool:
        return math.hypot(state.x - self.point[0], state.y - self.point[1]) > self.tolerance

    def act(self, state: RobotState) -> tuple[float, float]:
        return steer(state.x, state.y, state.yaw, self.point, self.drive)


class Idle:
    """The bottom layer: always active, stands still."""

    name = "idle"

    def active(self, state: RobotState) -> bool:
        return True

    def act(self, state: RobotState) -> tuple[float, float]:
        return 0.0, 0.0


# --- reflexes --------------------------------------------------------------------------------
class _TurnAway:
    """The reflexes' manoeuvre: turn on the spot to ``_target_yaw`` (phase ``turn``), then go
    forward at half speed (phase ``advance``); subclasses decide when each phase starts and
    ends (``active``)."""

    phase: str | None
    _target_yaw: float
    drive: Drive

    def act(self, s: RobotState) -> tuple[float, float]:
        if self.phase == "turn":
            error = wrap(self._target_yaw - s.yaw)
            return wheel_speeds(0.0, self.drive.k_heading * error, self.drive)
        return wheel_speeds(0.5 * self.drive.max_speed, 0.0, self.drive)


class AvoidCollision(_TurnAway):
    """Reflex: after a bump, or an echo nearer than ``d_crit`` m within ``half_angle`` rad of the
    nose, turn 90 degrees away from it, then go forward ``d_crit * tan(half_angle)`` m (the
    paper's manoeuvre). A rear bump just drives forward that far.

    The manoeuvre is latched (it runs to its end even once the echo is gone) and restarts if a
    new obstacle shows up while going forward.
    """

    name = "avoid"

    def __init__(self, d_crit: float = 0.15, half_angle: float = math.radians(36.0),
                 drive: Drive = Drive()) -> None:
        self.d_crit, self.half_angle, self.drive = d_crit, half_angle, drive
        #: the sonar beams it watches (indices into RobotState.sonar)
        self.beams = [i for i, a in enumerate(SONAR_ANGLES) if abs(a) <= half_angle + 1e-9]
        self.phase: str | None = None  # None, "turn" or "advance"
        self._target_yaw = 0.0
        self._origin = (0.0, 0.0)

    def _blocked_side(self, s: RobotState) -> float | None:
        """Bearing of the nearest echo inside the critical cone, rad, or None."""
        near = [(s.sonar[i], SONAR_ANGLES[i]) for i in self.beams if s.sonar[i] < self.d_crit]
        return min(near)[1] if near else None

    def active(self, s: RobotState) -> bool:
        bearing = self._blocked_side(s)
        if s.bumper[0] or bearing is not None:
            if self.phase != "turn":
                away = -1.0 if (bearing or 0.0) > 0 else 1.0  # obstacle on the left: turn right
                self.phase, self._target_yaw = "turn", s.yaw + away * math.pi / 2
        elif s.bumper[1] and self.phase is None:
            self.phase, self._origin = "advance", (s.x, s.y)
        if self.phase == "turn" and abs(wrap(self._target_yaw - s.yaw)) < 0.1:
            self.phase, self._origin = "advance", (s.x, s.y)
        if self.phase == "advance":
            gone = math.hypot(s.x - self._origin[0], s.y - self._origin[1])
            if gone >= self.d_crit * math.tan(self.half_angle):
                self.phase = None
        return self.phase is not None



class AvoidLines(_TurnAway):
    """Reflex: when a front floor sensor (``line``) sees a zone's outline (water, a border),
    turn 90 degrees away from it -- to the right when the left sensor sees it, to the left for
    the right one, to the right for both -- then go forward ``advance`` m (the paper's
    respect-border behaviour, on the infrared floor sensor). Latched like
    :class:`AvoidCollision`; a new sighting while going forward restarts the turn."""

    name = "lines"

    def __init__(self, advance: float = 0.1, drive: Drive = Drive()) -> None:
        self.advance, self.drive = advance, drive
        self.phase: str | None = None
        self._target_yaw = 0.0
        self._origin = (0.0, 0.0)

    def active(self, s: RobotState) -> bool:
        left, right = s.line[0], s.line[1]
        if (left or right) and self.phase != "turn":
            away = 1.0 if right and not left else -1.0
            self.phase, self._target_yaw = "turn", s.yaw + away * math.pi / 2
        if self.phase == "turn" and abs(wrap(self._target_yaw - s.yaw)) < 0.1:
            self.phase, self._origin = "advance", (s.x, s.y)
        if self.phase == "advance" and \
                math.hypot(s.x - self._origin[0], s.y - self._origin[1]) >= self.advance:
            self.phase = None
        return self.phase is not None



class RespectBorders:
    """Reflex: near a floor edge or a no-go polygon, or inside one, and heading towards it, turn
    on the spot until heading away (inside a polygon: drive out the nearest way).

    Args:
        floor: The floor whose edges bound the game.
        no_go: Polygons (water...), each (k, 2) vertices, m, world frame.
        margin: Distance from a border (robot centre to border, m) below which the reflex acts.
    """

    name = "borders"

    def __init__(self, floor: FloorSpec, no_go: Seq = (), margin: float = 0.25,
                 drive: Drive = Drive()) -> None:
        self.floor, self.margin, self.drive = floor, margin, drive
        self.polygons = [np.asarray(p, dtype=float).reshape(-1, 2) for p in no_go]
        # Bounding boxes grown by the margin: a robot outside one is neither near nor inside
        # its polygon, and most robots are far from every polygon most of the time.
        self._boxes = [(*(p.min(axis=0) - margin), *(p.max(axis=0) + margin))
                       for p in self.polygons]
        self._outward = (0.0, 0.0)
        self._inside = False

    def active(self, s: RobotState) -> bool:
        found = self._nearest_border(s.x, s.y)
        if found is None:
            return False
        self._outward, self._inside = found
        heading = (math.cos(s.yaw), math.sin(s.yaw))
        return self._inside or heading[0] * self._outward[0] + heading[1] * self._outward[1] > 0

    def act(self, s: RobotState) -> tuple[float, float]:
        ox, oy = self._outward
        if self._inside:  # leave by the nearest edge
            return steer(s.x, s.y, s.yaw, (s.x + ox, s.y + oy), self.drive, slow=False)
        error = wrap(math.atan2(-oy, -ox) - s.yaw)
        return wheel_speeds(0.0, self.drive.k_heading * error, self.drive)

    def _nearest_border(self, x: float, y: float):
        """(unit vector from the robot towards the nearest border within margin, inside a
        polygon?) or None when no border is that near."""
        best = None
        half = (self.floor.length / 2, self.floor.width / 2)
        for axis, value in ((0, x), (1, y)):
            gap = half[axis] - abs(value)
            if gap < self.margin and (best is None or gap < best[0]):
                normal = [0.0, 0.0]
                normal[axis] = math.copysign(1.0, value)
                best = (gap, tuple(normal), False)
        for poly, (x0, y0, x1, y1) in zip(self.polygons, self._boxes):
            if not (x0 <= x <= x1 and y0 <= y <= y1):
                continue
            gap, toward, inside = _polygon_gap(poly, x, y)
            if (inside or gap < self.margin) and (best is None or inside or gap < best[0]):
                best = (gap, toward, inside)
                if inside:
                    break
        return None if best is None else (best[1], best[2])


def _polygon_gap(poly: np.ndarray, x: float, y: float):
    """(distance to the polygon's outline m, unit vector towards the outline's nearest point
    from outside -- or towards the way out from inside --, point inside?)."""
    a, b = poly, np.roll(poly, -1, axis=0)
    e = b - a
    t = np.clip(((x - a[:, 0]) * e[:, 0] + (y - a[:, 1]) * e[:, 1])
                / np.maximum((e * e).sum(axis=1), 1e-300), 0, 1)
    near = a + t[:, None] * e
    d = np.hypot(near[:, 0] - x, near[:, 1] - y)
    k = int(np.argmin(d))
    crosses = (a[:, 1] > y) != (b[:, 1] > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_at = a[:, 0] + (y - a[:, 1]) * e[:, 0] / e[:, 1]
    inside = bool(np.count_nonzero(crosses & (x < x_at)) % 2)
    v = near[k] - (x, y)
    norm = float(np.hypot(*v)) or 1.0
    return float(d[k]), (float(v[0] / norm), float(v[1] / norm)), inside
