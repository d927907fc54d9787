"""``shared``: quadrotor squads under shared control: a person steers, the robots keep formation
and avoid obstacles, and the group's repulsion is served as a feedback force.

Every quadrotor hosting it belongs to a squad of the scenario (``[SQUAD_n]``: its formation and
spacing); a quadrotor in no squad is a squad of one. Each step, per squad, the driver takes the
person's latest velocity command from the run's board (``extra["steer"]``, posted by ``/squads``
command 4; it holds ``hold`` s and then the squad hovers where it is: a dead man's handle),
turns it into one velocity set point per robot with :func:`coopsim.swarm.shared.group_velocity`
(the formation's slots about the squad's centroid, the altitude, the obstacles' and neighbours'
repulsion on the world's objects and every other robot) and flies it with the ``flight``
driver's cascaded controller (:mod:`coopsim.swarm.flight`, from the imu and mocap readings,
commanding ``rotors``). It posts each squad's feedback force (:class:`coopsim.model.steering.
Feedback`, N) on the board (``extra["feedback"]``), which ``/squads`` command 5 and the ROS 2
bridge serve. Batch capable. Units m, s, N, world frame (z up).
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ...model.driver import Driver
from ...model.errors import SimulationError
from ...model.steering import Feedback
from ...swarm import flight
from ...swarm.formations import Formation, assign
from ...swarm.shared import SharedLaw, group_velocity, shapes_of
from ..params import number
from .flight import Flight, _airframe, _kernels


#: The modules a robot needs to be flown by this driver.
FLYING = ("rotors", "imu", "mocap")


class SharedControl(Driver):
    """Fly squads steered by a person, in formation, around obstacles (see the module
    docstring)."""

    label = "shared"
    description = ("shared control: a person steers a quadrotor squad's velocity over /squads; "
                   "formation, obstacle avoidance, a feedback force (needs rotors, imu, mocap); "
                   "batch capable")
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
    )

    def __init__(self, params, rng) -> None:
        super().__init__(params, rng)
        # the flight driver's controller state (estimate, airframes) serves every robot here
        self._flight = Flight(Flight.values({"shape": "hover"}), rng)
        self._groups: dict[str, dict] = {}  # squad -> {rows, offsets, heading, z_ref}
        self._key = None  # (names, squads) the groups were made for
        self._shapes = None  # (the object specs, their obstacle rows)

    def law(self, spacing: float) -> SharedLaw:
        """The group law's gains and sizes from the parameters and the squad's spacing."""
        p = self.p
        return SharedLaw(k_slot=p["k_slot"], k_obstacle=p["k_obstacle"],
                         influence=p["influence"], spacing=spacing, v_max=p["v_max"],
                         gain=p["gain"])

    def step_batch(self, bots) -> None:
        if tuple(bots.names) != self._flight._names:
            _check_flyers(bots)
        imu, mocap = bots.read("imu"), bots.read("mocap")
        ctl, snap = self._flight, bots.snapshot
        names = tuple(bots.names)
        dt = ctl.advance(names, bots.time, mocap,
                         lambda n: _airframe(bots.robot(n).params("rotors")))
        p = np.ascontiguousarray(mocap[:, :3], dtype=float)  # the law reads the mocap
        squads = snap.extra.get("squads", ())
        if self._key != (names, squads):
            self._groups = self._make_groups(names, squads, p)
            self._key = (names, squads)
        shapes = self._shapes_now(snap)
        everyone = _positions(snap)
        v_set = np.zeros_like(p)
        feedback = {}
        for squad, group in self._groups.items():
            v_set[group["rows"]], feedback[squad] = self._group(squad, group, snap, dt, p,
                                                                shapes, everyone, bots.rows)
        ref = flight.hover(p, ctl._origin[:, 3])
        ref[:, 3:6] = v_set  # track the set point's velocity from where each robot is
        values = np.zeros((len(names), 9))
        values[:, 0], values[:, 1:5] = 1.0, self._speeds(mocap, imu, ref, dt)
        bots.set("rotors", values)
        board = dict(snap.extra.get("feedback", {}))
        board.update(feedback)
        bots.post("feedback", MappingProxyType(board))

    def _shapes_now(self, snap) -> np.ndarray:
        """The world's objects as obstacle rows, where they are now (the table is made once
        per set of objects; only the poses change from step to step)."""
        if self._shapes is None or self._shapes[0] is not snap.object_specs:
            self._shapes = (snap.object_specs, shapes_of(snap.object_specs, snap.object_poses))
        table = self._shapes[1]
        if len(table):
            table[:, 1:3] = snap.object_poses[:, :2]
            table[:, 4] = snap.object_poses[:, 2]
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

    def _group(self, squad, group, snap, dt, p, shapes, everyone, rows) -> tuple:
        """(velocity set points (n, 3) m/s, Feedback) of one squad this step."""
        steer = snap.extra.get("steer", {}).get(squad)
        live = steer is not None and snap.time - steer.time <= self.p["hold"]
        v_person = steer.velocity if live else (0.0, 0.0, 0.0)
        group["heading"] += (steer.yaw_rate if live else 0.0) * dt
        group["z_ref"] = max(0.1, group["z_ref"] + v_person[2] * dt)
        mine = group["rows"]
        others = np.delete(everyone, rows[mine], axis=0) if len(everyone) else everyone
        law = self.law(group["spacing"])
        v, obstacles, neighbours = group_velocity(p[mine], group["offsets"], group["heading"],
                                                  v_person, group["z_ref"], shapes, others, law)
        force, obstacles, neighbours = (law.gain * (obstacles + neighbours),
                                        law.gain * obstacles, law.gain * neighbours)
        fb = Feedback(squad, snap.step, snap.time, steer.seq if live else 0, _t(force),
                      _t(obstacles), _t(neighbours), _t(p[mine].mean(axis=0)),
                      _t(self._flight._est.v[mine].mean(axis=0)))
        return v, fb

    def _make_groups(self, names, squads, p) -> dict[str, dict]:
        """Each squad's members (rows of ``names``), their slots (assigned once, nearest
        first), heading 0 and the altitude to take off to."""
        row = {n: i for i, n in enumerate(names)}
        groups, seen = {}, set()
        for spec in squads:
            mine = [row[n] for n in spec.robots if n in row]
            if mine:
                groups[spec.name] = self._group_of(Formation.of(spec), np.array(mine), p)
                seen.update(mine)
        for i, name in enumerate(names):
            if i not in seen:  # a squad of one: it hovers, avoiding, and reports its feedback
                groups[name] = self._group_of(Formation("line", 0.6), np.array([i]), p)
        return groups

    def _group_of(self, formation: Formation, rows: np.ndarray, p: np.ndarray) -> dict:
        slots = formation.offsets(len(rows))
        slots = slots - slots.mean(axis=0)  # about the centroid, which the law keeps them on
        order = assign(p[rows, :2] - p[rows, :2].mean(axis=0), slots)
        return {"rows": rows, "offsets": slots[order], "heading": 0.0,
                "z_ref": float(self.p["height"]), "spacing": formation.spacing}


def _check_flyers(bots) -> None:
    """Raise SimulationError naming the first robot that is no quadrotor this driver can fly."""
    for name in bots.names:
        missing = [m for m in FLYING if m not in bots.robot(name).modules()]
        if missing:
            raise SimulationError(f"the shared driver flies quadrotors: robot {name} has no "
                                  f"{', '.join(missing)} module (docs/in-the-loop.md)")


def _positions(snap) -> np.ndarray:
    """(N, 3) every robot's position, m: its mocap reading where it has one, else its pose on
    the floor (z 0)."""
    pos = np.zeros((len(snap.robots), 3))
    pos[:, :2] = np.asarray(snap.poses)[:, :2]
    mocap = snap.readings.get("mocap")
    if mocap is not None and len(mocap):
        has = np.any(mocap[:, :3] != 0.0, axis=1)
        pos[has] = mocap[has, :3]
    return pos


def _t(v) -> tuple[float, float, float]:
    return (float(v[0]), float(v[1]), float(v[2]))
