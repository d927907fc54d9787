"""Shared control of a squad: the person's velocity command and the feedback force, as data.

A person steers a squad (``[SQUAD_n]``) whose robots host the ``shared`` driver by sending its
velocity to ``/squads`` (command 4, ``steer``); the driver keeps the formation and avoids
obstacles (:mod:`coopsim.swarm.shared`) and posts, every step, the squad's **feedback**: the
repulsion on the group as a force (N), read with ``/squads`` command 5 (``feedback``) and
published on ROS 2 (docs/in-the-loop.md). Both travel through the run's board
(``Snapshot.extra``): ``steer`` (squad -> :class:`Steer`) and ``feedback`` (squad ->
:class:`Feedback`). Pure data, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .commands import OUT_OF_RANGE
from .errors import ProtocolError

#: Largest speed (m/s) and yaw rate (rad/s) a steer command may ask for.
MAX_SPEED = 50.0
MAX_YAW_RATE = 10.0
#: The feedback reading's data, in order (units: s, N, N, N, m, m/s).
FEEDBACK_FIELDS = ("time", "fx", "fy", "fz", "obstacle_x", "obstacle_y", "obstacle_z",
                   "neighbour_x", "neighbour_y", "neighbour_z", "centre_x", "centre_y",
                   "centre_z", "vx", "vy", "vz")
#: A recorded feedback's row (recording format 7, a block's ``F``; docs/recording-format.md):
#: the step and steer seq, the steer flown (m/s, rad/s), then :data:`FEEDBACK_FIELDS`.
RECORD_FIELDS = ("step", "seq", "steer_vx", "steer_vy", "steer_vz", "steer_yaw_rate",
                 *FEEDBACK_FIELDS)


@dataclass(frozen=True)
class Steer:
    """A person's velocity command to a squad.

    Attributes:
        squad: Squad name. seq: Its sequence number on ``/squads`` (1, 2, ...).
        velocity: (vx, vy, vz) m/s, world frame. yaw_rate: Turn of the formation, rad/s.
        time: Sim time it was posted at, s (it holds for the driver's ``hold`` s after).
    """

    squad: str
    seq: int
    velocity: tuple[float, float, float]
    yaw_rate: float = 0.0
    time: float = 0.0

    @classmethod
    def parse(cls, squad: str, data, seq: int = 0, time: float = 0.0) -> "Steer":
        """The command of ``/squads`` steer's data ``[vx, vy, vz, yaw_rate]`` (at least vx, vy;
        the rest 0).

        Raises:
            ProtocolError: 4 for a speed or yaw rate beyond the limits (or not finite).
        """
        v = [float(d) for d in data] + [0.0] * (4 - len(data))
        if not all(math.isfinite(x) for x in v):
            raise ProtocolError(OUT_OF_RANGE, "steer: velocity must be finite numbers")
        if math.hypot(*v[:3]) > MAX_SPEED or abs(v[3]) > MAX_YAW_RATE:
            raise ProtocolError(OUT_OF_RANGE, f"steer: speed must be at most {MAX_SPEED:g} m/s "
                                              f"and yaw rate at most {MAX_YAW_RATE:g} rad/s, got "
                                              f"{math.hypot(*v[:3]):g} m/s, {v[3]:g} rad/s")
        return cls(squad, seq, (v[0], v[1], v[2]), v[3], time)


@dataclass(frozen=True)
class Feedback:
    """One step's feedback of a squad under shared control.

    Attributes:
        squad: Squad name. step, time: The step it was computed at, and its sim time, s.
        seq: Sequence number of the steer command in force (0: none, or it ran out).
        force: (fx, fy, fz), N, world frame: ``obstacles + neighbours``.
        obstacles, neighbours: The two parts of the force, N (the members' mutual pushes cancel
            in pairs: ``neighbours`` is the push of robots outside the squad).
        centre: The squad's centroid, m. velocity: Its mean velocity, m/s.
        steer: (vx, vy, vz, yaw_rate) the person's command the squad flew this step, m/s and
            rad/s (zeros when none was in force); recorded, not on the wire.
    """

    squad: str
    step: int
    time: float
    seq: int
    force: tuple[float, float, float]
    obstacles: tuple[float, float, float]
    neighbours: tuple[float, float, float]
    centre: tuple[float, float, float]
    velocity: tuple[float, float, float]
    steer: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)

    @property
    def data(self) -> tuple[float, ...]:
        """The wire's data (:data:`FEEDBACK_FIELDS`)."""
        return (self.time, *self.force, *self.obstacles, *self.neighbours, *self.centre,
                *self.velocity)

    @classmethod
    def of_wire(cls, squad: str, params, data) -> "Feedback":
        """The reading out of a ``feedback`` reply (params ``[step, seq]``, data as
        :attr:`data`)."""
        d = [float(x) for x in data]
        return cls(squad, int(params[0]), d[0], int(params[1]), tuple(d[1:4]), tuple(d[4:7]),
                   tuple(d[7:10]), tuple(d[10:13]), tuple(d[13:16]))

    @property
    def row(self) -> list[float]:
        """The recorded row (:data:`RECORD_FIELDS`, msgpack-ready floats)."""
        return [float(self.step), float(self.seq), *map(float, self.steer), *self.data]

    @classmethod
    def of_row(cls, squad: str, row) -> "Feedback":
        """The reading out of a recorded row (:attr:`row`).

        Raises:
            ValueError: not :data:`RECORD_FIELDS`' count of numbers.
        """
        d = [float(x) for x in row]
        if len(d) != len(RECORD_FIELDS):
            raise ValueError(f"a feedback row has {len(RECORD_FIELDS)} numbers, not {len(d)}")
        fb = cls.of_wire(squad, (d[0], d[1]), d[6:])
        return replace(fb, steer=tuple(d[2:6]))

    def steer_command(self) -> "Steer":
        """The steer this step flew, as a :class:`Steer` (stamped at the feedback's time)."""
        return Steer(self.squad, self.seq, tuple(self.steer[:3]), self.steer[3], self.time)
