"""``land_on``: a quadrotor follows a moving ground robot and lands on top of it.

Air and ground together (SwarmSimX's cooperative aerial-ground scenes): the flyer climbs to
``altitude`` m above the carrier's deck, follows it (its reference is the carrier's position,
read from the carrier's ``gps``, with the carrier's velocity as feed-forward), and once it has
held within ``ready`` m of the carrier's axis for ``settle`` s it descends at ``descent`` m/s
onto the deck; ``cut`` m above the deck it stops the propellers and rests on it (the engine's
contacts and friction carry it along: the ``mujoco`` engine).

The outer position loop is the cascaded controller's (a PD on position and velocity with
feed-forward, the velocity estimated from ``mocap`` by a filtered difference); it commands
collective thrust, roll and pitch (rad) and a yaw rate through the ``rotors`` module's
``set_thrust_attitude``, whose own attitude and rate loops turn them into propeller speeds.
Needs ``mocap`` and ``rotors`` on the flyer and ``gps`` on the carrier. Frames: world, z up;
roll and pitch as ZYX Euler angles of the body (rad). Phases in order: ``climb``,
``follow``, ``descend``, ``landed``.
"""

from __future__ import annotations

import math

from ...model.driver import Driver
from ...model.params import ParamSpec
from ..params import number

G = 9.81  # m/s^2
TILT = 0.5  # rad, the largest roll or pitch the loop asks for


class LandOn(Driver):
    """Follow the ground robot ``carrier`` at ``altitude`` m, then land on its deck."""

    label = "land_on"
    description = ("follow a ground robot and land on top of it (needs mocap, rotors; the "
                   "carrier gps)")
    params = (
        ParamSpec("carrier", "str", "network name of the ground robot to land on", "rover"),
        number("deck", "height of the carrier's top above the floor, m", 0.2, 0.0, 10.0, "m"),
        number("altitude", "height above the deck while following, m", 0.6, 0.1, 20.0, "m"),
        number("ready", "horizontal distance to the carrier's axis to start the descent, m",
               0.08, 0.005, 5.0, "m"),
        number("settle", "how long it must stay that close before descending, s", 1.0, 0.0,
               60.0, "s"),
        number("descent", "descent speed, m/s", 0.25, 0.01, 5.0, "m/s"),
        number("cut", "height above the deck at which the propellers stop, m", 0.06, 0.0,
               1.0, "m"),
        number("kp", "position gain, 1/s^2", 6.0, 0.0, 1000.0, "1/s^2"),
        number("kd", "velocity gain, 1/s", 4.0, 0.0, 1000.0, "1/s"),
    )

    def setup(self, bot) -> None:
        self.carrier = bot.peer(self.p["carrier"])
        self.mass = float(bot.params("rotors")["mass"])  # kg: hover thrust is mass * G
        self.phase, self.since, self.last = "climb", bot.time, None
        self.v = [0.0, 0.0, 0.0]
        self.rover_last, self.rover_v = None, (0.0, 0.0)
        self.z_ref, self.dt = None, 0.0

    def step(self, bot) -> None:
        x, y, z, qw, qx, qy, qz = bot.mocap.read()[:7]
        self._estimate(bot.time, (x, y, z))
        rx, ry = self._rover(bot.time)
        deck = self.p["deck"]
        across = math.hypot(rx - x, ry - y)
        self._advance(bot.time, across, z - deck)
        if self.phase == "landed":
            bot.rotors.set_thrust_attitude(0.0, 0.0, 0.0, 0.0)
            return
        if self.phase == "descend":
            self.z_ref = max(deck, self.z_ref - self.p["descent"] * self.dt)
        else:
            self.z_ref = deck + self.p["altitude"]
        yaw = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
        ref = (rx, ry, self.z_ref)
        vref = (*self.rover_v, -self.p["descent"] if self.phase == "descend" else 0.0)
        bot.rotors.set_thrust_attitude(*self._attitude((x, y, z), ref, vref, yaw))

    def _advance(self, t: float, across: float, height: float) -> None:
        """Move through the phases: climb -> follow -> descend -> landed."""
        if self.phase == "climb" and height >= self.p["altitude"] - 0.1:
            self.phase, self.since = "follow", t
        elif self.phase == "follow":
            if across > self.p["ready"]:
                self.since = t
            elif t - self.since >= self.p["settle"]:
                self.phase = "descend"
        elif self.phase == "descend" and height <= self.p["cut"]:
            self.phase = "landed"

    def _estimate(self, t: float, p: tuple) -> None:
        """Filtered finite-difference velocity of the flyer from mocap, m/s (world)."""
        if self.last is not None and t > self.last[0]:
            dt = t - self.last[0]
            self.v = [0.7 * v + 0.3 * (a - b) / dt for v, a, b in zip(self.v, p, self.last[1])]
            self.dt = dt
        self.last = (t, p)

    def _rover(self, t: float) -> tuple[float, float]:
        """The carrier's (x, y), m, and its filtered velocity into ``rover_v``, m/s."""
        rx, ry = self.carrier.gps.read()[:2]
        if self.rover_last is not None and t > self.rover_last[0]:
            dt = t - self.rover_last[0]
            vx, vy = (rx - self.rover_last[1]) / dt, (ry - self.rover_last[2]) / dt
            self.rover_v = (0.9 * self.rover_v[0] + 0.1 * vx, 0.9 * self.rover_v[1] + 0.1 * vy)
        self.rover_last = (t, rx, ry)
        return rx, ry

    def _attitude(self, p, ref, vref, yaw: float) -> tuple[float, float, float, float]:
        """(thrust N, roll rad, pitch rad, yaw rate rad/s) from the PD position loop."""
        kp, kd = self.p["kp"], self.p["kd"]
        a = [kp * (r - q) + kd * (w - v) for r, q, w, v in zip(ref, p, vref, self.v)]
        fz = max(0.2 * G, a[2] + G)
        c, s = math.cos(yaw), math.sin(yaw)
        pitch = max(-TILT, min(TILT, math.atan2(a[0] * c + a[1] * s, fz)))
        roll = max(-TILT, min(TILT, math.atan2(a[0] * s - a[1] * c, fz)))
        thrust = self.mass * fz / (math.cos(roll) * math.cos(pitch))
        return thrust, roll, pitch, 0.0
