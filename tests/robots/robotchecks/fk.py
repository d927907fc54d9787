"""Forward kinematics against Pinocchio's: every link's pose from coopsim's ``links`` document
(what clients draw from: :func:`coopsim.model.linkposes.link_poses`, MuJoCo's model of the file
as coopsim loads it) against Pinocchio's ``framesForwardKinematics`` of the same URDF (``pin``,
the independent oracle), at random joint positions within the file's limits.

Goal (arms): <= 1 mm and <= 0.1° on every link, every configuration.
"""

from __future__ import annotations

import math

import numpy as np

from . import Check

SAMPLES = 20  # random configurations per robot
SEED = 52
GOAL_MM, GOAL_DEG = 1.0, 0.1


def load(urdf: str):
    """The checked :class:`coopsim.description.robot.Description` of ``urdf``, as a scenario's
    ``description`` key loads it (repairs warned, meshes read)."""
    from coopsim.formats.description import load_description
    from coopsim.description.robot import DescriptionSpec
    return load_description(DescriptionSpec(urdf))


def _configurations(d, rng: np.random.Generator, n: int) -> list[dict[str, float]]:
    """``n`` joint positions (name -> rad or m) of ``d``'s moving joints within limits."""
    out = []
    for _ in range(n):
        q = {}
        for j in d.moving:
            lo, hi = j.lower, j.upper
            if not (math.isfinite(lo) and math.isfinite(hi)) or j.kind == "continuous":
                lo, hi = (-math.pi, math.pi) if j.kind != "prismatic" else (-0.1, 0.1)
            q[j.name] = float(rng.uniform(lo, hi))
        out.append(q)
    return out


def _coopsim_poses(doc: dict, q: dict) -> dict:
    """Link name -> (xyz, quat wxyz) from the ``links`` document at ``q``: each joint's
    column named by the joint itself, so joints past the 32 streamed columns move too."""
    from coopsim.model.linkposes import link_poses
    named = {**doc, "links": [{**link, "moving": [{**joint, "column": joint["name"]}
                                                  for joint in link["moving"]]}
                              for link in doc["links"]]}
    return link_poses(named, (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0), q)


def _pin_poses(pin, model, data, q: dict) -> dict:
    """Link name -> (xyz, quat wxyz) from Pinocchio, its joints set by name."""
    vector = pin.neutral(model)
    for name, value in q.items():
        if not model.existJointName(name):
            continue
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 2:  # a continuous joint: (cos, sin)
            vector[joint.idx_q:joint.idx_q + 2] = (math.cos(value), math.sin(value))
        elif joint.nq == 1:
            vector[joint.idx_q] = value
    pin.framesForwardKinematics(model, data, vector)
    out = {}
    for k, frame in enumerate(model.frames):
        if frame.type == pin.FrameType.BODY:
            m = data.oMf[k]
            x, y, z, w = pin.Quaternion(m.rotation).coeffs()
            out[frame.name] = (np.array(m.translation), np.array((w, x, y, z)))
    return out


def errors(urdf: str, samples: int = SAMPLES, seed: int = SEED) -> tuple[float, float, int]:
    """(largest position error mm, largest angle error deg, links compared) of coopsim's FK
    against Pinocchio's over ``samples`` random configurations.

    Raises:
        ImportError: ``pin`` is not installed.
    """
    import pinocchio as pin

    from coopsim.physics.mujoco.links import links_document
    d = load(urdf)
    doc = links_document(d)
    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    worst_mm = worst_deg = 0.0
    compared = 0
    for q in _configurations(d, np.random.default_rng(seed), samples):
        ours, theirs = _coopsim_poses(doc, q), _pin_poses(pin, model, data, q)
        common = [name for name in ours if name in theirs]
        compared = max(compared, len(common))
        for name in common:
            (p, a), (p2, a2) = ours[name], theirs[name]
            worst_mm = max(worst_mm, 1000 * float(np.linalg.norm(p - p2)))
            dot = min(1.0, abs(float(np.dot(a / np.linalg.norm(a), a2))))
            worst_deg = max(worst_deg, math.degrees(2 * math.acos(dot)))
    return worst_mm, worst_deg, compared


def check(urdf: str) -> Check:
    """FK vs Pinocchio (:func:`errors`), ok within :data:`GOAL_MM` / :data:`GOAL_DEG`."""
    try:
        mm, deg, n = errors(urdf)
    except ImportError:
        return Check("", None, "pin is not installed (pip install pin)")
    if n == 0:
        return Check("FK: no link in common", False, "Pinocchio and coopsim share no link name")
    return Check(f"FK {mm:.3g} mm / {deg:.2g}° ({n} links)", mm <= GOAL_MM and deg <= GOAL_DEG)
