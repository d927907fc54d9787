"""Hardware modules: what each robot's servers offer, computed for all robots at once.

A module declares its typed parameters and the fields of its reading. Every step the world hands
each sensor module a :class:`SenseFrame` (the physics state of all robots as arrays) and gets back
one reading row per robot, so 1,000 robots cost a few numpy calls, not 1,000 Python calls.

Frames and units: world frame is x/y on the floor, z up, metres; yaw in radians counter-clockwise
from +x. Angles in readings are radians in (-pi, pi]; "relative" angles are measured from the
robot's heading, positive to its left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..model.params import ParamSpec
from ..sim.raycast import RayCaster
from ..model.registry import MODULES

#: Sonar mounting angles relative to the heading: 11 sensors over the front half, 18 degrees apart.
SONAR_ANGLES = np.radians(np.linspace(-90.0, 90.0, 11))

_NOISE = "std of Gaussian noise added to each value"
_LOST = "chance that a step's reading is lost and the previous one is kept"


def _noise(unit: str, hi: float) -> ParamSpec:
    return ParamSpec("noise", "float", f"{_NOISE}, {unit}", 0.0, 0.0, hi, unit)


def _lost() -> ParamSpec:
    return ParamSpec("lost", "float", f"{_LOST}, %", 0.0, 0.0, 100.0, "%")


@dataclass
class SenseFrame:
    """The state of every robot after a physics step, as arrays indexed by robot.

    Attributes:
        dt: Step length, s.
        pose: (N, 3) x, y (m) and yaw (rad), world frame.
        velocity: (N, 3) vx, vy (m/s) world frame and yaw rate (rad/s).
        radius: (N,) chassis radius, m.
        axle: (N,) distance between the wheels, m.
        wheel_cmd: (N, 2) left, right wheel speeds the motors drove this step, m/s.
        group: (N,) collision/sensing group of each robot (own shapes are invisible to own rays).
        caster: Ray caster, with the static shapes already set.
        circles, circle_group, segments, segment_group: Moving shapes this step (see RayCaster).
        targets: (T, 2) target positions, m.
        contacts: (N, 2) 1.0 where the chassis touches something at its front / rear half.
        support: (N, 2) bar angle relative to heading (rad) and joint force (N); NaN if no bar.
    """

    dt: float
    pose: np.ndarray
    velocity: np.ndarray
    radius: np.ndarray
    axle: np.ndarray
    wheel_cmd: np.ndarray
    group: np.ndarray
    caster: RayCaster
    circles: np.ndarray
    circle_group: np.ndarray
    segments: np.ndarray
    segment_group: np.ndarray
    targets: np.ndarray
    contacts: np.ndarray
    support: np.ndarray


class Module:
    """Base of every module: parameters, reading fields and the batched measurement.

    Subclasses set the class attributes and override :meth:`sense` (sensors) or leave it
    (actuators report their own state through :meth:`sense` too).
    """

    label: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[tuple[ParamSpec, ...]] = ()
    fields: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def field_names(cls, n_targets: int) -> tuple[str, ...]:
        """Names of the reading's values (a few modules depend on the number of targets)."""
        return cls.fields

    @classmethod
    def sense(cls, frame: SenseFrame, rows: np.ndarray, p: dict[str, np.ndarray],
              prev: np.ndarray) -> np.ndarray:
        """Return the noiseless reading of the robots ``rows`` as an array (len(rows), width).

        Args:
            frame: All robots' state.
            rows: Indices (into the frame) of the robots that carry this module.
            p: Parameter values per robot, each an array aligned with ``rows``.
            prev: The previous reading of those robots (for integrating sensors).
        """
        raise NotImplementedError

    @classmethod
    def measure(cls, frame: SenseFrame, rows: np.ndarray, p: dict[str, np.ndarray],
                prev: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reading with the module's noise and lost-data parameters applied."""
        out = cls.sense(frame, rows, p, prev)
        # No draws while a parameter is 0 everywhere: the stream stays the same for the same
        # parameters (determinism holds) and noiseless runs skip the generator's cost.
        if "noise" in p and out.size and p["noise"].any():
            out = out + rng.standard_normal(out.shape) * p["noise"][:, None]
        if "lost" in p and out.size and p["lost"].any():
            lost = rng.random(len(rows)) * 100.0 < p["lost"]
            out[lost] = prev[lost]
        return cls.clip(out, p)

    @classmethod
    def clip(cls, out: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
        """Keep noisy values physically possible (e.g. distances >= 0)."""
        return out


def _wrap(angle: np.ndarray) -> np.ndarray:
    return np.arctan2(np.sin(angle), np.cos(angle))


@MODULES.register("motors")
class Motors(Module):
    """Two driven wheels. Commands set wheel speeds (m/s) or normalized power (-100..100)."""

    label = "motors"
    description = "differential drive: set wheel speeds or power; reads commanded and actual speeds"
    params = (
        ParamSpec("max_speed", "float", "largest wheel speed, m/s", 0.6, 0.0, 5.0, "m/s"),
        ParamSpec("efficiency", "float", "share of the commanded speed the wheels reach, %",
                  100.0, 0.0, 100.0, "%"),
    )
    fields = ("left_cmd", "right_cmd", "left", "right")

    @classmethod
    def sense(cls, frame, rows, p, prev):
        pose, vel = frame.pose[rows], frame.velocity[rows]
        forward = vel[:, 0] * np.cos(pose[:, 2]) + vel[:, 1] * np.sin(pose[:, 2])
        half_turn = vel[:, 2] * frame.axle[rows] / 2
        return np.column_stack((frame.wheel_cmd[rows], forward - half_turn, forward + half_turn))


@MODULES.register("sonar")
class Sonar(Module):
    """Eleven distance sensors on the chassis edge, from -90 to +90 degrees, 18 degrees apart."""

    label = "sonar"
    description = "11 ray distances (m) from the chassis edge, right (-90 deg) to left (+90 deg)"
    params = (
        ParamSpec("max_range", "float", "largest distance measured, m", 2.0, 0.05, 10.0, "m"),
        _noise("m", 1.0),
        _lost(),
    )
    fields = tuple(f"d{i}" for i in range(11))

    @classmethod
    def sense(cls, frame, rows, p, prev):
        n = len(rows)
        pose = frame.pose[rows]
        angles = (pose[:, 2:3] + SONAR_ANGLES[None, :]).ravel()
        dirs = np.column_stack((np.cos(angles), np.sin(angles)))
        # Cast from the centre (own chassis skipped by group) and subtract the radius: a ray
        # starting on the chassis edge would begin inside a wall the robot is pressed into.
        edge = np.repeat(frame.radius[rows], 11)
        origins = np.repeat(pose[:, :2], 11, axis=0)
        dist = frame.caster.cast(
            origins, dirs, np.repeat(p["max_range"], 11) + edge, frame.circles, frame.segments,
            ray_group=np.repeat(frame.group[rows], 11), circle_group=frame.circle_group,
            segment_group=frame.segment_group)
        reach = np.repeat(p["max_range"], 11)
        return np.where(dist >= reach + edge, reach, dist - edge).reshape(n, 11)

    @classmethod
    def clip(cls, out, p):
        return np.clip(out, 0.0, p["max_range"][:, None])


@MODULES.register("target")
class Target(Module):
    """Distance and relative angle to every target, in scenario order (a stand-in for vision)."""

    label = "target"
    description = "per target: distance (m) and angle from the heading (rad, + to the left)"
    params = (_noise("m and rad", 1.0), _lost())

    @classmethod
    def field_names(cls, n_targets):
        return tuple(f"{k}{i}" for i in range(n_targets) for k in ("distance", "angle"))

    @classmethod
    def sense(cls, frame, rows, p, prev):
        pose = frame.pose[rows]
        d = frame.targets[None, :, :] - pose[:, None, :2]
        dist = np.hypot(d[..., 0], d[..., 1])
        ang = _wrap(np.arctan2(d[..., 1], d[..., 0]) - pose[:, 2:3])
        return np.stack((dist, ang), axis=2).reshape(len(rows), -1)


@MODULES.register("odometry")
class Odometry(Module):
    """Dead reckoning from the wheels' motion, starting at (0, 0, 0) at load and after reset."""

    label = "odometry"
    description = "x, y (m), yaw (rad) integrated from wheel travel, and each wheel's travel (m)"
    params = (
        ParamSpec("slip", "float", "std of wheel slip, % of each step's wheel travel",
                  0.0, 0.0, 50.0, "%"),
    )
    fields = ("x", "y", "yaw", "left_travel", "right_travel")

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        wheels = Motors.sense(frame, rows, p, prev)[:, 2:] * frame.dt
        if wheels.size:
            wheels = wheels * (1.0 + rng.standard_normal(wheels.shape) * p["slip"][:, None] / 100)
        ds, dyaw = wheels.mean(axis=1), (wheels[:, 1] - wheels[:, 0]) / frame.axle[rows]
        mid = prev[:, 2] + dyaw / 2
        return np.column_stack((
            prev[:, 0] + ds * np.cos(mid), prev[:, 1] + ds * np.sin(mid),
            _wrap(prev[:, 2] + dyaw), prev[:, 3] + wheels[:, 0], prev[:, 4] + wheels[:, 1]))


@MODULES.register("gps")
class Gps(Module):
    """Position in the world frame."""

    label = "gps"
    description = "x, y in the world frame, m"
    params = (_noise("m", 10.0), _lost())
    fields = ("x", "y")

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return frame.pose[rows, :2].copy()


@MODULES.register("compass")
class Compass(Module):
    """Heading in the world frame."""

    label = "compass"
    description = "yaw in the world frame, rad, counter-clockwise from +x"
    params = (_noise("rad", math.pi), _lost())
    fields = ("yaw",)

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return frame.pose[rows, 2:3].copy()

    @classmethod
    def clip(cls, out, p):
        return _wrap(out)


@MODULES.register("bumper")
class Bumper(Module):
    """Contact switches on the front and rear halves of the chassis."""

    label = "bumper"
    description = "front, rear: 1.0 while the chassis touches something on that half, else 0.0"
    fields = ("front", "rear")

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return frame.contacts[rows].copy()


@MODULES.register("support")
class Support(Module):
    """The support holding a team2 bar: the bar's angle and the force the joint carries."""

    label = "support"
    description = "bar angle from the heading (rad) and force in the support joint (N)"
    params = (_noise("rad and N", 100.0),)
    fields = ("angle", "force")

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return frame.support[rows].copy()
