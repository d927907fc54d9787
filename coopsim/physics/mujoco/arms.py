"""Arms in the ``mujoco`` engine (:mod:`coopsim.physics.mujoco.engine`): building an
:class:`~coopsim.model.arm.ArmSpec` as a MuJoCo kinematic chain, its joint servos, its state,
the wrist's force-torque sensor and the grasp (an object welded to the flange).

* Bodies: a *pedestal* body fixed to the body the arm is mounted on (``ArmSpec.base``: a static
  pedestal or a mobile chassis) at ``mount``/``mount_yaw``, drawn and collided as a cylinder of
  ``base_radius`` from that body's origin up to the mount (``base_mass`` kg), then one body per
  :class:`~coopsim.model.arm.LinkSpec` nested in the previous one at ``origin``/``rpy`` with
  one hinge (``axis``, ``limits`` as a limited range) and a capsule of the link's radius and
  mass from the joint to the next joint's origin (the last to the flange), then a *tool* body
  at the last joint's origin carrying the gripper's two finger boxes (between the flange and
  the tool point, ``stroke`` apart) and a site at the tool point. The bodies of one arm never
  collide with each other nor with the body they stand on (MuJoCo excludes); they collide with
  objects, the floor, walls, robots and other arms.
* The servo is MuJoCo's own: each joint has a general actuator, torque = kp (q* - q) +
  kv (qd* - qd), capped at +-``max_effort`` (``forcerange``), with ``ctrl`` = q* + kv/kp qd*,
  plus gravity compensation of the arm's own bodies (``gravcomp`` routed through the actuator,
  ``actgravcomp``, so the joint's total drive torque is capped at ``max_effort`` too: a
  blocked joint reads +-max_effort). The gains give each joint a critically damped loop of
  natural frequency :data:`OMEGA` on its effective inertia at the start (links beyond it,
  the rotor's ``armature``). A world with arms uses MuJoCo's ``implicitfast`` integrator, so
  the damping term is implicit and stays stable at any substep up to ``MAX_SUBSTEP``. A set
  point acts from the next substep on; with gravity compensated a still arm holds its pose to
  well within a milliradian, and a held load of ``m`` kg at ``l`` m sags by m g l / kp rad.
* The wrist's wrench is MuJoCo's force and torque sensors at the tool site (the interaction
  between the last link and the tool body, what the tool side and everything welded or
  pressing on it put on the flange), in the tool frame (the last joint's axes at the tool
  point), negated so it reads the load on the flange: a weight hanging below the tool
  pulls along -z world.
* A grasp is a weld equality between the tool body and the object, at their relative pose at
  the moment of the grasp (nothing jumps). Every arm is built with one inactive weld (its
  *hold*, tool to world); a grasp points it at the object, writes the relative pose and
  activates it, and a release deactivates it: both at run time, in the model's and data's
  arrays, with no recompile (a recompile of 100 arms took 50-90 ms a grasp). While held, the
  object's geoms are of the ``HELD`` kind (:mod:`coopsim.physics.mujoco.build`): it touches
  the floor, walls, objects and robots but no arm, so the fingers closed on it do not fight
  the weld (nor does another arm's link passing through it). A recompile for another reason
  (an object inserted) applies the grasps again.

Frames and units: metres, kilograms, seconds, radians, newtons; link frames as in
:func:`coopsim.model.arm.frames`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...model.arm import MAX_JOINTS, ArmSpec, frames, rpy_matrix
from ...model.errors import SimulationError
from .build import ARM, ARM_TOUCHES, HELD, SOLID

try:
    import mujoco
except ImportError:  # the engine is optional: mujoco.engine says how to install it
    mujoco = None

OMEGA = 60.0  # rad/s: each joint servo's natural frequency (a 17 ms time constant)
ZETA = 1.0  # the servo's damping ratio (critically damped)
ARMATURE = 2e-3  # s^2: rotor inertia through the gear, kg m^2 per N m of peak torque
MIN_ARMATURE = 0.005  # kg m^2: a small wrist drive's rotor inertia, at least
FRICTION = 0.005  # s: viscous joint friction, N m s/rad per N m of peak torque
FINGER_MASS = 0.05  # kg, each finger
FINGER_SIZE = (0.02, 0.01)  # m, a finger's depth (tool x) and thickness (tool y)
GRASP_SOLREF = (0.01, 1.0)  # s, damping ratio: a stiff weld (>= 2 substeps, MuJoCo's floor)


class Arm:
    """The engine's handle of one arm: its MuJoCo names, where its joints are in the current
    model, and what it keeps across compiles (angles, rates, set points).

    Attributes:
        spec: The arm.
        label: Who it belongs to, for messages ("robot r1's arm arm").
        kp, kv: (dof,) servo gains, N m/rad and N m s/rad.
        ctrl: (dof,) its servos' set points as MuJoCo's ``ctrl``, q* + kv/kp qd* (rad): what a
            compile carries over.
        group: Its assembly's sensing group (the ray caster's: its own robot's rays pass).
        row: Its row in the engine's current arm table (-1: none yet).
        grasps: The :class:`Grasp` es it holds.
    """

    def __init__(self, spec: ArmSpec, prefix: str, label: str, elements: list,
                 kp: np.ndarray, kv: np.ndarray, group: int = 0) -> None:
        self.spec, self.prefix, self.label, self.elements = spec, prefix, label, elements
        self.group = group
        self.radii = np.array([link.radius for link in spec.links])
        self.kp, self.kv = kp, kv
        self.q, self.qd = spec.start.copy(), np.zeros(spec.dof)
        self.ctrl = self.q.copy()  # hold the start
        self.row, self.grasps = -1, []
        self.qadr = self.dadr = self.act = self.links = np.zeros(0, dtype=np.int64)
        self.tool_id = self.force_adr = self.torque_adr = self.hold = -1

    @property
    def tool(self) -> str:
        """Name of its tool body."""
        return f"{self.prefix}/tool"

    def bind(self, model) -> None:
        """Find its joints, actuators, bodies and sensors in a newly compiled model."""
        keys = [f"{self.prefix}/{link.key}" for link in self.spec.links]
        joints = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, k) for k in keys]
        self.links = np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, k)
                               for k in keys], dtype=np.int64)
        self.qadr = model.jnt_qposadr[joints].astype(np.int64)
        self.dadr = model.jnt_dofadr[joints].astype(np.int64)
        self.act = np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, k)
                             for k in keys], dtype=np.int64)
        self.tool_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, self.tool)
        sensor = mujoco.mjtObj.mjOBJ_SENSOR
        self.force_adr = model.sensor_adr[mujoco.mj_name2id(model, sensor, self.tool + "/f")]
        self.torque_adr = model.sensor_adr[mujoco.mj_name2id(model, sensor, self.tool + "/t")]
        self.hold = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_EQUALITY, self.tool + "/hold")

    def save(self, data) -> None:
        """Keep its joint angles, rates and set points (the next compile restores them)."""
        if len(self.qadr):
            self.q, self.qd = data.qpos[self.qadr].copy(), data.qvel[self.dadr].copy()
            self.ctrl = data.ctrl[self.act].copy()

    def restore(self, data) -> None:
        """Put its angles, rates and servo set points into a new model's data."""
        data.qpos[self.qadr], data.qvel[self.dadr] = self.q, self.qd
        data.ctrl[self.act] = self.ctrl

    def rehold(self, model, data) -> None:
        """Apply its grasps to a new model (after every body found itself in it)."""
        for held in self.grasps:
            held.apply(model, data)


