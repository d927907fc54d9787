"""The table's motion checks, one per kind, from ``tests/robots/robot_motion.py``
(imported from ``tests/robots/``; absent, this module raises ImportError and the table leaves
the column to the FK check): each finds what its check needs in the file and its package
(wheel joints, rotor links or lines, the SRDF's standing stance) and turns the check's dict
into a :class:`~robotchecks.Check`.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

import robot_motion  # noqa: F401 -- the motion checks: ImportError when absent

from . import Check

#: Rotor lines of files without rotor links (hector is a + frame, hextilt six
#: tilted rotors; borinot its authors' six rotors).
LINES = {"quadrotor_base.urdf": "plus_lines", "hextilt_flying_arm_5.urdf": "hexa_lines",
         "borinot_flying_arm_2.urdf": "borinot_lines"}


def _check(found: dict) -> Check:
    return Check(found["figure"], bool(found["ok"]))


def _joints(urdf: str) -> list[ET.Element]:
    return list(ET.parse(urdf).getroot().iter("joint"))


def _wheel_pair(urdf: str) -> tuple[list[str], list[str]]:
    """The file's left and right driven wheel joints (continuous, named so; the front pair
    of four)."""
    names = [j.get("name", "") for j in _joints(urdf) if j.get("type") == "continuous"]
    left = [n for n in names if "wheel" in n and "left" in n and "caster" not in n]
    right = [n for n in names if "wheel" in n and "right" in n and "caster" not in n]
    if len(left) > 1 and len(right) > 1:  # four driven wheels (TIAGo Pro): the front pair
        left, right = [n for n in left if "front" in n], [n for n in right if "front" in n]
    return left, right


def planar(urdf: str) -> bool:
    """Whether a wheeled base has no single left and right wheel joint (PR2: its casters'
    joints are fixed in example-robot-data's file): it is driven as ``base planar``."""
    left, right = _wheel_pair(urdf)
    return len(left) != 1 or len(right) != 1


def wheeled(urdf: str) -> Check:
    """Rest, 2 m straight and a 90° turn on the file's left and right wheel joints; a base
    without them (:func:`planar`) on a planar velocity, also 1 m sideways."""
    if planar(urdf):
        return _check(robot_motion.check_planar(urdf))
    left, right = _wheel_pair(urdf)
    return _check(robot_motion.check_wheeled(urdf, left[0], right[0]))


def multirotor(urdf: str) -> Check:
    """Hover at 1 m and the eight, on its rotor links or the rotor lines of :data:`LINES`."""
    links = [l.get("name", "") for l in ET.parse(urdf).getroot().iter("link")]
    rotors = [n for n in links if "rotor" in n.lower() or "propeller" in n.lower()]
    lines = LINES.get(os.path.basename(urdf))
    if lines:
        return _check(robot_motion.check_multirotor(urdf, lines=getattr(robot_motion,
                                                                         lines)()))
    if len(rotors) < 3:
        return Check("", None, "no rotor links: name them with the section's rotor lines "
                               "(docs/files.md)")
    return _check(robot_motion.check_multirotor(urdf, rotors))


def legged(urdf: str) -> Check:
    """Stand 10 s from the package SRDF's ``standing`` stance (else the file's zero posture:
    :func:`_zero_posture`), its nominal height the one the stance puts the base at
    (:func:`stance_height`; the SRDF's own where that is unknown)."""
    for path, state in _standing(urdf):
        stance, height = robot_motion.srdf_stance(path, state)
        keep = robot_motion.described_joints(urdf)
        stance = {k: v for k, v in stance.items() if k in keep}
        kinematic = stance_height(urdf, stance)
        found = robot_motion.check_legged(urdf, stance, kinematic or height)
        said = f"; the SRDF says {height:.3f} m" if kinematic and abs(kinematic - height) \
            > 0.005 else ""
        return Check(found["figure"] + said, bool(found["ok"]))
    return _zero_posture(urdf)


def _zero_posture(urdf: str) -> Check:
    """Without an SRDF stance: stand in the file's own posture (each joint at 0, clipped into
    its limits), from the height its foot spheres give (Laikago), else the height that puts
    its lowest collision point in that posture on the floor (Centauro's wheels, the
    quadruped's contact links: :func:`robot_motion.resting_height`)."""
    from coopsim.formats.description import load_description
    from coopsim.description.robot import DescriptionSpec

    d = load_description(DescriptionSpec(urdf))
    stance = {j.name: min(max(0.0, j.lower), j.upper) for j in d.moving}
    height, how = stance_height(urdf, stance), "its foot spheres on the floor"
    if not height:
        height, link = robot_motion.resting_height(urdf, stance)
        how = f"its lowest collision point ({link}) on the floor"
    found = robot_motion.check_legged(urdf, stance, height)
    return Check(f"{found['figure']}; in its file's zero posture (no SRDF stance), {how}",
                 bool(found["ok"]))


def _standing(urdf: str) -> list[tuple[Path, str]]:
    """(SRDF, state) of the package's standing stances: the SRDF named as the URDF first, its
    ``standing`` state, else its first ``standing_*`` one (ANYmal-Kinova's and B1-Z1's
    ``standing_with_arm_up``: their plain ``standing`` SRDF names no arm joint, which stayed
    at its home on a limit's edge and sagged past it)."""
    stem = Path(urdf).stem
    paths = sorted(Path(urdf).parent.parent.glob("srdf/*.srdf"), key=lambda p: p.stem != stem)
    out = []
    for path in paths:
        names = [g.get("name", "") for g in ET.parse(path).getroot().iter("group_state")]
        names = sorted((n for n in names if n.startswith("standing")),
                       key=lambda n: n != "standing")
        out += [(path, names[0])] if names else []
    return out


def _foot_radii(urdf: str) -> dict[str, tuple]:
    """Link name -> (the centre in its frame, m; the radius, m) of each sphere a link named
    ``*foot*`` collides with."""
    out = {}
    for link in ET.parse(urdf).getroot().iter("link"):
        if "foot" not in link.get("name", "").lower():
            continue
        for shape in link.iter("collision"):
            sphere, origin = shape.find("geometry/sphere"), shape.find("origin")
            if sphere is not None:
                xyz = [float(v) for v in (origin.get("xyz", "0 0 0") if origin is not None
                                          else "0 0 0").split()]
                out.setdefault(link.get("name"), []).append((xyz, float(sphere.get("radius"))))
    return out


def stance_height(urdf: str, stance: dict) -> float | None:
    """The base's height (m) with the feet (spheres on ``*foot*`` links) on the floor at
    ``stance``, by Pinocchio's kinematics of the file; None without foot spheres or ``pin``.
    B1's SRDF says 0.55 m where its stance reaches 0.528 m: the feet would hang 2.2 cm up."""
    radii = _foot_radii(urdf)
    try:
        import pinocchio as pin
    except ImportError:
        return None
    if not radii:
        return None
    model = pin.buildModelFromUrdf(urdf)
    data, q = model.createData(), pin.neutral(model)
    for name, value in stance.items():
        if model.existJointName(name) and model.joints[model.getJointId(name)].nq == 1:
            q[model.joints[model.getJointId(name)].idx_q] = value
    pin.framesForwardKinematics(model, data, q)
    lowest = [float(data.oMf[model.getFrameId(name)].act(np.array(xyz))[2]) - radius
              for name, spheres in radii.items() if model.existFrame(name)
              for xyz, radius in spheres]
    return -min(lowest) if lowest else None


def held(urdf: str) -> Check:
    """Humanoids, hands, benches: the base fixed, every held joint to a target."""
    return _check(robot_motion.check_humanoid(urdf))
