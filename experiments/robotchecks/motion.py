"""The table's motion checks, one per kind, from h52-motion's ``experiments/robot_motion.py``
(imported from ``experiments/``; absent, this module raises ImportError and the table leaves
the column to the FK check): each finds what its check needs in the file and its package
(wheel joints, rotor links or lines, the SRDF's standing stance) and turns the check's dict
into a :class:`~experiments.robotchecks.Check`.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import robot_motion  # noqa: F401 -- h52-motion's checks: ImportError when absent

from . import Check

#: Rotor lines of files without rotor links (h52-motion: hector is a + frame, hextilt six
#: tilted rotors).
LINES = {"quadrotor_base.urdf": "plus_lines", "hextilt_flying_arm_5.urdf": "hexa_lines"}


def _check(found: dict) -> Check:
    return Check(found["figure"], bool(found["ok"]))


def _joints(urdf: str) -> list[ET.Element]:
    return list(ET.parse(urdf).getroot().iter("joint"))


def wheeled(urdf: str) -> Check:
    """Rest, 2 m straight and a 90° turn on the file's left and right wheel joints."""
    names = [j.get("name", "") for j in _joints(urdf) if j.get("type") == "continuous"]
    left = [n for n in names if "wheel" in n and "left" in n and "caster" not in n]
    right = [n for n in names if "wheel" in n and "right" in n and "caster" not in n]
    if len(left) > 1 and len(right) > 1:  # four driven wheels (TIAGo Pro): the front pair
        left, right = [n for n in left if "front" in n], [n for n in right if "front" in n]
    if len(left) != 1 or len(right) != 1:
        return Check("", None, "no single left and right wheel joint: a caster base (PR2) is "
                               "not a differential drive")
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
    """Stand 10 s from the package SRDF's ``standing`` stance."""
    srdf = sorted(Path(urdf).parent.parent.glob("srdf/*.srdf"))
    for path in srdf:
        try:
            stance, height = robot_motion.srdf_stance(path)
        except ValueError:
            continue
        keep = robot_motion.described_joints(urdf)
        return _check(robot_motion.check_legged(urdf, {k: v for k, v in stance.items()
                                                       if k in keep}, height))
    return Check("", None, "its package has no SRDF standing stance")


def held(urdf: str) -> Check:
    """Humanoids, hands, benches: the base fixed, every held joint to a target."""
    return _check(robot_motion.check_humanoid(urdf))
