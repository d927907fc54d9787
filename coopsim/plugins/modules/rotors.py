"""``rotors``: a quadrotor's four propellers in an X frame, commanded by speed, by thrust and body
rates, or by thrust and attitude.

Each step the wanted propeller speeds ``w_c`` (rad/s) are reached through the motors' first-order
lag of time constant ``tau``,

    w' = w + (1 - exp(-dt / tau)) (w_c - w),    capped to [0, max_speed],

and the speeds give each rotor's thrust ``kf w^2`` (N, along the body's z axis) and drag torque
``km w^2`` (N m about z, against the propeller's turn). The body force (0, 0, sum of thrusts) and
the torques of the X frame's geometry (arm length ``arm``; rotor 1 front right, 2 back right, 3
back left, 4 front left, 1 and 3 turning clockwise: :mod:`coopsim.swarm.flight`) go to the engine
as a body-frame wrench (:meth:`~coopsim.model.module.PhysicsAccess.apply_wrench`), held for the
step. Commands:

* ``set_rotors w1 w2 w3 w4 [ref_x ref_y ref_z]``: the four speeds, rad/s, each in
  [0, max_speed]; the optional reference position (m, world frame) is only stored (recorded as
  ``flight_ref_x/y/z``, ``flight_tracking``: ``coopsim analyze tracking`` compares it with the
  flown path);
* ``set_thrust_rates T p q r``: collective thrust (N, in [0, 4 kf max_speed^2]) and body rates
  (rad/s), closed by the module's own rate loop (gain ``rate_gain``, the inertia ``ixx..izz``)
  and mixer every step;
* ``set_thrust_attitude T roll pitch yaw_rate``: thrust, roll and pitch (rad, Z-Y-X Euler,
  within +-pi/2) and yaw rate (rad/s), closed by an attitude loop (``attitude_gain``) above the
  rate loop;
* ``stop``: every propeller to 0 (through the lag).

The inner loops read the engine's true attitude and body rates (they stand for the autopilot's
own fast loop). The propeller speeds are the module's state: kept in its state table
(``frame.state("rotors")``, :mod:`coopsim.model.kernel`), so they start at 0 in a new run; the
reading is those speeds and their thrust. The step (loops, mixer, lag, wrench) and the reading
are the kind's compiled kernels (the ``ModuleKernel`` contract:
:func:`coopsim.swarm.flight_kernels.rotors_actuate` and ``rotors_sense``), one call each for
every robot; the engine refuses a wrench that is not finite. On an engine without the
``flight`` feature the module refuses to step (its bodies cannot fly), with one sentence.
"""

from __future__ import annotations

import math

from ...model.commands import OUT_OF_RANGE, WRONG_ARITY, Command
from ...model.errors import ProtocolError
from ...model.limits import shown
from ...model.kernel import StateField
from ...model.module import Column, Module
from ...model.params import ParamSpec
from ...swarm import flight_kernels
from ...model.specs import GRAVITY

SANITY_RATE = 50.0  # rad/s: larger body or yaw rates are refused
#: Thrust-to-weight, 4 kf max_speed^2 / (m g), an airframe may have: below 1 it cannot hover;
#: above 20 it is beyond any multirotor flown (racing quadrotors reach about 10 to 15). The
#: published Crazyflie 2.x sets give 1.49 to 2.11.
THRUST_TO_WEIGHT = (1.0, 20.0)
#: Largest principal moment of inertia over the smallest an airframe may have (a quadrotor's
#: is about 2: a flat frame's Izz is about Ixx + Iyy).
INERTIA_RATIO = 100.0
SANITY_REF = 1000.0  # m: larger reference coordinates are refused
MODES = {"stop": 0.0, "set_rotors": 1.0, "set_thrust_rates": 2.0, "set_thrust_attitude": 3.0}

# The Crazyflie 2.x's numbers (docs/robots.md says where each comes from); a robot type's
# ``defaults`` carry its own airframe's.
PARAMS = (
    ParamSpec("mass", "float", "the airframe's mass, for controllers (hover thrust m g), kg",
              0.027, 0.001, 100.0, "kg"),
    ParamSpec("arm", "float", "distance from the centre to each motor, m", 0.046, 0.005, 5.0,
              "m"),
    ParamSpec("kf", "float", "thrust coefficient: one rotor's thrust / w^2, N s^2", 2.22e-8,
              1e-12, 1e-2, "N s^2"),
    ParamSpec("km", "float", "drag-torque coefficient: one rotor's torque / w^2, N m s^2",
              1.324e-10, 1e-15, 1e-3, "N m s^2"),
    ParamSpec("tau", "float", "time constant of the motors' first-order lag, s (0: none)",
              0.072, 0.0, 2.0, "s"),
    ParamSpec("max_speed", "float", "largest propeller speed, rad/s", 2500.0, 1.0, 1e5,
              "rad/s"),
    ParamSpec("ixx", "float", "moment of inertia about body x, kg m^2", 1.657e-5, 1e-9, 100.0,
              "kg m^2"),
    ParamSpec("iyy", "float", "moment of inertia about body y, kg m^2", 1.666e-5, 1e-9, 100.0,
              "kg m^2"),
    ParamSpec("izz", "float", "moment of inertia about body z, kg m^2", 2.926e-5, 1e-9, 100.0,
              "kg m^2"),
    ParamSpec("rate_gain", "float", "P gain of the inner body-rate loop (roll, pitch; yaw a "
              "quarter of it), 1/s", 60.0, 0.0, 1000.0, "1/s"),
    ParamSpec("attitude_gain", "float", "P gain of set_thrust_attitude's roll and pitch "
              "loop, 1/s", 12.0, 0.0, 1000.0, "1/s"),
)


