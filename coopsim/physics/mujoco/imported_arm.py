"""An arm of a robot from a description file on the ``mujoco`` engine: the description's own
bodies and joints (attached by :mod:`coopsim.physics.mujoco.imported` under the robot's name
prefix) get what a built-in arm (:mod:`coopsim.physics.mujoco.arms`) builds for itself, so the
engine's arm table, the ``joints``/``tool``/``gripper``/``force`` modules and grasps work on
them unchanged:

* each arm joint a servo actuator (torque = kp (q* - q) + kv (qd* - qd), within the file's
  effort) with gravity compensation through it, a rotor armature and viscous friction as the
  built-in arms' (from the effort); the gains from the description's inertias
  (:attr:`~coopsim.description.arm.ImportedArmSpec.inertia`) at :data:`~coopsim.physics.
  mujoco.arms.OMEGA` unless the scenario gave ``omega`` or ``kp``/``kv``;
* a site at the tool frame in the last moving joint's body, the wrist's force and torque
  sensors on it, and the inactive weld a grasp points at an object;
* the two finger joints (a gripper's) a position servo each, held open: a grasp is the weld
  (as a built-in arm's), so the fingers stay open around what they hold (of the arm's
  collision kind, which a held object does not touch);
* every body the arm moves of the arm's collision kind (``ARM``), gravity-compensated, never
  colliding with another of the same robot; an MJCF's own actuators on the arm's or the
  fingers' joints are taken out (the servos here drive them).

MuJoCo names: ``<prefix><description name>`` for joints and bodies, ``<prefix>tool_site`` for
the site (``/f``, ``/t`` its sensors, ``/hold`` the weld), ``<prefix><joint>/servo`` for actuators.
Units: m, rad, kg, s, N.
"""

from __future__ import annotations

import numpy as np

from ...description.arm import ImportedArmSpec
from . import arms as ma
from .build import ARM, ARM_TOUCHES

try:
    import mujoco
except ImportError:  # the engine is optional
    mujoco = None

SITE = "tool_site"  # the tool site's name after the robot's prefix
FINGER_OMEGA = 30.0  # rad/s: the fingers' servo (slower than the joints': light, far travel)
FINGER_MASS = 0.1  # kg: the finger inertia the finger servo's gain is scaled by (at least)


class ImportedArm(ma.Arm):
    """:class:`~coopsim.physics.mujoco.arms.Arm` on a description's bodies (their names are
    the description's under ``prefix``)."""

    def __init__(self, spec: ImportedArmSpec, prefix: str, label: str, elements: list,
                 kp: np.ndarray, kv: np.ndarray, group: int = 0) -> None:
        super().__init__(spec, prefix, label, elements, kp, kv, group)
        self.finger_act = np.zeros(0, dtype=np.int64)

    @property
    def tool(self) -> str:
        """Name of its tool body (the last moving joint's link)."""
        return self.prefix + self.spec.body

    @property
    def site(self) -> str:
        """Name of its tool site (and the stem of its sensors' and weld's names)."""
        return self.prefix + SITE

    def bind(self, model) -> None:
        """Find its joints, servos, bodies, sensors and weld in a newly compiled model."""
        obj = mujoco.mjtObj
        keys = [self.prefix + link.key for link in self.spec.links]
        joints = [_id(model, obj.mjOBJ_JOINT, k) for k in keys]
        self.links = np.array([model.jnt_bodyid[j] for j in joints], dtype=np.int64)
        self.qadr = model.jnt_qposadr[joints].astype(np.int64)
        self.dadr = model.jnt_dofadr[joints].astype(np.int64)
        self.act = np.array([_id(model, obj.mjOBJ_ACTUATOR, k + "/servo") for k in keys],
                            dtype=np.int64)
        self.finger_act = np.array([_id(model, obj.mjOBJ_ACTUATOR, self.prefix + f + "/servo")
                                    for f in self.spec.fingers], dtype=np.int64)
        self.tool_id = _id(model, obj.mjOBJ_BODY, self.tool)
        self.force_adr = model.sensor_adr[_id(model, obj.mjOBJ_SENSOR, self.site + "/f")]
        self.torque_adr = model.sensor_adr[_id(model, obj.mjOBJ_SENSOR, self.site + "/t")]
        self.hold = _id(model, obj.mjOBJ_EQUALITY, self.site + "/hold")

    def restore(self, data) -> None:
        """Its angles, rates and set points, and its fingers' servos open."""
        super().restore(data)
        if len(self.finger_act):
            data.ctrl[self.finger_act] = self.spec.finger_open


def _id(model, kind, name: str) -> int:
    found = mujoco.mj_name2id(model, kind, name)
    if found < 0:
        raise ma.SimulationError(f"the imported arm's {name} is missing from the model")
    return found