class Grasp:
    """An object held by an arm (what :meth:`MujocoEngine.attach` returns): the body, its pose
    in the tool body's frame (``rel`` m, ``qrel`` quaternion) and its geoms' own collision
    bits (``bits``: contype, conaffinity), put back on release."""

    def __init__(self, arm: Arm, body, rel: np.ndarray, qrel: np.ndarray) -> None:
        self.arm, self.body, self.rel, self.qrel = arm, body, rel, qrel
        self.bits: tuple | None = None

    def _geoms(self, model) -> slice:
        start = model.body_geomadr[self.body.id]
        return slice(start, start + model.body_geomnum[self.body.id])

    def apply(self, model, data) -> None:
        """Point the arm's hold at the body, at the grasp's relative pose, and activate it;
        the body's geoms become ``HELD``."""
        eq = self.arm.hold
        model.eq_obj2id[eq] = self.body.id
        model.eq_data[eq] = 0.0  # anchor at the tool body's origin
        model.eq_data[eq, 3:6], model.eq_data[eq, 6:10] = self.rel, self.qrel
        model.eq_data[eq, 10] = 1.0  # torquescale
        data.eq_active[eq] = 1
        geoms = self._geoms(model)
        self.bits = (model.geom_contype[geoms].copy(), model.geom_conaffinity[geoms].copy())
        model.geom_contype[geoms] = HELD
        model.geom_conaffinity[geoms] = self.bits[1] & ~ARM

    def drop(self, model, data) -> None:
        """Deactivate the hold and give the body's geoms their own bits back."""
        eq = self.arm.hold
        data.eq_active[eq] = 0
        model.eq_obj2id[eq] = 0  # the world, as built
        if self.bits is not None and self.body.id >= 0:
            geoms = self._geoms(model)
            model.geom_contype[geoms], model.geom_conaffinity[geoms] = self.bits
        self.bits = None


