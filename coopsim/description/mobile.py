"""Mobile robots from a description file: a wheeled base's two wheel joints, a multirotor's
rotor links and the links sensors are mounted on, turned into the numbers the built-in
``motors``, ``odometry``, ``rotors``, ``lidar``, ``proximity`` (and the others) modules take.

Everything here reads the parsed description (:mod:`coopsim.description.robot`: links, joints
with their origins) at its zero configuration; nothing needs MuJoCo. What each number is:

* a **wheeled base** (:func:`wheel_base`): the axle is the distance between the two wheel
  joints' origins across the base (along the base's y); the wheel radius is half the largest
  extent of the wheel link's mesh, else the wheel joint's height above the root link's origin
  (a ``base_footprint`` root stands on the floor); the top speed is the wheel
  joints' ``<limit velocity>`` (rad/s) times the radius, m/s.
* a **multirotor** (:func:`airframe`): four or more rotors of any layout, links of the file
  or ``rotor`` lines (:mod:`coopsim.description.rotors`: their allocation matrix and
  mixer); ``arm`` is their mean distance from the base's z axis (the module's virtual X); the
  mass and the principal moments are the whole tree's (parallel-axis theorem).
* a **planar base** (``base planar``: PR2's powered casters, an omni or mecanum base, whose
  wheels cannot drive it as a left and a right wheel): the chassis rides on the floor and is
  driven by a planar velocity (the ``velocity`` module's vx, vy, yaw rate), capped at the
  robot's weight times 1 g (:func:`planar_caps`); its wheel joints are held like any other.
* a **sensor on a link** (:func:`~coopsim.description.frames.mount`): the link's origin
  in the base's frame, x, y, z (m; a range sensor's z above its chassis's middle, where it
  casts from), and the yaw of its x axis (rad).

Frames and units: the description's root link frame (x forward, z up), metres, kilograms,
radians.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .frames import (DescriptionKeyError, MobileKeyError, joint_named, link_frames, rotation,
                              link_named, mass_properties, mount)
from .rotors import SPIN_SIGN, Mixer, allocation, controllable, default_spins
from ..model.specs import GRAVITY

#: Defaults when the scenario names no ``kf``/``km`` and the rotor joints give no top speed.
WHEELS, ROTORS = "wheels", "rotors"  # the description keys (formats.description's rows)
PLANAR = "planar"  # ``base planar``: the modules a caster or omni base carries (their kit)
DEFAULT_MAX_SPEED = 2500.0  # rad/s, the Crazyflie's fastest measured propeller speed
DEFAULT_THRUST_TO_WEIGHT = 2.0  # kf is chosen so that 4 kf max_speed^2 = 2 m g
DEFAULT_TORQUE_RATIO = 0.01  # m: km = 0.01 kf (the Crazyflie's 0.006, a 10-inch prop's 0.016)



@dataclass(frozen=True)
class WheelBase:
    """A differential-drive base read from the description.

    Attributes:
        left, right: The wheel joints' names.
        axle: Distance between the wheels, m.
        radius: Wheel radius, m.
        max_speed: Largest wheel rim speed, m/s (0: the file gives no joint speed limit).
    """

    left: str
    right: str
    axle: float
    radius: float
    max_speed: float


@dataclass(frozen=True)
class Airframe:
    """A multirotor read from the description, in the ``rotors`` module's terms (its virtual
    X frame) and its real rotors' (:mod:`coopsim.description.rotors`).

    Attributes:
        rotors: The rotor links (or ``rotor1``.. for ``rotor`` lines), in the key's order.
        arm: Mean distance of the rotors from the base's z axis, m (the virtual X's arm).
        mass: The whole tree's mass, kg.
        inertia: Principal moments about the centre of mass in the base's axes, kg m^2.
        kf, km: The virtual X frame's thrust (N s^2) and drag-torque (N m s^2) coefficients:
            four virtual rotors at top speed give what the real ones give together.
        max_speed: Largest propeller speed, rad/s.
        positions, axes: Each real rotor's hub (m) and unit thrust axis, root frame.
        spins: Each real rotor's ``cw`` or ``ccw`` (seen from above).
        rotor_kf, rotor_km: One real rotor's thrust (N s^2) and drag-torque (N m s^2)
            coefficients.
    """

    rotors: tuple[str, ...]
    arm: float
    mass: float
    inertia: tuple[float, float, float]
    kf: float
    km: float
    max_speed: float
    positions: tuple = ()
    axes: tuple = ()
    spins: tuple = ()
    rotor_kf: float = 0.0
    rotor_km: float = 0.0

    def mixer(self) -> Mixer:
        """The real rotors' mixer (allocation matrix, per-rotor thrust cap)."""
        matrix = allocation(self.positions, self.axes, self.spins, self.rotor_km / self.rotor_kf)
        return Mixer(matrix, self.rotor_kf * self.max_speed ** 2)

    def params(self) -> dict:
        """The ``rotors`` module's parameters (its type's defaults)."""
        return {"mass": self.mass, "arm": self.arm, "kf": self.kf, "km": self.km,
                "max_speed": self.max_speed, "ixx": self.inertia[0], "iyy": self.inertia[1],
                "izz": self.inertia[2]}


