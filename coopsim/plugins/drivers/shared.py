"""``shared``: squads under shared control: a person steers, the robots keep formation and
avoid obstacles and walls, and the group's repulsion is served as a feedback force.

Every robot hosting it belongs to a squad of the scenario (``[SQUAD_n]``: its formation and
spacing); a robot in no squad is a squad of one. Its robots are quadrotors (``rotors``, ``imu``,
``mocap``) or ground robots (a ``velocity`` drive, else a ``motors`` differential drive), mixed
freely. Each step, per squad, the driver takes the person's latest velocity command from the
run's board (``extra["steer"]``, posted by ``/squads`` command 4; it holds ``hold`` s and then
the squad hovers or stops where it is: a dead man's handle), turns it into one velocity set
point per robot with :func:`coopsim.swarm.shared.group_velocity` (the formation's slots about
the squad's centroid, the altitude, the repulsion of the world's objects, the floor's edge
walls and every other robot) and drives it: a quadrotor with the ``flight`` driver's cascaded
controller (:mod:`coopsim.swarm.flight`, from the imu and mocap readings, commanding
``rotors``), a ``velocity`` drive with its planar part, a differential drive with
:func:`coopsim.swarm.shared.unicycle`'s wheel speeds. It posts each squad's feedback force
(:class:`coopsim.model.steering.Feedback`, N) on the board (``extra["feedback"]``), which
``/squads`` command 5, the ROS 2 bridge and the recorder (format 7) take. Batch capable. Units
m, s, N, world frame (z up).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ...model.driver import Driver
from ...model.errors import SimulationError
from ...model.steering import Feedback
from ...swarm import flight
from ...swarm.shared import SharedLaw, edge_walls, group_velocity, shapes_of, unicycle
from ..params import number
from .flight import Flight, _airframe, _kernels

if TYPE_CHECKING:
    from ...swarm.formations import Formation


#: The modules a robot needs to be flown by this driver.
FLYING = ("rotors", "imu", "mocap")
#: Ground drives it steers, first found wins: (module label, kind).
GROUND = (("velocity", "planar"), ("motors", "wheels"))


class SharedControl(Driver):
    """Fly squads steered by a person, in formation, around obstacles (see the module
    docstring)."""

    label = "shared"
    description = ("shared control: a person steers a squad's velocity over /squads; "
                   "formation, obstacle and wall avoidance, a feedback force (quadrotors: "
                   "rotors, imu, mocap; ground robots: velocity or motors); batch capable")
    batch = True
    params = (
        number("height", "altitude the squad takes off to and holds, m", 1.0, 0.1, 100.0, "m"),
        number("hold", "how long a steer command holds, s; then the squad hovers", 0.5, 0.01,
               60.0, "s"),
        number("v_max", "largest speed set point, m/s", 1.0, 0.05, 20.0, "m/s"),
        number("k_slot", "formation gain, 1/s", 1.0, 0.0, 20.0, "1/s"),
        number("k_obstacle", "obstacle repulsion gain, m^3/s", 0.05, 0.0, 10.0, "m^3/s"),
        number("influence", "clearance within which obstacles repel, m", 0.8, 0.05, 20.0, "m"),
        number("gain", "feedback force per m/s of repulsion, N s/m", 1.0, 0.0, 1000.0, "N s/m"),
        number("k_heading", "a differential drive's turn rate per rad of heading error, 1/s",
               3.0, 0.1, 50.0, "1/s"),
    )

    def __init__(self, params, rng) -> None:
        super().__init__(params, rng)
        # the flight driver's controller state (estimate, airframes) serves every robot here
        self._flight = Flight(Flight.values({"shape": "hover"}), rng)
        self._groups: dict[str, dict] = {}  # squad -> {rows, offsets, heading, z_ref}
        self._key = None  # (names, squads) the groups were made for
        self._shapes = None  # (the object specs, the floor, their obstacle rows + the walls)
        self._kinds = None  # _Kinds of the batch's robots
        self._last = None  # sim time of the last step, s (a batch with no quadrotor)
        self._mocap = None  # this step's mocap readings of the quadrotors
        # the slots' assignment (SciPy) here, as the run is built, not in its first step; and
        # not when the registry imports this module (every run would pay it)
        from ...swarm import formations

        self.shape, self.assign = formations.Formation, formations.assign

    def law(self, spacing: float) -> SharedLaw:
        """The group law's gains and sizes from the parameters and the squad's spacing."""
        p = self.p
        return SharedLaw(k_slot=p["k_slot"], k_obstacle=p["k_obstacle"],
                         influence=p["influence"], spacing=spacing, v_max=p["v_max"],
                         gain=p["gain"])

    def step_batch(self, bots) -> None:
        snap, names = bots.snapshot, tuple(bots.names)
        if self._kinds is None or self._kinds.names != names:
            self._kinds = _Kinds(bots)
        kinds = self._kinds
        p, vel, dt = self._state(bots, kinds)
        squads = snap.extra.get("squads", ())
        if self._key != (names, squads):
            self._groups = self._make_groups(names, squads, p)
            self._key = (names, squads)
        shapes = self._shapes_now(snap)
        everyone = _positions(snap)
        v_set = np.zeros_like(p)
        feedback = {}
        for squad, group in self._groups.items():
            v_set[group["rows"]], feedback[squad] = self._group(
                squad, group, snap, dt, (p, vel, kinds.ground), shapes, everyone, bots.rows)
        self._command(bots, kinds, p, v_set, dt)
        board = dict(snap.extra.get("feedback", {}))
        board.update(feedback)
        bots.post("feedback", MappingProxyType(board))

    def _state(self, bots, kinds) -> tuple[np.ndarray, np.ndarray, float]:
        """(positions (n, 3) m, velocities (n, 3) m/s, the time step s) of the batch's robots:
        a quadrotor's from its mocap and the cascade's estimate, a ground robot's from its
        pose and twist on the floor (z 0)."""
        snap, n = bots.snapshot, len(bots.names)
        p, vel = np.zeros((n, 3)), np.zeros((n, 3))
        ground = np.flatnonzero(kinds.ground)
        p[ground, :2] = snap.poses[bots.rows[ground], :2]
        vel[ground, :2] = snap.velocities[bots.rows[ground], :2]
        if not len(kinds.fly):
            dt = 0.0 if self._last is None else max(bots.time - self._last, 0.0)
            self._last = bots.time
            return p, vel, dt
        self._mocap = mocap = bots.read("mocap")[kinds.fly]
        dt = self._flight.advance(kinds.fly_names, bots.time, mocap,
                                  lambda n: _airframe(bots.robot(n).params("rotors")))
        p[kinds.fly] = mocap[:, :3]  # the law reads the mocap
        vel[kinds.fly] = self._flight._est.v
        return p, vel, dt

    def _command(self, bots, kinds, p, v_set, dt) -> None:
        """Each robot's command for its velocity set point: a quadrotor's propeller speeds
        through the flight cascade, a holonomic robot's ``velocity``, a differential drive's
        wheel speeds (:func:`coopsim.swarm.shared.unicycle`)."""
        if len(kinds.fly):
            ctl, fly = self._flight, kinds.fly
            ref = flight.hover(p[fly], ctl._origin[:, 3])
            ref[:, 3:6] = v_set[fly]  # track the set point's velocity from where each is
            values = np.zeros((len(fly), 9))
            values[:, 0] = 1.0
            values[:, 1:5] = self._speeds(self._mocap, bots.read("imu")[fly], ref, dt)
            bots.set_some("rotors", fly, values)
        if len(kinds.planar):
            values = np.zeros((len(kinds.planar), 6))  # vx, vy, yaw rate 0, no reference
            values[:, :2] = v_set[kinds.planar, :2]
            bots.set_some("velocity", kinds.planar, values)
        if len(kinds.wheels):
            w = kinds.wheels
            yaw = bots.snapshot.poses[bots.rows[w], 2]
            bots.set_some("motors", w, unicycle(v_set[w], yaw, self.p["k_heading"],
                                                kinds.axle, kinds.top))

    def _shapes_now(self, snap) -> np.ndarray:
        """The world's objects as obstacle rows, where they are now (the table is made once
        per set of objects; only the poses change from step to step)."""
        floor = snap.extra["map"].floor if snap.extra.get("map") is not None else None
        if self._shapes is None or self._shapes[0] is not snap.object_specs \
                or self._shapes[1] != floor:
            walls = edge_walls(floor.length, floor.width) if floor else np.zeros((0, 8))
            self._shapes = (snap.object_specs, floor, np.vstack(
                (shapes_of(snap.object_specs, snap.object_poses), walls)))
        table, m = self._shapes[2], len(snap.object_specs)
        if m:  # the objects move; the floor's edge walls after them stand still
            table[:m, 1:3] = snap.object_poses[:, :2]
            table[:m, 4] = snap.object_poses[:, 2]
        return table

    def _speeds(self, mocap, imu, ref, dt) -> np.ndarray:
        """(n, 4) propeller speeds, rad/s: the flight driver's cascade, compiled once its
        kernels have loaded (the same figures to rounding), else in numpy."""
        ctl = self._flight
        if _kernels().COMPILED:
            return ctl._compiled(mocap, imu, ref, dt)[:, :4]
        ctl._est = flight.estimate(ctl._est, mocap, imu[:, :3], dt)
        return flight.control(ctl._gains(), ctl._fleet, ctl._est, mocap[:, 3:7], imu[:, 3:6],
                              ref, dt)

    def _group(self, squad, group, snap, dt, state, shapes, everyone, rows) -> tuple:
        """(velocity set points (n, 3) m/s, Feedback) of one squad this step (``state``: the
        batch's positions, velocities and ground flags)."""
        p, vel, ground = state
        steer = snap.extra.get("steer", {}).get(squad)
        live = steer is not None and snap.time - steer.time <= self.p["hold"]
        v_person = steer.velocity if live else (0.0, 0.0, 0.0)
        yaw_rate = steer.yaw_rate if live else 0.0
        group["heading"] += yaw_rate * dt
        group["z_ref"] = max(0.1, group["z_ref"] + v_person[2] * dt)
        mine = group["rows"]
        others = np.delete(everyone, rows[mine], axis=0) if len(everyone) else everyone
        law = self.law(group["spacing"])
        low = ground[mine]  # a ground member holds the floor, not the squad's altitude
        z_ref = np.where(low, p[mine, 2], group["z_ref"]) if low.any() else group["z_ref"]
        v, obstacles, neighbours = group_velocity(p[mine], group["offsets"], group["heading"],
                                                  v_person, z_ref, shapes, others, law,
                                                  low if low.any() else None)
        force, obstacles, neighbours = (law.gain * (obstacles + neighbours),
                                        law.gain * obstacles, law.gain * neighbours)
        fb = Feedback(squad, snap.step, snap.time, steer.seq if live else 0, _t(force),
                      _t(obstacles), _t(neighbours), _t(p[mine].mean(axis=0)),
                      _t(vel[mine].mean(axis=0)), (*v_person, yaw_rate))
        return v, fb

    def _make_groups(self, names, squads, p) -> dict[str, dict]:
        """Each squad's members (rows of ``names``), their slots (assigned once, nearest
        first), heading 0 and the altitude to take off to."""
        row = {n: i for i, n in enumerate(names)}
        groups, seen, shape = {}, set(), self.shape
        for spec in squads:
            mine = [row[n] for n in spec.robots if n in row]
            if mine:
                groups[spec.name] = self._group_of(shape.of(spec), np.array(mine), p)
                seen.update(mine)
        for i, name in enumerate(names):
            if i not in seen:  # a squad of one: it hovers, avoiding, and reports its feedback
                groups[name] = self._group_of(shape("line", 0.6), np.array([i]), p)
        return groups

    def _group_of(self, formation: Formation, rows: np.ndarray, p: np.ndarray) -> dict:
        slots = formation.offsets(len(rows))
        slots = slots - slots.mean(axis=0)  # about the centroid, which the law keeps them on
        order = self.assign(p[rows, :2] - p[rows, :2].mean(axis=0), slots)
        return {"rows": rows, "offsets": slots[order], "heading": 0.0,
                "z_ref": float(self.p["height"]), "spacing": formation.spacing}


class _Kinds:
    """The batch's robots by how the driver commands them (indices into its names): ``fly``
    (quadrotors: rotors, imu, mocap), ``planar`` (a ``velocity`` drive), ``wheels`` (a
    ``motors`` differential drive, with its axle and top wheel speed, m, m/s); ``ground``
    flags the last two.

    Raises:
        SimulationError: naming the first robot that is none of them.
    """

    def __init__(self, bots) -> None:
        self.names = tuple(bots.names)
        kinds = [_kind(bots.robot(n).modules(), n) for n in self.names]
        pick = lambda k: np.array([i for i, x in enumerate(kinds) if x == k],  # noqa: E731
                                  dtype=np.int64)
        self.fly, self.planar, self.wheels = pick("fly"), pick("planar"), pick("wheels")
        self.fly_names = tuple(self.names[i] for i in self.fly)
        self.ground = np.array([k != "fly" for k in kinds], dtype=bool)
        self.axle = bots.axles()[self.wheels]
        self.top = np.array([bots.robot(self.names[i]).params("motors")["max_speed"]
                             for i in self.wheels], dtype=float)


def _kind(modules, name: str) -> str:
    """How the driver commands a robot with ``modules``: fly, planar or wheels."""
    if all(m in modules for m in FLYING):
        return "fly"
    for label, kind in GROUND:
        if label in modules:
            return kind
    missing = [m for m in FLYING if m not in modules]
    raise SimulationError(f"the shared driver steers quadrotors and ground robots: robot "
                          f"{name} has no {', '.join(missing)} module, nor velocity or motors "
                          "(docs/in-the-loop.md)")


def _positions(snap) -> np.ndarray:
    """(N, 3) every robot's position, m: its mocap reading where it has one, else its pose on
    the floor (z 0)."""
    pos = np.zeros((len(snap.robots), 3))
    pos[:, :2] = np.asarray(snap.poses)[:, :2]
    mocap = snap.readings.get("mocap")
    if mocap is not None and len(mocap):
        # NaN: a robot without a mocap module; all 0: one not yet measured
        has = np.isfinite(mocap[:, :3]).all(axis=1) & np.any(mocap[:, :3] != 0.0, axis=1)
        pos[has] = mocap[has, :3]
    return pos


def _t(v) -> tuple[float, float, float]:
    return (float(v[0]), float(v[1]), float(v[2]))
