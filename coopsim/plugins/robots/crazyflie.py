"""``crazyflie`` and ``quadrotor``: quadrotors that fly in 3D (engines with the ``flight``
feature: ``mujoco``, ``aerial``).

Each is one robot on one free body (six degrees of freedom under gravity), driven by the
``rotors`` module (four propellers in an X frame, motor lag, a body-frame wrench) and sensed by
``imu``, ``mocap``, ``altimeter``, ``gps`` and ``compass``. The airframe's numbers (mass, arm,
inertia, thrust and drag coefficients, motor time constant, largest propeller speed) reach the
``rotors`` module through the type's ``defaults``, where controllers read them
(``bot.params("rotors")``). The section's z is the body's starting height (0: on the floor).
Each class's docstring gives its numbers and where they come from.
"""

from __future__ import annotations

from types import MappingProxyType

from ...model.robot_type import Assembly, BodySpec, MemberSpec, RobotType, ShapeSpec
from ...model.specs import RobotSpec

MODULES = ("rotors", "imu", "mocap", "altimeter", "gps", "compass", "camera3d")


def _airframe(mass, arm, inertia, kf, km, tau, max_speed) -> dict:
    """The ``rotors`` module's parameters of one airframe (SI units)."""
    return {"mass": mass, "arm": arm, "kf": kf, "km": km, "tau": tau, "max_speed": max_speed,
            "ixx": inertia[0], "iyy": inertia[1], "izz": inertia[2]}


class _Quadrotor(RobotType):
    """The shared build: one free disc of RADIUS, MASS, INERTIA and HEIGHT."""

    RADIUS = 0.0
    MASS = 0.0
    HEIGHT = 0.0
    INERTIA: tuple = ()
    draw = MappingProxyType({"shape": "disc", "heading": True, "rotorcraft": True})

    @classmethod
    def build(cls, spec: RobotSpec) -> Assembly:
        body = BodySpec("frame", "dynamic", cls.MASS, (ShapeSpec("circle", radius=cls.RADIUS),),
                        (spec.position[0], spec.position[1]), spec.yaw, free=True,
                        z=spec.position[2], height=cls.HEIGHT, inertia=cls.INERTIA)
        member = MemberSpec(spec.name, "frame", cls.modules, cls.RADIUS, drive="rotors")
        return Assembly((member,), (body,))