def level_frames(description, tilt: tuple[float, float] = (0.0, 0.0)) -> dict:
    """Every link's frame (4 x 4) in the mount's level frame: the root link's
    (:func:`~coopsim.description.frames.link_frames`) turned by ``tilt`` (roll, pitch, rad:
    ``DescriptionSpec.tilt``, a file that is not z up stood up by the section)."""
    frames = link_frames(description)
    if not any(tilt):
        return frames
    turn = np.eye(4)
    turn[:3, :3] = rotation((tilt[0], tilt[1], 0.0))
    return {name: turn @ frame for name, frame in frames.items()}


def wheel_base(description, left: str, right: str,
               tilt: tuple[float, float] = (0.0, 0.0)) -> WheelBase:
    """The base driven by the wheel joints ``left`` and ``right`` (module doc), its
    geometry in the mount's level frame (``tilt``: :func:`level_frames`).

    Raises:
        DescriptionKeyError: a joint is missing, is not a revolute or continuous one, or the
            two are not apart across the base.
    """
    frames = level_frames(description, tilt)
    joints = [joint_named(description, name, "wheels") for name in (left, right)]
    for j in joints:
        if j.kind not in ("revolute", "continuous"):
            raise DescriptionKeyError(f"wheels: joint {j.name!r} is {j.kind}, not a revolute "
                                      "or continuous wheel joint")
    yl, yr = (frames[j.child][1, 3] for j in joints)
    axle = float(yl - yr)
    if not axle > 1e-4:
        raise DescriptionKeyError(f"wheels: the left wheel {left!r} must be left of the right "
                                  f"one {right!r} across the base (y {yl:.4g} m and "
                                  f"{yr:.4g} m): name the left wheel first")
    radii = [_radius(description, j, frames) for j in joints]
    radius = float(np.mean(radii))
    speeds = [j.speed for j in joints if j.speed and j.speed > 0]
    return WheelBase(left, right, axle, radius, min(speeds) * radius if speeds else 0.0)


def _radius(description, joint, frames) -> float:
    """A wheel's radius: half the largest extent of its link's mesh, else its axis' height
    above the root."""
    link = link_named(description, joint.child, "wheels")
    extents = [max(np.subtract(m.bounds[1], m.bounds[0])) for m in link.meshes]
    if extents and max(extents) > 0:
        return float(max(extents)) / 2
    height = float(frames[joint.child][2, 3])
    if not height > 0:
        raise DescriptionKeyError(f"wheels: the wheel link {link.name!r} has no cylinder or "
                                  "sphere and its joint is not above the base's origin: its "
                                  "radius is unknown")
    return height


