"""``imu``: accelerometer and gyroscope in the body frame, with white noise and wandering biases.

The accelerometer reads the *specific force* (what a proof mass feels: acceleration minus
gravity) in the body frame: from the change of the world-frame velocity since the robot's last
reading, over the time between them, plus gravity's opposite,

    f = R^T ((v - v_last) / h + (0, 0, g)),    g = 9.81 m/s^2,

so a body at rest reads (0, 0, +9.81) and a body in free fall (0, 0, 0); the first reading of a
robot (nothing to difference yet) takes the acceleration as 0. The gyroscope reads the body rates
(``Frame.state3d``'s, rad/s, body frame). Each of the six values gets white noise of density
``accel_noise`` / ``gyro_noise`` (per square-root hertz: the standard deviation of a sample is
density / sqrt(h), h the time since the robot's last reading) and a bias that starts at 0 and
wanders as a random walk (``accel_walk`` / ``gyro_walk`` per square-root second: it moves by a
normal draw of std walk * sqrt(h) each reading). ``rate`` sets the update rate (Hz) like every
timed module's. In a 2D world (an engine without ``flight``) it reads the planar state: a body on
the floor, turned about z only.

State: the last velocity, time and biases of each robot in the kind's state table
(``frame.state("imu")``, :mod:`coopsim.model.kernel`: by frame row, remapped by name when the
layout changes); a reading moves it on, the noiseless ``sense`` too. Noise: one block of
standard normals a step, 3 per noise parameter that is not 0 (:meth:`Imu.noise_draws`). A
step's readings are the kind's compiled kernel (the ``ModuleKernel`` contract:
:func:`coopsim.plugins.modules.flying.imu_sense`), one call for every robot.
Recorded: the six values every recorded step, columns ``imu_ax`` .. ``imu_gz`` (units 1e-4
m/s^2 and 1e-5 rad/s, docs/recording-format.md section 5).
"""

from __future__ import annotations

from ...model.commands import Command
from ...model.kernel import StateField
from ...model.module import Column, Module
from ...model.params import ParamSpec
from . import flying
from .common import lost, rate


class Imu(Module):
    """Accelerometer (specific force, m/s^2) and gyroscope (rad/s), body frame."""

    label = "imu"
    described_by = ("rotors",)  # description keys giving it (description.mobile)
    mount = "link"  # how a described robot's sensor line mounts it
    description = ("accelerometer: specific force ax, ay, az (m/s^2, body frame, +9.81 on z at "
                   "rest) and gyroscope gx, gy, gz (rad/s, body frame), noise and bias walk")
    # Defaults: a Bosch BMI088's data sheet (the Crazyflie 2.1's IMU): 175 ug/sqrt(Hz) and
    # 0.014 deg/s/sqrt(Hz); the walks are small guesses (a few mg and 0.1 deg/s per hour).
    params = (
        ParamSpec("accel_noise", "float", "accelerometer noise density, m/s^2/sqrt(Hz)",
                  1.7e-3, 0.0, 10.0, "m/s^2/sqrt(Hz)"),
        ParamSpec("gyro_noise", "float", "gyroscope noise density, rad/s/sqrt(Hz)", 2.4e-4,
                  0.0, 10.0, "rad/s/sqrt(Hz)"),
        ParamSpec("accel_walk", "float", "accelerometer bias random walk, m/s^2/sqrt(s)", 1e-4,
                  0.0, 10.0, "m/s^2/sqrt(s)"),
        ParamSpec("gyro_walk", "float", "gyroscope bias random walk, rad/s/sqrt(s)", 1e-5, 0.0,
                  10.0, "rad/s/sqrt(s)"),
        lost(), rate(),
    )
    commands = (Command(3100, "read", "imu", kind="read",
                        doc="ax, ay, az specific force (m/s^2) and gx, gy, gz body rates "
                            "(rad/s), body frame"),)
    fields = ("ax", "ay", "az", "gx", "gy", "gz")
    # Recorded every step so that a replay and ``coopsim export --ros2`` (sensor_msgs/Imu on
    # /<robot>/imu) have the readings: steps finer than the BMI088's own LSB (9e-4 m/s^2 at
    # +-3 g, 1.1e-3 rad/s at +-2000 deg/s), first differences (the noise makes second ones
    # larger, not smaller).
    columns = (*(Column(f"imu_{f}", 1e-4, 1, i) for i, f in enumerate(fields[:3])),
               *(Column(f"imu_{f}", 1e-5, 1, i + 3) for i, f in enumerate(fields[3:])))

    #: the noise parameters in the order they draw (3 normals each per robot and reading)
    NOISE = ("accel_walk", "accel_noise", "gyro_walk", "gyro_noise")
    #: per robot: the last velocity (m/s, world) and time (s) read, the six biases
    state_fields = (StateField("v", (3,)), StateField("t"), StateField("bias", (6,)))

    # the reading, its noise, bias walk and lost data: one compiled call (ModuleKernel)
    kernel_views = ("full_state", "clock")
    kernel_sense = flying.imu_sense

    @classmethod
    def noise_draws(cls, p) -> int:
        """Standard normals a robot's reading takes per measured step: 3 per noise parameter
        not 0 for every robot (:data:`NOISE`'s order)."""
        return flying.columns(p, cls.NOISE)[1]
