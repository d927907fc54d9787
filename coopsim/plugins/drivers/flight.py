"""``flight``: the cascaded flight controller (coopsim.swarm.flight) flying quadrotors through a
hover or a figure-eight, from their ``imu`` and ``mocap`` readings, commanding ``rotors``.

Each call the driver estimates every quadrotor's position and velocity (an alpha-beta filter on
the mocap position driven by the accelerometer; the attitude is the mocap's, the body rates the
gyroscope's: never the engine's truth), runs the cascade (position -> thrust vector -> roll,
pitch, yaw-rate set points -> body rates -> mixer) and sends the four propeller speeds with
``set_rotors``, the reference position riding along so that a recording holds it (``coopsim
analyze tracking``). The reference, from where the robot is when the driver first runs:

* the *centre* is its start x, y at ``height`` m (a take-off from the floor);
* ``shape hover``: hold the centre, at the start heading;
* ``shape eight``: hold the centre for ``takeoff`` s (counted from the first reading, or from
  sim time ``start`` when given: a network controller connects at an unknown time, a study
  wants its eight at a known one), then fly a lemniscate of Gerono through
  it, ``size`` m from the centre to each end along x and ``size``/2 across, one lap every
  ``period`` s, in the x-y plane (``plane horizontal``) or the x-z plane (``plane vertical``),
  while the heading turns at ``yaw_rate`` rad/s (SwarmSimX's quadrotors flew their eights at a
  constant yaw rate).

``fixed_point 1`` runs the attitude and rate loops as a 16-bit Q-format controller would
(coopsim.swarm.flight). Batch capable (all robots hosting it in a few numpy calls); over the
network one robot per process (clients/python/flight.py).
"""

from __future__ import annotations

import numpy as np

from ...model.driver import Driver
from ...model.params import ParamSpec
from ...swarm import flight
from ..params import number

AIRFRAME = ("mass", "arm", "kf", "km", "max_speed", "ixx", "iyy", "izz")