def airframe(description, rotors: tuple[str, ...], spin: tuple[str, ...] = (),
             kf: float = 0.0, km: float = 0.0, given: tuple = ()) -> Airframe:
    """The multirotor whose rotors are the links ``rotors`` or the ``given`` rotor lines
    (x, y, z, ax, ay, az, spin each; :mod:`coopsim.description.rotors`); ``spin`` (cw/ccw
    per rotor, in their order) or alternating; ``kf``, ``km`` 0 take the defaults above.

    Raises:
        DescriptionKeyError: a link the file lacks, fewer than four rotors, a rotor axis of
            no length or level with the frame, or rotors that cannot control thrust and the
            three torques (the allocation's rank is below 4).
    """
    frames = link_frames(description)
    positions, axes, spins = _rotor_geometry(description, frames, rotors, given)
    names = tuple(rotors) or tuple(f"rotor{k + 1}" for k in range(len(given)))
    if len(positions) < 4:
        raise DescriptionKeyError(f"rotors: a multirotor needs at least four rotors to control "
                                  f"its thrust, roll, pitch and yaw, got {len(positions)}")
    if spin:
        if len(spin) != len(positions) or any(s not in SPIN_SIGN for s in spin):
            raise MobileKeyError("spin", f"spin: give cw or ccw for each of the "
                                         f"{len(positions)} rotors, in their order, got "
                                         f"{' '.join(spin)}")
        spins = tuple(spin)
    spins = spins if all(spins) else default_spins(positions)
    arms = np.hypot(positions[:, 0], positions[:, 1])
    mass, inertia = mass_properties(description, frames)
    top = _rotor_speed(description, rotors) or DEFAULT_MAX_SPEED
    n = len(positions)
    kf = kf or DEFAULT_THRUST_TO_WEIGHT * mass * GRAVITY / (n * top * top)
    km = km or DEFAULT_TORQUE_RATIO * kf
    matrix = allocation(positions, axes, spins, km / kf)
    if not controllable(matrix):
        key = "spin" if spin else "rotors"
        text = (f"{key}: these rotors cannot control thrust, roll, pitch and yaw together (at "
                + ", ".join(f"({x:.3g}, {y:.3g}) m {s}" for (x, y, _), s in zip(positions,
                                                                               spins))
                + "): spread them round the centre and give them both spins")
        raise MobileKeyError(key, text) if spin else DescriptionKeyError(text)
    # the rotors module's virtual X frame: 4 kf' max^2 is the real rotors' total thrust
    virtual_kf = kf * n / 4.0 * float(np.mean(axes[:, 2]))
    return Airframe(names, float(arms.mean()), mass, inertia, float(virtual_kf),
                    float(km * n / 4.0), float(top), tuple(map(tuple, positions)),
                    tuple(map(tuple, axes)), spins, float(kf), float(km))


def _rotor_geometry(description, frames, rotors, given) -> tuple:
    """(N, 3) hub positions, (N, 3) unit thrust axes and the given spins ("" each for the
    linked rotors) of the rotor links or lines."""
    if given:
        pos = np.array([g[:3] for g in given], float)
        axes = np.array([g[3:6] for g in given], float)
        spins = tuple(str(g[6]) for g in given)
    else:
        pos, axes = [], []
        for name in rotors:
            link_named(description, name, "rotors")
            frame = frames[name]
            joint = next((j for j in description.joints if j.child == name), None)
            if joint is not None and joint.kind in ("revolute", "continuous"):
                axes.append(frame[:3, :3] @ np.asarray(joint.axis, float))
            else:
                axes.append(frame[:3, 2])
            pos.append(frame[:3, 3])
        pos, axes, spins = np.array(pos, float).reshape(-1, 3), \
            np.array(axes, float).reshape(-1, 3), ("",) * len(rotors)
    for k, axis in enumerate(axes):
        size = float(np.linalg.norm(axis))
        if not size > 1e-9 or abs(axis[2]) < 1e-6 * size:
            raise DescriptionKeyError(f"rotors: rotor {k + 1}'s thrust axis "
                                      f"{tuple(round(float(v), 6) for v in axis)} has no length "
                                      "or lies level: give an axis with an upward part")
        axes[k] = axis / size * (1.0 if axis[2] > 0 else -1.0)  # thrust points up
    return pos, axes, spins


