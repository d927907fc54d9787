"""Repairs of a description's non-physical masses and inertias, the ones MuJoCo's compiler
offers as options (``boundmass``, ``boundinertia``; ``balanceinertia`` is set for every URDF
by :data:`coopsim.description.robotxml.URDF_COMPILER`), made here so that each is named in a
warning with the link and its line (docs/files.md "Repaired on load").

Description packages ship such values on small parts: TIAGo's antenna (1 mg, a principal
moment of -3.5e-08 kg m^2, a rounding of CAD output), ANYmal's and Go1's ``base`` (moments of
1e-22 with one negative), iCub's head (a zero moment), Romeo's fingers (mass 0) and the
``*_virtual`` links of a human model that chain three revolute joints into a ball joint (no
``<inertial>`` at all). MuJoCo refuses every one of them; a robot that cannot load for a
1 mg antenna is of no use, so each is repaired:

* an inertia that is not positive definite keeps its principal axes, each principal moment
  raised to ``max(RELATIVE * largest, BOUND_INERTIA)`` (kg m^2);
* a link that moves on a joint with a zero mass gets :data:`BOUND_MASS` (kg), with a zero or
  missing inertia :data:`BOUND_INERTIA` about each axis.

What is not finite, or a negative mass, is still refused (a lie, not a rounding).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

BOUND_MASS = 1e-3  # kg: the mass a moving link without one is given (MuJoCo's boundmass)
BOUND_INERTIA = 1e-7  # kg m^2: the least principal moment a repair leaves (boundinertia)
RELATIVE = 1e-2  # a repaired moment is at least this part of the link's largest one
ZERO_INERTIA = 1e-12  # kg m^2: principal moments all below this are a massless frame's
MIN_MOMENT = 1e-15  # kg m^2: a principal moment at or below this MuJoCo takes as not > 0


@dataclass(frozen=True)
class Repair:
    """One link's repaired inertial.

    Attributes:
        link: The link's name.
        line: Line of the element repaired (the ``<inertia>``, ``<mass>`` or ``<link>``).
        mass: The mass now, kg.
        inertia: (ixx, ixy, ixz, iyy, iyz, izz) now, kg m^2, in the inertial frame.
        why: What was wrong and what was done (one clause, for the warning).
    """

    link: str
    line: int
    mass: float
    inertia: tuple[float, ...]
    why: str


def _matrix(inertia: tuple) -> np.ndarray:
    xx, xy, xz, yy, yz, zz = inertia
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)


def _six(matrix: np.ndarray) -> tuple[float, ...]:
    m = matrix
    return tuple(float(v) for v in (m[0, 0], m[0, 1], m[0, 2], m[1, 1], m[1, 2], m[2, 2]))


def _moments(values) -> str:
    return ", ".join(f"{v:.3g}" for v in values)


def inertia_fix(link: str, line: int, mass: float, inertia: tuple) -> Repair | None:
    """The repair of a finite ``inertia`` that is not positive definite (None when it is, or
    when it is a massless frame's: all zero, or every principal moment below
    :data:`ZERO_INERTIA` with no mass)."""
    moments, axes = np.linalg.eigh(_matrix(inertia))
    top = float(np.abs(moments).max())
    if moments.min() > MIN_MOMENT or not any(inertia) or (top <= ZERO_INERTIA and not mass > 0):
        return None
    floor = max(RELATIVE * top, BOUND_INERTIA)
    fixed = np.maximum(moments, floor)
    six = _six(axes @ np.diag(fixed) @ axes.T)
    return Repair(link, line, mass, six, f"principal moments {_moments(moments)} kg m^2 are not "
                                         f"all > 0: raised to {_moments(fixed)} (boundinertia)")


def moving_fix(link: str, line: int, mass: float, inertia: tuple, joint: str) -> Repair | None:
    """The repair of a link that moves on ``joint`` with no mass or an inertia that has a zero
    principal moment or is not given (``inertia`` ()); None when it needs none."""
    fixes = []
    if not mass > 0:
        fixes.append(f"mass {mass:g} kg -> {BOUND_MASS:g} kg (boundmass)")
        mass = BOUND_MASS
    if inertia and np.linalg.eigvalsh(_matrix(inertia)).min() > MIN_MOMENT:
        six = tuple(inertia)
    else:
        six = (BOUND_INERTIA, 0.0, 0.0, BOUND_INERTIA, 0.0, BOUND_INERTIA)
        fixes.append(f"{'no' if not inertia else 'a zero'} inertia -> {BOUND_INERTIA:g} "
                     "kg m^2 about each axis (boundinertia)")
    if not fixes:
        return None
    return Repair(link, line, mass, six, f"moves on joint {joint!r}: " + "; ".join(fixes))


def merged(first: Repair | None, second: Repair | None) -> Repair | None:
    """Two repairs of one link as one (the second's values, both reasons)."""
    if first is None or second is None:
        return first or second
    return Repair(second.link, first.line, second.mass, second.inertia,
                  f"{first.why}; {second.why}")


def apply(robot: ET.Element, repairs: dict) -> None:
    """Write ``repairs`` (link name -> :class:`Repair`) into the URDF tree ``robot`` (a copy:
    the text MuJoCo compiles), adding ``<inertial>``, ``<mass>`` or ``<inertia>`` where
    missing."""
    for link in robot.findall("link"):
        fix = repairs.get(link.get("name", "").strip())
        if fix is None:
            continue
        inertial = link.find("inertial")
        if inertial is None:
            inertial = ET.SubElement(link, "inertial")
        mass = inertial.find("mass")
        if mass is None:
            mass = ET.SubElement(inertial, "mass")
        mass.set("value", repr(fix.mass))
        element = inertial.find("inertia")
        if element is None:
            element = ET.SubElement(inertial, "inertia")
        for key, value in zip(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"), fix.inertia):
            element.set(key, repr(value))


def warning(path: str, fix: Repair) -> str:
    """The warning of ``fix`` in ``path``: ``file:line: link 'name' repaired: why``."""
    return f"{path}:{fix.line}: link {fix.link!r} repaired: {fix.why}"
