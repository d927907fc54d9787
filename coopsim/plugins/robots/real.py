"""Robot types modelled on real robots: ``epuck``, ``kilobot``, ``turtlebot3``, ``thymio``.

Dimensions, masses, top speeds and sensor placements come from the robots' public datasheets
(cited in docs/robots.md). Every one is a differential-drive disc (the Kilobot's vibration
motors are modelled as two wheels that turn it on the spot at its datasheet speed); the
sensors are the built-in modules configured by parameters (:attr:`RobotType.defaults`), so a
scenario changes them with ``param`` lines like any other.
"""

from __future__ import annotations

from ...model.robot_type import Assembly, BodySpec, MemberSpec, RobotType, ShapeSpec
from ...model.specs import RobotSpec

_BASE = ("motors", "odometry", "gps", "compass", "bumper")


class _Disc(RobotType):
    """A differential-drive disc: subclasses set the constants below."""

    radius = 0.1  # m
    mass = 1.0  # kg
    axle = 0.1  # m, between the wheels
    force = 10.0  # N, cap of the drive's traction
    torque = 1.0  # N m

    @classmethod
    def build(cls, spec: RobotSpec) -> Assembly:
        body = BodySpec("chassis", "dynamic", cls.mass,
                        (ShapeSpec("circle", radius=cls.radius),),
                        (spec.position[0], spec.position[1]), spec.yaw)
        member = MemberSpec(spec.name, "chassis", cls.modules, cls.radius, cls.axle,
                            "differential", cls.force, cls.torque)
        return Assembly((member,), (body,))


class Epuck(_Disc):
    """GCtronic / EPFL e-puck: 70 mm, 8 IR proximity sensors, ground sensors, 0.13 m/s.

    A disc 70 mm across (radius 0.035 m), 0.15 kg; wheels 53 mm apart, top speed 0.13 m/s.
    ``proximity``: 8 IR sensors at −17°, −49°, −90°, −150°, +150°, +90°, +49°, +17° (IR0 front
    right round the back to IR7 front left), range 4 cm, 0..4095; ``line``: floor sensors 3 cm
    ahead, 1 cm each side; ``leds``: its LED ring (8); ``camera``: a forward coloured-blob
    camera, 48° field of view as Webots' e-puck camera, 1 m range. Not modelled: its
    accelerometer and microphones.

    Sources:

    - [1] F. Mondada et al., "The e-puck, a Robot Designed for Education in Engineering", Proc.
      9th Conf. on Autonomous Robot Systems and Competitions, 2009 (70 mm, 13 cm/s, 8 IR
      sensors).
    - [2] Cyberbotics, Webots User Guide, "Using the e-puck robot" (150 g; 8 IR sensors
      measuring the proximity of obstacles in a 4 cm range; floor-sensor extension).
    """

    label = "epuck"
    description = ("e-puck: 70 mm disc, 0.13 m/s, 8 IR proximity sensors, floor sensors, "
                   "LED ring, front camera")
    modules = _BASE + ("proximity", "line", "leds", "camera")
    radius, mass, axle = 0.035, 0.15, 0.053
    force, torque = 2.0, 0.05
    footprint = radius
    defaults = {"motors": {"max_speed": 0.13},
                "proximity": {"range": 0.04},
                "camera": {"fov": 48.0, "range": 1.0},
                "line": {"ahead": 0.03, "spread": 0.01}}


class Kilobot(_Disc):
    """Harvard K-Team Kilobot: 33 mm, ~1 cm/s, IR messaging to ~10 cm as a short radio, an
    ambient-light sensor (10-bit, 0..1023), an RGB LED.

    A disc 33 mm across (radius 0.0165 m), 16 g, its vibration motors turned into a
    differential drive 25 mm wide at 1 cm/s. ``radio`` is its IR messaging: range 10 cm, 9-byte
    messages (``max_bytes`` 9, ``bandwidth`` 9 bytes a step); ``light`` its ambient-light
    sensor, 10-bit (0..1023), 15.5 mm behind the wheels' axis (``light.x`` −0.0155); ``leds``
    its RGB LED (``leds.count`` 1).

    Sources:

    - [3] M. Rubenstein, C. Ahler, R. Nagpal, "Kilobot: A Low Cost Scalable Robot System for
      Collective Behaviors", ICRA 2012, pp. 3293–3298 (33 mm, 1 cm/s, IR messaging off the
      floor up to 10 cm).
    - [4] kilolib's ``message_t``: 9 bytes of payload per message.
    - [9] K-Team, Kilobot user manual, and kilolib's ``get_ambientlight()`` (the ambient-light
      sensor, a phototransistor on top of the battery behind the axis of motion, read by the
      10-bit ADC: 0..1023, −1 on a failed conversion; Rubenstein et al. [3] list it among the
      sensors); kilobotics.com's lab 5, *move to light*, is the textbook phototaxis on it.
    """

    label = "kilobot"
    description = ("Kilobot: 33 mm disc, 1 cm/s, IR messaging within 10 cm (radio module), "
                   "ambient light sensor, RGB LED")
    modules = _BASE + ("radio", "leds", "light")
    radius, mass, axle = 0.0165, 0.016, 0.025
    force, torque = 0.2, 0.005
    footprint = radius
    defaults = {"motors": {"max_speed": 0.01},
                "radio": {"range": 0.10, "max_bytes": 9, "bandwidth": 9},
                "leds": {"count": 1},
                "light": {"x": -0.0155}}