class Flight(Driver):
    """Fly a hover or a figure-eight with the cascaded controller (needs rotors, imu, mocap)."""

    label = "flight"
    description = ("cascaded quadrotor controller: hover or figure-eight from imu and mocap, "
                   "commanding rotors; batch capable")
    batch = True
    params = (
        ParamSpec("shape", "str", "hover or eight", "eight", choices=("hover", "eight")),
        ParamSpec("plane", "str", "the eight's plane: horizontal (x-y) or vertical (x-z)",
                  "horizontal", choices=flight.PLANES),
        number("height", "height of the hover point and the eight's centre, m", 1.0, 0.05, 100.0,
               "m"),
        number("size", "the eight's half length along x, m", 1.0, 0.01, 100.0, "m"),
        number("period", "time of one lap of the eight, s", 10.0, 0.5, 1e5, "s"),
        number("yaw_rate", "constant yaw rate while flying the eight, rad/s", 0.0, -10.0, 10.0,
               "rad/s"),
        number("takeoff", "time spent climbing to and holding the centre before the eight, s",
               3.0, 0.0, 1e5, "s"),
        number("start", "sim time the take-off hold begins, s; -1: the time of the first "
               "reading", -1.0, -1.0, 1e6, "s"),
        number("pos_gain", "position P gain, 1/s", 2.0, 0.0, 100.0, "1/s"),
        number("vel_gain", "velocity P gain, 1/s", 5.0, 0.0, 100.0, "1/s"),
        number("att_gain", "roll and pitch P gain, 1/s", 12.0, 0.0, 1000.0, "1/s"),
        number("rate_gain", "body-rate P gain (roll, pitch), 1/s", 60.0, 0.0, 10000.0, "1/s"),
        ParamSpec("fixed_point", "bool", "run the attitude and rate loops in 16-bit fixed point",
                  False),
    )

    def __init__(self, params, rng) -> None:
        super().__init__(params, rng)
        self._names: tuple = ()
        self._frames: list = []
        self._fleet = flight.Fleet.of([])  # the same airframes as arrays, for the cascade
        self._est = flight.Estimate.empty(0)
        self._origin = np.zeros((0, 5))  # centre x, y, z (m), start yaw (rad), start time (s)
        self._last = None
        self._out = None  # the last command, repeated while no step passed
        self._dt = None  # the run's step, s, over the network (None in-process)
        self._fleet_array = None  # the fleet and gains as the compiled cascade takes them
        self._gain_array = None
        self._hover = None  # (the origins it was made of, the hover reference)
        self._block = None  # step_batch's (n, 9) rotors commands, written in place

    def _gains(self) -> flight.Gains:
        p = self.p
        return flight.Gains(pos=p["pos_gain"], vel=p["vel_gain"], att=p["att_gain"],
                            rate=p["rate_gain"], rate_yaw=p["rate_gain"] / 4,
                            fixed_point=bool(p["fixed_point"]))

    # -- the shared core ------------------------------------------------------------------------

    def command(self, names, time: float, imu: np.ndarray, mocap: np.ndarray,
                airframe, compiled: bool = False) -> np.ndarray:
        """(n, 7) propeller speeds (rad/s) and reference x, y, z (m) for robots ``names``.

        Args:
            time: Sim time of the readings, s. imu: (n, 6) readings. mocap: (n, 7) readings.
            airframe: name -> the ``rotors`` parameters (a dict), asked for new robots only.
            compiled: Run the estimate and the cascade as one compiled call
                (:func:`coopsim.swarm.flight_kernels.cascade`, in-process only: a controller
                process never imports numba) unless the loops are fixed point.
        """
        names = tuple(names)
        if names != self._names:
            self._remap(names, time, mocap, airframe)
            self._out = None
        elif self._out is not None and time <= self._last:
            # no step since the last call (a network controller polling faster than the run
            # steps reads the same time again): nothing new to act on, the same command
            return self._out
        dt = 0.0 if self._last is None else max(time - self._last, 0.0)
        self._last = time
        ref = self.reference(time)
        if compiled and not self.p["fixed_point"] and _kernels().COMPILED:
            return self._compiled(mocap, imu, ref, dt)
        self._est = flight.estimate(self._est, mocap, imu[:, :3], dt)
        speeds = flight.control(self._gains(), self._fleet, self._est, mocap[:, 3:7],
                                imu[:, 3:6], ref, dt)
        self._out = np.column_stack((speeds, ref[:, :3]))
        return self._out

    def _compiled(self, mocap, imu, ref, dt) -> np.ndarray:
        """:meth:`command`'s estimate and cascade in one compiled call (the same figures to
        rounding); the estimate is updated in place. The (n, 7) result is columns 1..7 of
        :meth:`step_batch`'s rotors block (its ``on`` and ``mode`` columns set once)."""
        k = _kernels()
        n = len(mocap)
        if self._fleet_array is None or len(self._fleet_array) != n:
            self._fleet_array = k.fleet_array(self._fleet)
            self._gain_array = k.gains_array(self._gains())
        if self._block is None or len(self._block) != n:
            self._block = np.zeros((n, 9))
            self._block[:, 0] = self._block[:, 8] = 1.0
        out = self._block[:, 1:8]
        est = self._est
        k.cascade(self._gain_array, self._fleet_array, est.p, est.v, est.integral, est.ready,
                  np.ascontiguousarray(mocap, dtype=float), np.ascontiguousarray(imu, dtype=float),
                  ref, float(dt), out[:, :4])
        out[:, 4:] = ref[:, :3]
        self._out = out
        return out

    def reference(self, time: float) -> np.ndarray:
        """(n, 11) every robot's reference at ``time`` (coopsim.swarm.flight.control); a
        hover's is the same array until the robots change (not to be written)."""
        o = self._origin
        if self.p["shape"] == "hover":
            if self._hover is None or self._hover[0] is not o:
                self._hover = (o, flight.hover(o[:, :3], o[:, 3]))
            return self._hover[1]
        return flight.eight(time - o[:, 4] - self.p["takeoff"], o[:, :3], self.p["size"],
                            self.p["period"], self.p["plane"], o[:, 3], self.p["yaw_rate"])

    def advance(self, names, time: float, mocap: np.ndarray, airframe) -> float:
        """Follow robots ``names`` now (new ones start where they are, :meth:`_remap`) and
        return the sim time since the last call, s (0 at the first): what a driver flying its
        own set points through this cascade does first each step (``sphere_formation``,
        ``shared``)."""
        names = tuple(names)
        if names != self._names:
            self._remap(names, time, mocap, airframe)
        dt = 0.0 if self._last is None else max(time - self._last, 0.0)
        self._last = time
        return dt

    def _remap(self, names, time, mocap, airframe) -> None:
        """Keep the state of robots still here; start the new ones where they are."""
        old = {n: i for i, n in enumerate(self._names)}
        keep = np.array([old.get(n, -1) for n in names], dtype=np.int64)
        est, origin = flight.Estimate.empty(len(names)), np.zeros((len(names), 5))
        frames = []
        for i, name in enumerate(names):
            j = keep[i]
            if j >= 0:
                est.p[i], est.v[i] = self._est.p[j], self._est.v[j]
                est.integral[i], est.ready[i] = self._est.integral[j], self._est.ready[j]
                origin[i], frame = self._origin[j], self._frames[j]
            else:
                yaw = flight.euler(mocap[i:i + 1, 3:7])[0, 2]
                begin = time if self.p["start"] < 0 else self.p["start"]
                origin[i] = (mocap[i, 0], mocap[i, 1], self.p["height"], yaw, begin)
                a = airframe(name)
                frame = flight.Airframe(a["mass"], a["arm"], a["kf"], a["km"], a["max_speed"],
                                        (a["ixx"], a["iyy"], a["izz"]))
            frames.append(frame)
        self._names, self._frames, self._est, self._origin = names, frames, est, origin
        self._fleet = flight.Fleet.of(frames)
        self._fleet_array = None

    # -- one robot (over the network or in-process) ---------------------------------------------

    def setup(self, bot) -> None:
        client = getattr(bot, "client", None)  # a network robot; in-process there is none
        if client is not None:
            self._dt = float(client.sim().status()["dt"])

    def step(self, bot) -> None:
        reading = bot.mocap.read()
        mocap = np.array([reading[:7]], dtype=float)
        imu = np.array([bot.imu.read()[:6]], dtype=float)
        # the readings' own time: over the network ``bot.time`` is the latest motion reply's, a
        # step or more behind them (0 before the first, which put the take-off at sim time 0
        # however late the controller connected)
        time = bot.time if self._dt is None else reading.step * self._dt
        out = self.command(("self",), time, imu, mocap,
                           lambda _name: _airframe(bot.params("rotors")))
        bot.rotors.set_rotors(*(float(v) for v in out[0]))

    # -- every robot hosting it, with arrays --------------------------------------------------

    def step_batch(self, bots) -> None:
        out = self.command(bots.names, bots.time, bots.read("imu"), bots.read("mocap"),
                           lambda name: _airframe(bots.robot(name).params("rotors")),
                           compiled=True)
        block = self._block
        if block is None or out.base is not block:  # the loops in fixed point: numpy's
            block = np.zeros((len(out), 9))
            block[:, 0], block[:, 1:8], block[:, 8] = 1.0, out, 1.0
        bots.set("rotors", block)


_KERNELS: list = []


def _kernels():
    """coopsim.swarm.flight_kernels, imported on first use (it imports numba)."""
    if not _KERNELS:
        from ...swarm import flight_kernels

        _KERNELS.append(flight_kernels)
    return _KERNELS[0]


def _airframe(params) -> dict:
    """The airframe's numbers out of a robot's ``rotors`` parameters."""
    return {k: float(params[k]) for k in AIRFRAME}