# -- building --------------------------------------------------------------------------------------

def build(spec, arm: ArmSpec, base, prefix: str, label: str) -> Arm:
    """Add ``arm`` to the MjSpec ``spec`` on the :class:`~coopsim.physics.mujoco.build.Body`
    ``base`` (the body its ``base`` key names); its MuJoCo names start with ``prefix``."""
    pedestal = _pedestal(base.element, arm, prefix)
    parent, names = pedestal, [base.name, pedestal.name]
    inertia = effective_inertia(arm)
    kp = inertia * OMEGA ** 2
    kv = 2.0 * ZETA * inertia * OMEGA
    elements: list = []
    for i, link in enumerate(arm.links):
        parent = _link(parent, arm, i, f"{prefix}/{link.key}")
        names.append(parent.name)
        elements.append(_actuator(spec, parent.name, link.max_effort, kp[i], kv[i]))
    tool = parent.add_body(name=f"{prefix}/tool")
    tool.gravcomp = 1.0
    names.append(tool.name)
    if arm.gripper is not None:
        _fingers(tool, arm)
    tool.add_site(name=f"{prefix}/tool", pos=list(arm.tool))
    for kind, tail in ((mujoco.mjtSensor.mjSENS_FORCE, "/f"),
                       (mujoco.mjtSensor.mjSENS_TORQUE, "/t")):
        elements.append(spec.add_sensor(name=tool.name + tail, type=kind,
                                        objtype=mujoco.mjtObj.mjOBJ_SITE, objname=tool.name))
    hold = spec.add_equality(type=mujoco.mjtEq.mjEQ_WELD, objtype=mujoco.mjtObj.mjOBJ_BODY,
                             name1=tool.name, name2="world", name=tool.name + "/hold",
                             active=False)  # a grasp points it at the object (Grasp.apply)
    hold.solref = list(GRASP_SOLREF)
    elements.append(hold)
    for i, a in enumerate(names):  # an arm never collides with itself or what carries it
        for b in names[i + 1:]:
            elements.append(spec.add_exclude(bodyname1=a, bodyname2=b))
    elements.append(pedestal)
    return Arm(arm, prefix, label, elements, kp, kv, base.group)


