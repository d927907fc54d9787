"""The held joints of an attached description on the ``mujoco`` engine
(:mod:`coopsim.description.servos`): a position servo on each, its target held in the
actuator's control, kept across recompiles by the :class:`~coopsim.physics.mujoco.imported.
Imported` it belongs to.

Each servo is MuJoCo's position actuator (torque = kp (q* - q) - kv qd, capped at the file's
effort) named ``<prefix><joint>/hold``; the joint gets a rotor armature as a built-in arm's
(:data:`~coopsim.physics.mujoco.arms.ARMATURE` per N m of effort, at least
:data:`~coopsim.physics.mujoco.arms.MIN_ARMATURE`); ``kv`` is set at each compile to damp the
loop critically on the joint's inertia there (``2 sqrt(kp I)``, I from MuJoCo's mass matrix at
the model's zero configuration, armature included). The world steps with MuJoCo's implicit
integrator when any servo exists (the damping is then unconditionally stable).
Units: rad or m, N m or N, s.
"""

from __future__ import annotations

import math

import numpy as np

from . import arms as ma

try:
    import mujoco
except ImportError:  # the engine is optional
    mujoco = None

TAIL = "/hold"  # an actuator's name after the robot's prefix and the joint's name


def build(spec, imported) -> list:
    """Add the servos of ``imported.servos`` (its held joints) to the world ``spec``; their
    start positions go into the state its first compile restores. Returns the actuators."""
    out = []
    at = {name: k for k, name in enumerate(imported.names)}
    for servo in imported.servos:
        joint = spec.joint(imported.prefix + servo.name)
        effort = servo.effort if math.isfinite(servo.effort) else 1e9
        joint.armature = max(float(joint.armature), ma.MIN_ARMATURE,
                             ma.ARMATURE * (servo.effort if math.isfinite(servo.effort) else 0))
        out.append(ma.servo(spec, imported.prefix + servo.name, effort, servo.kp, 0.0, TAIL))
        if servo.name in at:
            imported.qpos[at[servo.name]] = servo.home
    imported.target = np.array([s.home for s in imported.servos], dtype=float)
    if imported.servos:
        out += _no_self_contacts(spec, imported)
    return out


def _no_self_contacts(spec, imported) -> list:
    """Exclude contacts between the robot's own bodies and with its mount: a held joint is
    driven where its file puts it, and links modelled touching (a hand's fingers, a leg's
    thigh and hip, a fixed base's mount inside the pelvis) would fight its servo."""
    bodies = [b.name for b in imported.root.find_all(mujoco.mjtObj.mjOBJ_BODY)]
    names = [imported.root.name] + [b for b in bodies if b != imported.root.name]
    if imported.mount is not None:  # what carries it (a fixed base's mount is inside it)
        names.insert(0, imported.mount.name)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            out.append(spec.add_exclude(bodyname1=a, bodyname2=b))
    return out


def bind(model, imported) -> None:
    """Find the servos' actuators in a new model and damp each critically."""
    if not imported.servos:
        imported.held = np.zeros(0, dtype=np.int64)
        return
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR,
                             imported.prefix + s.name + TAIL) for s in imported.servos]
    imported.held = np.array(ids, dtype=np.int64)
    dofs = model.jnt_dofadr[model.actuator_trnid[imported.held, 0]]
    inertia = model.dof_M0[dofs]
    kp = np.array([s.kp for s in imported.servos])
    model.actuator_biasprm[imported.held, 2] = -2.0 * ma.ZETA * np.sqrt(kp * inertia)


def restore(data, imported) -> None:
    """The held targets back into a new model's controls."""
    if len(getattr(imported, "held", ())):
        data.ctrl[imported.held] = imported.target


def set_targets(data, imported, targets) -> None:
    """Hold ``targets`` (one per servo, rad or m; the caller checked the limits)."""
    imported.target = np.asarray(targets, dtype=float)[:len(imported.servos)].copy()
    restore(data, imported)