class Rotors(Module):
    """Four propellers: speed, thrust and rates, or thrust and attitude commands.

    On the wire (robot endpoint commands; the protocol's section 3):

    - ``set_rotors`` (3000): request data = ``[w1, w2, w3, w4]`` propeller speeds rad/s, each
      in [0, ``rotors.max_speed``], optionally followed by a reference ``[x, y, z]`` m (world
      frame, recorded for ``coopsim analyze tracking``); reply a motion command: the motors
      reach the speeds through their first-order lag (``rotors.tau``); error 4 for NaN,
      negative or above-maximum speeds (the range in the text); error 3 for another count than
      4 or 7 values; needs an engine with the ``flight`` feature (docs/robots.md *Quadrotors*)
    - ``set_thrust_rates`` (3001): request data = ``[thrust N, p, q, r rad/s]``: collective
      thrust (along the body's z) and body rates about the body's x (forward), y (left) and z
      (up) axes (REP 103: counter-clockwise about each axis is positive); reply a motion
      command closed by the module's own inner rate loop and mixer; error 4 for NaN, a thrust
      outside [0, 4 ``rotors.kf`` ``rotors.max_speed``²] N (0.555 N for a ``crazyflie``, 40 N
      for a ``quadrotor`` with their defaults) or a rate outside [−50, 50] rad/s (the range in
      the text)
    - ``set_thrust_attitude`` (3002): request data = ``[thrust N, roll rad, pitch rad, yaw rate
      rad/s]``: roll and pitch are the body's Z-Y-X Euler angles in the world frame (REP 103:
      x forward, y left, z up; counter-clockwise about each axis is positive), so **roll > 0
      banks right** (the left side up: thrust leans towards −y, the craft's right) and **pitch
      > 0 tips the nose down** (thrust leans forward, towards +x); yaw rate > 0 turns it
      counter-clockwise seen from above; reply a motion command closed by the module's
      attitude and rate loops; error 4 for NaN, a thrust outside the range of 3001, roll or
      pitch outside [−π/2, π/2] rad (±1.5708) or a yaw rate outside [−50, 50] rad/s (the range
      in the text)
    """

    label = "rotors"
    described_by = ("rotors",)  # description keys giving it (description.mobile)
    description = ("a quadrotor's four propellers (X frame) with motor lag: speeds (rad/s), or "
                   "thrust (N) with body rates (rad/s) or attitude (rad)")
    params = PARAMS
    commands = (
        Command(3000, "set_rotors", "rotors", data=(4, 7), kind="motion",
                doc="w1..w4 propeller speeds, rad/s, in [0, max_speed] [, reference x, y, z, "
                    "m, world frame: stored for analysis]"),
        Command(3001, "set_thrust_rates", "rotors", data=(4, 4), kind="motion",
                doc="collective thrust (N) and body rates p, q, r (rad/s), closed by the "
                    "module's rate loop"),
        Command(3002, "set_thrust_attitude", "rotors", data=(4, 4), kind="motion",
                doc="collective thrust (N), roll, pitch (rad) and yaw rate (rad/s)"),
        Command(3003, "stop", "rotors", kind="motion", doc="every propeller to 0"),
        Command(3004, "read", "rotors", kind="read",
                doc="w1..w4 actual propeller speeds (rad/s) and the collective thrust (N)"),
    )
    fields = ("w1", "w2", "w3", "w4", "thrust")
    state_fields = (StateField("speeds", (4,)),)  # rad/s, the propellers' now (after the lag)
    command_fields = ("mode", "u1", "u2", "u3", "u4", "ref_x", "ref_y", "ref_z", "tracking")
    columns = (Column("flight_ref_x", 1e-4, 2, 5, "command"),
               Column("flight_ref_y", 1e-4, 2, 6, "command"),
               Column("flight_ref_z", 1e-4, 2, 7, "command"),
               Column("flight_tracking", 1.0, 1, 8, "command"),
               # protocol 11: the propellers' speeds (rad/s) on the stream, for the 3D view's
               # rotors to turn at the rate they really do (viewer/view3d_bodies.py)
               *(Column(f"rotor_w{k + 1}", 1.0, 2, k, "reading", stream=True) for k in range(4)))

    @classmethod
    def command_row(cls, command, data, params, robot):
        top = float(params["max_speed"])
        total = 4.0 * float(params["kf"]) * top * top
        name = command.name
        if name == "stop":
            return (0.0,) * 9
        if name == "set_rotors":
            if len(data) not in (4, 7):  # the table allows 4 to 7: the count is checked here
                raise ProtocolError(WRONG_ARITY, f"set_rotors takes 4 speeds, or 4 speeds and "
                                                 f"a reference x, y, z (7 values), got "
                                                 f"{len(data)} values")
            _within(name, "propeller speeds", data[:4], 0.0, top, "rad/s")
            ref = tuple(data[4:7]) if len(data) == 7 else (0.0, 0.0, 0.0)
            _within(name, "reference coordinates", ref, -SANITY_REF, SANITY_REF, "m")
            return (MODES[name], *map(float, data[:4]), *map(float, ref),
                    1.0 if len(data) == 7 else 0.0)
        _within(name, "thrust", data[:1], 0.0, total, "N")
        if name == "set_thrust_rates":
            _within(name, "body rates", data[1:], -SANITY_RATE, SANITY_RATE, "rad/s")
        else:
            _within(name, "roll and pitch", data[1:3], -math.pi / 2, math.pi / 2, "rad")
            _within(name, "yaw rate", data[3:], -SANITY_RATE, SANITY_RATE, "rad/s")
        return (MODES[name], *map(float, data), 0.0, 0.0, 0.0, 0.0)

    @classmethod
    def dead_man_row(cls, params, robot):
        """The stored command when a dead man expires (coopsim.sim.deadman): level, at the
        hover thrust m g of the ``mass`` parameter, yaw rate 0 (no position loop here: it
        coasts on the speed it had while its attitude loop holds it level)."""
        top = float(params["max_speed"])
        thrust = min(float(params["mass"]) * 9.81, 4.0 * float(params["kf"]) * top * top)
        return (MODES["set_thrust_attitude"], thrust, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    @classmethod
    def check_values(cls, values, robot=None) -> str:
        """The :class:`~coopsim.model.capabilities.ValueChecker` capability:
        :func:`airframe_problem` with the robot's body mass (the one the engine flies), else
        the ``mass`` parameter."""
        mass = float(getattr(robot, "mass", 0.0) or 0.0)
        return airframe_problem(values, mass)

    # The step and the reading: compiled kernels over the state table (ModuleKernel). The
    # actuation keeps each command as carried out (u1..u4 the speeds after the lag, rad/s)
    # and hands the body wrench to the engine (force N, torque N m, body frame); the reading
    # is the speeds now and their thrust, N.
    kernel_views = ("state3d", "dt")
    kernel_actuate = flight_kernels.rotors_actuate
    kernel_drive = ("apply_wrench", (3, 3))
    kernel_sense = flight_kernels.rotors_sense


def _within(command: str, what: str, values, lo: float, hi: float, unit: str) -> None:
    """Refuse (error 4, OUT_OF_RANGE) values outside [lo, hi] with the range in the sentence."""
    for v in values:
        if not (lo <= v <= hi):  # NaN fails too
            raise ProtocolError(OUT_OF_RANGE, f"{command}: {what} must be within [{lo:g}, "
                                              f"{hi:g}] {unit}, got {shown(v, lo, hi)}")


def airframe_problem(values, mass: float = 0.0) -> str:
    """Why an airframe's ``rotors`` values are implausible ("" when they are not): its
    thrust-to-weight outside :data:`THRUST_TO_WEIGHT`, its moments of inertia breaking the
    triangle inequality (no rigid body has one moment larger than the other two together) or
    further apart than :data:`INERTIA_RATIO`. Every sentence states the bound and the value.

    Args:
        values: The module's parameter values (kf N s^2, max_speed rad/s, mass kg, ixx, iyy,
            izz kg m^2).
        mass: The body's mass, kg (0: the ``mass`` parameter's).
    """
    m = mass if mass > 0 else float(values["mass"])
    kf, top = float(values["kf"]), float(values["max_speed"])
    ratio = 4.0 * kf * top * top / (m * GRAVITY)
    lo, hi = THRUST_TO_WEIGHT
    if not lo <= ratio <= hi:
        return (f"thrust-to-weight 4 kf max_speed^2 / (m g) = {ratio:.6g} (kf {kf:.6g} N s^2, "
                f"max_speed {top:.6g} rad/s, mass {m:.6g} kg) is outside [{lo:g}, {hi:g}]: "
                "no airframe flies like that" + (" (below 1 it cannot hover)" if ratio < lo
                                                  else ""))
    moments = [float(values[k]) for k in ("ixx", "iyy", "izz")]
    for k, name in enumerate(("ixx", "iyy", "izz")):
        others = sum(moments) - moments[k]
        if moments[k] > others * (1.0 + 1e-9):
            return (f"inertia {name} = {moments[k]:.6g} kg m^2 is larger than the other two "
                    f"together ({others:.6g} kg m^2): no rigid body has such moments (each "
                    "must be at most the sum of the other two)")
    spread = max(moments) / min(moments)
    if spread > INERTIA_RATIO:
        return (f"the largest moment of inertia is {spread:.6g} times the smallest "
                f"(ixx, iyy, izz = {moments[0]:.6g}, {moments[1]:.6g}, {moments[2]:.6g} "
                f"kg m^2), beyond the bound of {INERTIA_RATIO:g}")
    return ""
