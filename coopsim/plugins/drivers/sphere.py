"""``sphere_formation``: quadrotors in formation on a sphere's surface, SwarmSimX's real-time study.

Every quadrotor hosting it runs, each step, what SwarmSimX's did (its Fig. 5): a range sensor
that gives the relative positions of the robots within ``sense`` m
(:func:`coopsim.swarm.potentials.neighbours`, on the mocap positions), formation control with
obstacle avoidance by artificial potentials (:func:`coopsim.swarm.potentials.sphere_velocity`:
a radial spring onto the sphere of ``radius`` m centred ``height`` m above the floor's centre,
a spacing spring of ``spacing`` m between neighbours, a repulsion from a spherical obstacle
of ``obstacle`` m radius at the sphere's centre), and its own cascaded flight controller
(:mod:`coopsim.swarm.flight`, the ``flight`` driver's) tracking the potentials' velocity set
point from its imu and mocap readings, commanding its four propellers (``set_rotors``).
Batch capable: all robots hosting it in a few numpy calls. Units m, s, world frame.
"""

from __future__ import annotations

import numpy as np

from ...model.driver import Driver
from ...swarm import flight
from ...swarm.potentials import SphereLaw, neighbours, sphere_velocity
from ..params import number
from .flight import Flight


class SphereFormation(Driver):
    """Keep a formation on a sphere's surface, avoiding each other and an obstacle."""

    label = "sphere_formation"
    description = ("quadrotor formation on a sphere by artificial potentials, each with its "
                   "cascaded controller (needs rotors, imu, mocap); batch capable")
    batch = True
    params = (
        number("radius", "the sphere's radius, m", 2.0, 0.2, 1000.0, "m"),
        number("height", "height of the sphere's centre above the floor, m", 3.0, 0.2, 1000.0,
               "m"),
        number("spacing", "distance kept between neighbours, m", 1.0, 0.05, 100.0, "m"),
        number("sense", "range of the neighbour sensor, m", 1.5, 0.05, 1000.0, "m"),
        number("obstacle", "radius of the obstacle at the sphere's centre, m (0: none)", 0.5,
               0.0, 1000.0, "m"),
        number("v_max", "largest speed set point, m/s", 1.0, 0.01, 50.0, "m/s"),
    )

    def __init__(self, params, rng) -> None:
        super().__init__(params, rng)
        # the flight driver's controller state (estimate, airframes) serves every robot here
        self._flight = Flight(Flight.values({"shape": "hover"}), rng)

    def law(self) -> SphereLaw:
        """The potentials' sizes and gains from the parameters."""
        p = self.p
        return SphereLaw(centre=(0.0, 0.0, p["height"]), radius=p["radius"],
                         spacing=p["spacing"], sense=p["sense"], v_max=p["v_max"])

    def step_batch(self, bots) -> None:
        imu, mocap = bots.read("imu"), bots.read("mocap")
        ctl = self._flight
        names = tuple(bots.names)
        dt = ctl.advance(names, bots.time, mocap,
                         lambda n: _airframe(bots.robot(n).params("rotors")))
        ctl._est = flight.estimate(ctl._est, mocap, imu[:, :3], dt)
        law = self.law()
        p = mocap[:, :3]
        obstacles = (np.array([[*law.centre, self.p["obstacle"]]]) if self.p["obstacle"] > 0
                     else None)
        v_set = sphere_velocity(p, ctl._est.v, law, obstacles, neighbours(p, law.sense))
        ref = flight.hover(ctl._est.p, ctl._origin[:, 3])
        ref[:, 3:6] = v_set  # track the set point's velocity from where each robot is
        speeds = flight.control(ctl._gains(), ctl._fleet, ctl._est, mocap[:, 3:7],
                                imu[:, 3:6], ref, dt)
        values = np.zeros((len(names), 9))
        values[:, 0], values[:, 1:5] = 1.0, speeds
        bots.set("rotors", values)


def _airframe(params) -> dict:
    """The airframe's numbers out of a robot's ``rotors`` parameters."""
    from .flight import AIRFRAME

    return {k: float(params[k]) for k in AIRFRAME}