def gains(arm: ImportedArmSpec) -> tuple[np.ndarray, np.ndarray]:
    """(dof,) kp (N m/rad) and kv (N m s/rad): the scenario's, else a critically damped loop
    of natural frequency omega on each joint's inertia plus its rotor (as built-in arms)."""
    omega = arm.omega or ma.OMEGA
    inertia = np.array(arm.inertia, float) + armatures(arm)
    kp = np.array(arm.kp, float) if arm.kp else inertia * omega ** 2
    kv = np.array(arm.kv, float) if arm.kv else 2.0 * ma.ZETA * np.sqrt(kp * inertia)
    return kp, kv


def armatures(arm: ImportedArmSpec) -> np.ndarray:
    """(dof,) each joint's rotor inertia through its gear, kg m^2 (built-in arms' rule)."""
    return np.array([max(ma.MIN_ARMATURE, ma.ARMATURE * l.max_effort) for l in arm.links])


def build(spec, arm: ImportedArmSpec, prefix: str, label: str, group: int = 0) -> ImportedArm:
    """Give the attached description's bodies (names under ``prefix``, in the MjSpec
    ``spec``) an arm's servos, tool site, sensors, weld and collision kind."""
    kp, kv = gains(arm)
    driven = {prefix + name for name in [l.key for l in arm.links] + list(arm.fingers)}
    for act in list(spec.actuators):  # an MJCF's own actuators on them would fight the servos
        if act.target in driven:
            spec.delete(act)
    elements: list = []
    for link, rotor, p, v in zip(arm.links, armatures(arm), kp, kv):
        joint = spec.joint(prefix + link.key)
        joint.armature = float(rotor)
        joint.damping = [ma.FRICTION * link.max_effort, 0.0, 0.0]
        joint.actfrclimited, joint.actgravcomp = True, True
        joint.actfrcrange = [-link.max_effort, link.max_effort]
        elements.append(ma.servo(spec, prefix + link.key, link.max_effort, p, v, "/servo"))
    elements += _fingers(spec, arm, prefix)
    bodies = [prefix + name for name in arm.links_moved]
    for name in bodies:
        body = spec.body(name)
        body.gravcomp = 1.0
        for geom in body.geoms:  # visual geoms (0, 0) stay without contacts
            if geom.contype or geom.conaffinity:
                geom.contype, geom.conaffinity = ARM, ARM_TOUCHES
    elements += _tool(spec, arm, prefix)
    root = spec.body(prefix + arm.links_moved[0]).parent
    names = [root.name] + bodies
    for i, a in enumerate(names):  # an arm never collides with itself or what carries it
        for b in names[i + 1:]:
            elements.append(spec.add_exclude(bodyname1=a, bodyname2=b))
    return ImportedArm(arm, prefix, label, elements, kp, kv, group)


def _tool(spec, arm: ImportedArmSpec, prefix: str) -> list:
    """The tool site, the wrist's force and torque sensors and the grasp's weld."""
    site = prefix + SITE
    spec.body(prefix + arm.body).add_site(name=site, pos=list(arm.site[:3]),
                                          quat=list(arm.site[3:]))
    out = [spec.add_sensor(name=site + tail, type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE,
                           objname=site)
           for kind, tail in ((mujoco.mjtSensor.mjSENS_FORCE, "/f"),
                              (mujoco.mjtSensor.mjSENS_TORQUE, "/t"))]
    hold = spec.add_equality(type=mujoco.mjtEq.mjEQ_WELD, objtype=mujoco.mjtObj.mjOBJ_BODY,
                             name1=prefix + arm.body, name2="world", name=site + "/hold",
                             active=False)
    hold.solref = list(ma.GRASP_SOLREF)
    return out + [hold]


def _fingers(spec, arm: ImportedArmSpec, prefix: str) -> list:
    """A position servo on each finger joint, its gain from the grip force over the stroke."""
    out = []
    force = arm.gripper.force if arm.gripper is not None else 0.0
    for name, far, near in zip(arm.fingers, arm.finger_open, arm.finger_closed):
        travel = abs(far - near)
        kp = max(force / travel, FINGER_MASS * FINGER_OMEGA ** 2)
        kv = 2.0 * ma.ZETA * np.sqrt(kp * FINGER_MASS)
        joint = spec.joint(prefix + name)
        joint.actfrclimited, joint.actfrcrange = True, [-force, force]
        out.append(ma.servo(spec, prefix + name, force, kp, kv, "/servo"))
    return out


def start(imported, arm: ImportedArmSpec) -> None:
    """Put the arm's start angles and open fingers into the attached description's state
    (:class:`~coopsim.physics.mujoco.imported.Imported`: what its first compile restores)."""
    at = {name: k for k, name in enumerate(imported.names)}
    for name, value in zip([l.key for l in arm.links] + list(arm.fingers),
                           list(arm.start) + list(arm.finger_open)):
        if name in at:
            imported.qpos[at[name]] = value