def _rotor_speed(description, rotors) -> float:
    """The rotor joints' smallest speed limit, rad/s (0: none given)."""
    speeds = [j.speed for j in description.joints
              if j.child in rotors and j.kind in ("revolute", "continuous") and j.speed
              and j.speed > 0]
    return float(min(speeds)) if speeds else 0.0


# -- the type of a described mobile robot ---------------------------------------------------------

#: How a ``sensor MODULE LINK`` line mounts a module (the module class's optional ``mount``
#: attribute): ``link`` only checks the link (the module reads the robot's own motion or casts
#: from its centre), ``xyz_yaw`` sets its ``x``, ``y``, ``z`` (m: the link's origin, z above
#: the body's origin) and ``yaw`` (degrees), ``xyz_yaw_middle`` the same with ``z`` above the
#: middle height of the body's own shapes (where a range sensor casting in 3D adds its ``z``:
#: ``plugins.modules.ranging3d``), ``x`` its ``x``, ``angle`` one of its ``angle0``..
#: ``angle7`` (degrees) per line. The modules a ``wheels`` or ``rotors`` key gives declare it
#: themselves (their optional ``described_by``: the keys, in the registry's order), so no
#: module is named here.
MOUNTS = ("link", "xyz_yaw", "xyz_yaw_middle", "x", "angle")
MOUNT_HEIGHT = 0.02  # m: an imported type's mount body's shapes (description.robot)
PROXIMITY_SLOTS = 8


@dataclass(frozen=True)
class Mobile:
    """What a description's ``wheels``, ``rotors`` and ``sensor`` keys give its robot type.

    Attributes:
        modules: Module labels its member carries besides the imported type's own.
        defaults: Module -> parameter -> value (the type's ``defaults``).
        wheels: The wheeled base, or None.
        frame: The multirotor's airframe, or None.
        radius: The chassis radius (sensing, the floor outline), m.
        planar: A planar base (``base planar``): driven by a planar velocity.
    """

    @property
    def base(self) -> str:
        """``wheeled``, ``floating`` (rotors), ``planar`` or "" (the section's ``base``)."""
        return "wheeled" if self.wheels else "floating" if self.frame else \
            PLANAR if self.planar else ""

    modules: tuple[str, ...] = ()
    defaults: dict = None
    wheels: WheelBase | None = None
    frame: Airframe | None = None
    radius: float = 0.0
    planar: bool = False