class Crazyflie(_Quadrotor):
    """Bitcraze's Crazyflie 2.1 as sold: 27 g, 92 mm motor to motor.

    The 250 mAh battery, the stock brushed motors and 47 mm propellers, no deck and no markers.
    The airframe (the ``rotors`` defaults; [n] are the sources below):

    - mass 0.027 kg: the data sheet's take-off weight [10];
    - 92 mm motor to motor, arm 0.046 m, 29 mm tall [10]; drawn 0.139 m across with propellers;
    - inertia Ixx, Iyy, Izz 1.657e-5, 1.666e-5, 2.926e-5 kg m²: the diagonal of the identified
      matrix [11];
    - thrust coefficient kf 2.22e-8 N s²: thrust = kf w² fitted by least squares through the 16
      measured rows of [18]'s table (0.19 g RMS residual a rotor);
    - drag-torque coefficient km = kf × 0.005964552 m = 1.324e-10 N m s² (the identified
      torque-to-thrust ratio [11]);
    - motor time constant 0.072 s: [19]'s step (0 to 25,000 rpm in about 180 ms) read as a
      first-order lag at 92 % (2.5 τ);
    - largest propeller speed 2500 rad/s: [18]'s fastest row (23,882 rpm at 93.75 % PWM, 57.9 g
      in all): 0.139 N a rotor, thrust-to-weight 2.10;
    - hover at about 1727 rad/s (16,500 rpm: [18]'s 24.4 g and 28.6 g rows bracket it).

    The published sets of crazyflow and RotorPy identify heavier builds (30-44 g, markers and
    decks); their kf and inertia agree with these within a few per cent, their motor lags
    differ with the method.

    Sources:

    - [10] Bitcraze AB, Crazyflie 2.1 datasheet (take-off weight 27 g with the 250 mAh battery;
      92 × 92 × 29 mm, motor to motor); the firmware's platform defaults carry the same arm,
      0.046 m.
    - [11] J. Förster, *System Identification of the Crazyflie 2.0 Nano Quadrocopter*, bachelor
      thesis, IDSC, ETH Zurich, 2015 (IDSC-RD-MDH-04), ch. 2 *Inertia*: the inertia matrix
      (diagonal 16.57, 16.66, 29.26 × 10⁻⁶ kg m²); the torque-to-thrust ratio 0.005964552 m of
      its drag measurements (the figure Bitcraze's firmware mixes with, ``thrustToTorque``).
      Its thrust map is against the PWM command (F = 2.130295e-11 PWM² + 1.032633e-6 PWM +
      5.484560e-4 N; 58.9 g in all at 93.75 % PWM, [18]'s 57.9 g).
    - [18] Bitcraze AB, crazyflie-firmware documentation, *PWM to thrust*, "Old measurements
      (2015)", the *Thrust measurement* table: PWM 0 to 93.75 % in 16 steps, the four rotors'
      thrust on a scale and the average propeller speed from optical sensors (and its figure
      *rpm to thrust*).
    - [19] Bitcraze AB, *Measuring propeller RPM, part 3* (blog, February 2015), the step-
      response figure: motor M1 from zero to full thrust and back on a full battery, 0 to
      25,000 rpm in about 180 ms.
    """

    label = "crazyflie"
    description = ("Crazyflie 2.x nano quadrotor, 27 g, 92 mm motor to motor; rotors, imu, "
                   "mocap, altimeter (3D engines)")
    modules = MODULES
    RADIUS = 0.046 + 0.0235  # m: the motor's arm plus a 47 mm propeller's half
    footprint = RADIUS
    # kg: the Crazyflie 2.1 data sheet's take-off weight (stock: 250 mAh battery, propellers, no
    # deck, no markers; the identifications' airframes weighed 28-44 g with what they carried)
    MASS = 0.027
    HEIGHT = 0.029  # m, the data sheet's 29 mm
    # Förster (2015), ch. 2: the diagonal of the identified inertia matrix, kg m^2
    INERTIA = (1.657171e-5, 1.6655602e-5, 2.9261652e-5)
    defaults = MappingProxyType({"rotors": _airframe(
        MASS, 0.046, INERTIA,  # arm: half the data sheet's 92 mm motor to motor (the diagonal)
        # N s^2: least squares of thrust = kf w^2 through Bitcraze's 16 measured (rpm, thrust)
        # rows (firmware docs, "PWM to thrust", 2015 table; 0.19 g RMS residual a rotor)
        kf=2.22e-8,
        km=2.22e-8 * 0.005964552,  # N m s^2: Förster's torque-to-thrust ratio, 0.005964552 m
        # s: Bitcraze's motor step (blog, "Measuring propeller RPM part 3", 2015: 0 to 25,000
        # rpm in about 180 ms) read as a first-order lag reaching 92 % (2.5 tau) at 180 ms
        tau=0.072,
        # rad/s: the table's fastest row, 23,882 rpm (93.75 % PWM, 57.9 g in all): 0.139 N a
        # rotor, thrust-to-weight 2.10 at 27 g
        max_speed=2500.0,
    )})


class Quadrotor(_Quadrotor):
    """A 1.5 kg quadrotor 0.5 m across (SwarmSimX's class of vehicle), X configuration.

    The airframe (the ``rotors`` defaults, stated rather than measured): 1.5 kg (as the
    ``holonomic``); 0.50 m across the rotor tips, arm 0.18 m, 0.12 m tall; inertia 0.015, 0.015,
    0.027 kg m² (an X frame with its battery at the centre); kf 1.0e-5 N s² (hover near
    606 rad/s); km 1.6e-7 N m s² (1.6 % of kf); motor time constant 0.03 s; largest propeller
    speed 1000 rad/s (10 N a rotor, thrust-to-weight 2.7).
    """

    label = "quadrotor"
    description = ("1.5 kg quadrotor 0.50 m across (SwarmSimX class), X frame; rotors, imu, "
                   "mocap, altimeter (3D engines)")
    modules = MODULES
    RADIUS = 0.25  # m, rotor tips (as the ``holonomic``)
    footprint = RADIUS
    MASS = 1.5  # kg
    HEIGHT = 0.12  # m
    INERTIA = (0.015, 0.015, 0.027)  # kg m^2: a 0.36 m X frame with its battery at the centre
    defaults = MappingProxyType({"rotors": _airframe(
        MASS, 0.18, INERTIA,
        kf=1.0e-5,  # N s^2: hover (3.7 N a rotor) near 605 rad/s
        km=1.6e-7,  # N m s^2: 1.6 % of kf (a 10-inch propeller's torque-to-thrust ratio)
        tau=0.03,  # s
        max_speed=1000.0,  # rad/s: 10 N a rotor, thrust-to-weight 2.7
    )})