def _pedestal(base, arm: ArmSpec, prefix: str):
    """The body at the arm's mount, with a cylinder from the carrying body's origin up to it."""
    yaw = arm.mount_yaw
    body = base.add_body(name=f"{prefix}/pedestal", pos=list(arm.mount),
                         quat=[math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])
    height = arm.mount[2]
    if height > 1e-6:
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[arm.base_radius, height / 2, 0],
                      pos=[0.0, 0.0, -height / 2], mass=arm.base_mass, contype=SOLID,
                      conaffinity=SOLID)
    return body


def _link(parent, arm: ArmSpec, i: int, name: str):
    """Link ``i``: its body in ``parent`` at the joint's origin, its hinge, its capsule."""
    link = arm.links[i]
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, rpy_matrix(link.rpy).ravel())
    body = parent.add_body(name=name, pos=list(link.origin), quat=quat.tolist())
    body.gravcomp = 1.0  # compensated through the actuator (actgravcomp below)
    armature = max(MIN_ARMATURE, ARMATURE * link.max_effort)
    body.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_HINGE, axis=list(link.axis),
                   limited=True, range=list(link.limits), armature=armature,
                   damping=FRICTION * link.max_effort, actfrclimited=True,
                   actfrcrange=[-link.max_effort, link.max_effort], actgravcomp=True)
    end = np.asarray(arm.links[i + 1].origin if i + 1 < arm.dof else _flange(arm), float)
    if np.linalg.norm(end) > 1e-6:
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, fromto=[0, 0, 0, *end.tolist()],
                      size=[link.radius, 0, 0], mass=link.mass, contype=ARM,
                      conaffinity=ARM_TOUCHES)
    else:  # the next joint sits at this one (a wrist): a ball
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[link.radius, 0, 0],
                      mass=link.mass, contype=ARM, conaffinity=ARM_TOUCHES)
    return body


def _flange(arm: ArmSpec) -> tuple:
    """The flange in the last joint's frame: the tool point, less the fingers' length along
    z when there is a gripper."""
    x, y, z = arm.tool
    return (x, y, z - arm.gripper.length) if arm.gripper is not None else (x, y, z)


def _fingers(tool, arm: ArmSpec) -> None:
    """Two finger boxes from the flange to the tool point, ``stroke`` apart along y."""
    g = arm.gripper
    fx, fy, fz = _flange(arm)
    depth, thick = FINGER_SIZE
    for side in (-1.0, 1.0):
        tool.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[depth / 2, thick / 2, g.length / 2],
                      pos=[fx, fy + side * (g.stroke + thick) / 2, fz + g.length / 2],
                      mass=FINGER_MASS, contype=ARM, conaffinity=ARM_TOUCHES)


def _actuator(spec, joint: str, effort: float, kp: float, kv: float):
    """Joint ``joint``'s servo: torque kp (ctrl - q) - kv qd, within +-``effort`` N m."""
    return servo(spec, joint, effort, kp, kv)