def mobile(description, spec) -> Mobile:
    """The modules and parameters a described robot's keys give it (``spec``: the section's
    :class:`~coopsim.description.robot.DescriptionSpec`).

    Raises:
        MobileKeyError: a key names what cannot be what it says (its ``key`` says which).
    """
    wheels, rotors = spec.get(WHEELS), spec.get(ROTORS)
    if spec.all("rotor"):  # rotors the file lacks, given as lines
        if rotors:
            raise MobileKeyError("rotor", "rotor: name the rotor links (rotors) or give rotor "
                                          "lines, not both")
        rotors = "lines"
    if (wheels or rotors) and any(k == "base" for k, _ in spec.lines):
        key = "wheels" if wheels else "rotors"
        raise MobileKeyError("base", f"base: a robot with {key} sets its own base (wheels ride "
                                     "on the floor, rotors fly a free body; base planar drives a "
                                     "base without them): leave base out")
    if wheels and rotors:
        raise MobileKeyError("rotors", "rotors: a robot has wheels or rotors, not both")
    modules, defaults, base, frame = [], {}, None, None
    planar = spec.base == PLANAR
    if planar:  # wheels and rotors with a base line were refused above
        _planar_kit(modules, defaults)
    try:
        if wheels:
            key = "wheels"
            base = wheel_base(description, *wheels, tilt=tuple(spec.tilt))
            modules += kit(WHEELS)
            if base.max_speed > 0:  # the kit's module with a top wheel speed, within range
                defaults.update({label: {"max_speed": min(base.max_speed, spec_.max)}
                                 for label in modules
                                 if (spec_ := _param(label, "max_speed")) is not None})
        if rotors:
            key = "rotors"
            frame = airframe(description, tuple(rotors) if rotors != "lines" else (),
                             tuple(spec.get("spin", ())), float(spec.get("kf", 0.0)),
                             float(spec.get("km", 0.0)), tuple(spec.all("rotor")))
            modules += kit(ROTORS)
            defaults.update({label: frame.params() for label in modules
                             if _param(label, "kf") is not None})  # the propellers' module
        key = "sensor"
        _sensors(description, spec, modules, defaults,
                 _middle(bool(rotors) or (spec.base == "floating" and not wheels)))
    except MobileKeyError:
        raise
    except DescriptionKeyError as exc:
        raise MobileKeyError(key, str(exc)) from None
    return Mobile(tuple(dict.fromkeys(modules)), defaults, base, frame,
                  _reach(description, base, frame, tuple(spec.tilt)), planar)


def _planar_kit(modules: list, defaults: dict) -> None:
    """A planar base's modules (``velocity``, ``odometry``, ``gps``, ``compass``) added, its
    velocity without the module's lag: the lag starts from the achieved velocity, so a base
    its own arms' reactions turn would follow the turn; a base controller servos the command."""
    modules += kit(PLANAR)
    defaults.update({label: {"tau": 0.0} for label in modules
                     if _param(label, "tau") is not None})


def _middle(free: bool) -> float:
    """The middle height of the imported type's mount body's shapes above its origin, m
    (``description.robot.ImportedType.build``, :func:`chassis`): a free body has none (0); a
    body on the floor or a fixed mount has its shapes standing on its origin, MOUNT_HEIGHT
    tall."""
    return 0.0 if free else MOUNT_HEIGHT / 2.0


def _sensors(description, spec, modules: list, defaults: dict, middle: float = 0.0) -> None:
    """The ``sensor MODULE LINK`` keys: each module added, its mount from the link (in the
    mount body's frame: the root turned by the section's roll and pitch; ``middle``: the
    height of the body's shapes' middle above its origin, m)."""
    angles = []
    mounts = mountable()
    for module, link in spec.all("sensor"):
        if module not in mounts:
            raise DescriptionKeyError(f"sensor: {module!r} is not a module a link carries "
                                      f"(one of {', '.join(mounts)})")
        x, y, z, yaw = mount(description, link, "sensor", spec.tilt)
        modules.append(module)
        kind = mounts[module]
        if kind in ("xyz_yaw", "xyz_yaw_middle"):
            defaults[module] = {"x": x, "y": y, "yaw": math.degrees(yaw),
                                "z": z - (middle if kind == "xyz_yaw_middle" else 0.0)}
        elif kind == "x":
            defaults[module] = {"x": x}
        elif kind == "angle":
            angles.append(math.degrees(yaw))
    if len(angles) > PROXIMITY_SLOTS:
        raise DescriptionKeyError(f"sensor: at most {PROXIMITY_SLOTS} proximity links, got "
                                  f"{len(angles)}")
    if angles:
        module = next(m for m, k in mounts.items() if k == "angle")
        defaults[module] = {"count": len(angles), **{f"angle{k}": round(a, 9)
                                                          for k, a in enumerate(angles)}}