class Turtlebot3(_Disc):
    """ROBOTIS TurtleBot3 Burger: 360-beam LDS (0.12-3.5 m, 5 Hz), 0.22 m/s, 2.84 rad/s.

    138 × 178 mm modelled as a disc of radius 0.089 m (footprint 0.105 m), 1 kg; wheels 160 mm
    apart, 0.22 m/s (2 × 0.22 / 0.16 = 2.75 rad/s on the spot; the datasheet gives 2.84 rad/s).
    ``lidar``: the LDS-01, 360 beams over 360°, 0.12–3.5 m, mounted 32 mm behind the centre;
    its 5 Hz scan rate is ``param lidar.rate 5`` (by default every sensor reads every step).
    Sources:

    - [5] ROBOTIS e-Manual, TurtleBot3 specifications (Burger: 138 × 178 × 192 mm, 1 kg, 0.22
      m/s, 2.84 rad/s; LDS-01: 360°, 120–3,500 mm, 5 Hz).
    - [6] turtlebot3 (ROBOTIS GitHub): wheel separation 0.160 m; ``base_scan`` 0.032 m behind
      ``base_link`` in the Burger's URDF.
    """

    label = "turtlebot3"
    description = "TurtleBot3 Burger: 0.22 m/s, 360-beam lidar 0.12-3.5 m"
    modules = _BASE + ("lidar",)
    radius, mass, axle = 0.089, 1.0, 0.160
    force, torque = 20.0, 2.0
    footprint = 0.105
    defaults = {"motors": {"max_speed": 0.22},
                "lidar": {"beams": 360, "fov": 360.0, "min_range": 0.12, "max_range": 3.5,
                          "x": -0.032}}


class Thymio(_Disc):
    """Mobsya Thymio II: 5 front and 2 rear IR proximity sensors, 2 ground sensors, LEDs.

    110 × 112 mm modelled as a disc of radius 0.056 m, 270 g; wheels 95 mm apart, 0.14 m/s.
    ``proximity``: 7 IR sensors (``count`` 7), five front at +40°, +20°, 0°, −20°, −40°
    (``prox.horizontal[0..4]``, left to right) and two rear at +170°, −170°, range 10 cm,
    0..4500; ``line``: two ground sensors 7 cm ahead, 11 mm each side; ``leds`` (8). Not
    modelled: its buttons.

    Sources:

    - [7] P. Rétornaz et al., "Seamless Multi-Robot Programming for the People: ASEBA and the
      Wireless Thymio II Robot", ICIA 2013 (110 × 112 × 54 mm).
    - [8] Mobsya, Thymio II specifications (270 g; 5 front and 2 rear horizontal IR proximity
      sensors, 2 ground sensors; 95 mm between the wheels; about 14 cm/s at full speed).
    """

    label = "thymio"
    description = "Thymio II: 0.14 m/s, 5 front and 2 rear IR proximity sensors, 2 floor sensors"
    modules = _BASE + ("proximity", "line", "leds")
    radius, mass, axle = 0.056, 0.27, 0.095
    force, torque = 5.0, 0.2
    footprint = radius
    defaults = {"motors": {"max_speed": 0.14},
                "proximity": {"count": 7, "range": 0.10, "saturation": 4500.0,
                              "angle0": 40.0, "angle1": 20.0, "angle2": 0.0,
                              "angle3": -20.0, "angle4": -40.0, "angle5": 170.0,
                              "angle6": -170.0, "angle7": 0.0},
                "line": {"ahead": 0.07, "spread": 0.011}}