def servo(spec, joint: str, effort: float, kp: float, kv: float, tail: str = ""):
    """:func:`_actuator` named ``joint + tail`` (an imported arm's: coopsim.physics.
    mujoco.imported_arm)."""
    act = spec.add_actuator(name=joint + tail, target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    act.gaintype, act.biastype = mujoco.mjtGain.mjGAIN_FIXED, mujoco.mjtBias.mjBIAS_AFFINE
    act.gainprm[0] = kp
    act.biasprm[0], act.biasprm[1], act.biasprm[2] = 0.0, -kp, -kv
    act.forcelimited, act.forcerange = True, [-effort, effort]
    act.ctrllimited = False
    return act


def effective_inertia(arm: ArmSpec) -> np.ndarray:
    """(dof,) each joint's inertia about its axis at the arm's start, kg m^2: the links beyond
    it as point masses at their middles, the gripper at the tool point, and the rotor's
    armature (what the servo gains are scaled by)."""
    f = frames(arm, arm.start)
    ends = [f[i + 2, :3, 3] if i + 1 < arm.dof else f[-1, :3, 3] for i in range(arm.dof)]
    points = [(l.mass, (f[i + 1, :3, 3] + ends[i]) / 2) for i, l in enumerate(arm.links)]
    if arm.gripper is not None:
        points.append((2 * FINGER_MASS, f[-1, :3, 3]))
    out = np.empty(arm.dof)
    for i, link in enumerate(arm.links):
        axis = f[i + 1, :3, :3] @ np.asarray(link.axis, float)
        origin = f[i + 1, :3, 3]
        total = max(MIN_ARMATURE, ARMATURE * link.max_effort)
        for j, (m, p) in enumerate(points):
            if j >= i:  # links beyond it (and the gripper, last)
                r = p - origin
                total += m * float(r @ r - (r @ axis) ** 2)
        out[i] = total
    return out


def outlines(table: "ArmTable", data, top: float) -> np.ndarray:
    """(C, 4) x, y, link radius, group of the arms' joints reaching into the ray caster's
    slice (lower than ``top`` m): the floor projection a lidar or sonar on the floor sees of
    an arm (its links' ends; the pedestal is its robot's)."""
    pos = data.xpos[table.links]
    low = pos[:, 2] - table.radii <= top
    return np.column_stack([pos[low, :2], table.radii[low], table.groups[low]])


# -- grasps ----------------------------------------------------------------------------------------

def grasp(model, data, arm: Arm, body) -> Grasp:
    """Weld the free :class:`~coopsim.physics.mujoco.build.Body` ``body`` to ``arm``'s tool
    body at their relative pose in ``data`` now, through the arm's hold (no recompile)."""
    p1, q1 = data.xpos[arm.tool_id], data.xquat[arm.tool_id]
    p2, q2 = data.xpos[body.id], data.xquat[body.id]
    rel = data.xmat[arm.tool_id].reshape(3, 3).T @ (p2 - p1)
    inv, qrel = np.zeros(4), np.zeros(4)
    mujoco.mju_negQuat(inv, q1)
    mujoco.mju_mulQuat(qrel, inv, q2)
    held = Grasp(arm, body, rel, qrel)
    held.apply(model, data)
    arm.grasps.append(held)
    return held


def release(model, data, held: Grasp) -> None:
    """Let go of a grasp (``model`` None: the model is being rebuilt without it anyway)."""
    if model is not None and held.arm.hold >= 0:
        held.drop(model, data)
    if held in held.arm.grasps:
        held.arm.grasps.remove(held)


def remove(spec, arm: Arm) -> None:
    """Take an arm (its grasps, actuators, sensors, exclusions and bodies) out of the model."""
    arm.grasps.clear()  # the model is rebuilt without the arm and its hold
    for element in arm.elements:
        spec.delete(element)
    arm.elements, arm.qadr = [], np.zeros(0, dtype=np.int64)


# -- the arms of one layout, batched ---------------------------------------------------------------

class _Joints(NamedTuple):
    """The joints of some arms of an :class:`ArmTable`, flat: where each sits in a
    (len(rows) * MAX_JOINTS) block (``local``), its actuator,
    ``qpos`` and ``qvel`` addresses, limits (rad) and kv/kp (s)."""

    local: np.ndarray
    act: np.ndarray
    qadr: np.ndarray
    dadr: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    ratio: np.ndarray


class ArmTable:
    """Index arrays of every arm of the current model, in one table: batched reads and set
    points for :meth:`MujocoEngine.arm_state` and friends (the set points live in MuJoCo's
    ``ctrl``; :meth:`Arm.save` keeps them across compiles)."""

    def __init__(self, arms: list[Arm]) -> None:
        k = len(arms)
        self.mask = np.zeros((k, MAX_JOINTS), dtype=bool)
        self.qadr = np.zeros((k, MAX_JOINTS), dtype=np.int64)
        self.dadr, self.act = self.qadr.copy(), self.qadr.copy()
        self.lower, self.upper = np.zeros((k, MAX_JOINTS)), np.zeros((k, MAX_JOINTS))
        self.ratio = np.zeros((k, MAX_JOINTS))
        self.sensors = np.zeros((k, 6), dtype=np.int64)
        self._last: tuple = (None, None)
        self._rows: dict = {}  # id of a tuple of handles -> (the tuple, its rows)
        # every link of every arm, flat: the ray caster's outlines
        self.links = np.concatenate([a.links for a in arms] + [np.zeros(0, np.int64)])
        self.radii = np.concatenate([a.radii for a in arms] + [np.zeros(0)])
        self.groups = np.concatenate([np.full(a.spec.dof, float(a.group)) for a in arms]
                                     + [np.zeros(0)])
        for row, arm in enumerate(arms):
            dof = arm.spec.dof
            self.mask[row, :dof] = True
            self.qadr[row, :dof], self.dadr[row, :dof] = arm.qadr, arm.dadr
            self.act[row, :dof] = arm.act
            self.lower[row, :dof], self.upper[row, :dof] = arm.spec.lower, arm.spec.upper
            self.ratio[row, :dof] = arm.kv / arm.kp
            self.sensors[row] = np.r_[arm.force_adr + np.arange(3), arm.torque_adr + np.arange(3)]
            arm.row = row

    def rows(self, handles) -> np.ndarray:
        """Table rows of arm handles (a tuple of them: found once, the caller asks with the
        same tuple every step, :class:`coopsim.sim.access.Access`)."""
        held = self._rows.get(id(handles))
        if held is not None and held[0] is handles:
            return held[1]
        try:
            rows = np.array([h.row for h in handles], dtype=np.int64)
        except AttributeError:
            raise SimulationError("an arm call got a handle that is not an arm's "
                                  "(Handles.arms values)") from None
        if isinstance(handles, tuple):  # immutable: its rows stay its rows
            if len(self._rows) >= 16:
                self._rows.clear()
            rows.setflags(write=False)
            self._rows[id(handles)] = (handles, rows)  # held: its id stays its own
        return rows

    def state(self, data, rows: np.ndarray) -> np.ndarray:
        """(len(rows), MAX_JOINTS, 3) angle, rate and drive torque (0 beyond each arm)."""
        at = self._indices(rows)
        out = np.zeros((len(rows) * MAX_JOINTS, 3))
        out[at.local, 0] = data.qpos[at.qadr]
        out[at.local, 1] = data.qvel[at.dadr]
        out[at.local, 2] = data.qfrc_actuator[at.dadr]
        return out.reshape(len(rows), MAX_JOINTS, 3)

    def set(self, data, rows: np.ndarray, q: np.ndarray, qd: np.ndarray) -> None:
        """Hold set points ``q``, ``qd`` (len(rows), MAX_JOINTS) for arms ``rows``: angles
        clipped to the limits, the servos' ``ctrl`` written (columns beyond an arm's joints
        ignored)."""
        at = self._indices(rows)
        q = np.asarray(q, float).reshape(-1)[at.local]
        qd = np.asarray(qd, float).reshape(-1)[at.local]
        if not math.isfinite(q @ q + qd @ qd):  # NaN, infinite (or beyond 1e154)
            raise SimulationError("an arm's set point is not a number (NaN or infinite)")
        q = np.minimum(np.maximum(q, at.lower), at.upper)
        data.ctrl[at.act] = q + at.ratio * qd

    def _indices(self, rows: np.ndarray) -> _Joints:
        """The joints of arms ``rows`` as flat arrays (:class:`_Joints`); the last rows'
        kept (a module reads and sets the same arms every step)."""
        key = rows.tobytes()
        if self._last[0] != key:
            mask = self.mask[rows]
            local = np.flatnonzero(mask)
            self._last = (key, _Joints(local, self.act[rows][mask], self.qadr[rows][mask],
                                       self.dadr[rows][mask], self.lower[rows][mask],
                                       self.upper[rows][mask], self.ratio[rows][mask]))
        return self._last[1]

    def wrench(self, data, rows: np.ndarray) -> np.ndarray:
        """(len(rows), 6) the load on each flange: force N, torque N m, tool frame."""
        return -data.sensordata[self.sensors[rows]]