def kit(key: str) -> tuple[str, ...]:
    """The registered modules whose ``described_by`` names the description key ``key``."""
    from ..model.plugins import MODULES

    return tuple(label for label, module in MODULES.items()
                 if key in getattr(module, "described_by", ()))


def mountable() -> dict[str, str]:
    """Module label -> how a ``sensor`` line mounts it (:data:`MOUNTS`), for every registered
    module that says."""
    from ..model.plugins import MODULES

    return {label: module.mount for label, module in MODULES.items()
            if getattr(module, "mount", "") in MOUNTS}


def _param(label: str, name: str):
    """Module ``label``'s :class:`~coopsim.model.params.ParamSpec` ``name``, or None."""
    from ..model.plugins import MODULES

    return next((p for p in MODULES.get(label).params if p.name == name), None)


def _reach(description, base: WheelBase | None, frame: Airframe | None,
           tilt: tuple[float, float] = (0.0, 0.0)) -> float:
    """The chassis radius: the farthest link origin from the base's z axis (in the mount's
    level frame), at least the wheels' half axle plus a tenth or the rotors' arm (a disc
    round the robot)."""
    frames = level_frames(description, tilt)
    far = max(float(np.hypot(*f[:2, 3])) for f in frames.values())
    if base is not None:
        far = max(far, 0.55 * base.axle)
    if frame is not None:
        far = max(far, frame.arm)
    return far or 0.05


def drive_caps(description, base: WheelBase) -> tuple[float, float]:
    """The ground drive's force (N) and torque (N m) caps: both wheels' ``<limit effort>`` at
    the rim, else the robot's weight times 1 g; the torque the force at half the axle."""
    efforts = [j.effort for j in description.joints if j.name in (base.left, base.right)]
    if all(math.isfinite(e) and e > 0 for e in efforts):
        force = sum(efforts) / base.radius
    else:
        force = mass_properties(description)[0] * GRAVITY
    return force, force * base.axle / 2


def planar_caps(description, radius: float) -> tuple[float, float]:
    """A planar base's drive caps: the force (N) its weight times 1 g (a caster base's file
    gives no driven wheel's effort: PR2's caster joints are fixed), the torque (N m) that
    force at half the chassis radius ``radius`` (m)."""
    force = mass_properties(description)[0] * GRAVITY
    return force, force * radius / 2


def chassis(found: Mobile, description, body, member, modules: tuple[str, ...]):
    """The imported type's mount body and member made mobile (``body``, ``member``: the
    :class:`~coopsim.model.robot_type.BodySpec` and ``MemberSpec`` of a fixed or floating
    mount): a wheeled base rides on the floor under the ground drive (a disc of the chassis
    radius, ``differential``, capped by :func:`drive_caps`), a multirotor is a free body whose
    ``mass`` is the airframe's (the engine weighs the file's links; controllers and checks
    read this one) under ``rotors``; a planar base rides on the floor as a wheeled one under
    the ``velocity`` drive, capped by :func:`planar_caps`. Returns (body, member)."""
    from dataclasses import replace

    from ..model.robot_type import ShapeSpec

    if found.wheels is not None:
        force, torque = drive_caps(description, found.wheels)
        body = replace(body, kind="dynamic", free=False,
                       shapes=(ShapeSpec("circle", radius=found.radius),))
        member = replace(member, modules=modules, radius=found.radius,
                         axle=found.wheels.axle, drive="differential", max_force=force,
                         max_torque=torque)
    elif found.planar:
        force, torque = planar_caps(description, found.radius)
        body = replace(body, kind="dynamic", free=False,
                       shapes=(ShapeSpec("circle", radius=found.radius),))
        member = replace(member, modules=modules, radius=found.radius, drive="velocity",
                         max_force=force, max_torque=torque)
    elif found.frame is not None:
        body = replace(body, kind="dynamic", free=True, shapes=(), mass=found.frame.mass)
        member = replace(member, modules=modules, radius=found.radius, drive="rotors")
    else:
        member = replace(member, modules=modules)
    return body, member
