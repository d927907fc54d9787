"""A description's links at its zero configuration: each link's frame in the root link's, a
link or joint found by name, the whole tree's mass and inertia, where a sensor on a link sits;
and the errors a scenario key naming what the file lacks raises.

What :mod:`coopsim.description.mobile` turns into a wheeled base, an airframe and sensor
mounts reads the file through these; nothing here needs MuJoCo.

Frames and units: the description's root link frame (x forward, z up), metres, kilograms,
radians.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.errors import CoopsimError


class DescriptionKeyError(CoopsimError):
    """A scenario key names links or joints the description does not have, or ones that
    cannot be what the key says (the caller adds the file and line)."""


class MobileKeyError(DescriptionKeyError):
    """:class:`DescriptionKeyError` with the scenario key it is about (its line)."""

    def __init__(self, key: str, text: str) -> None:
        super().__init__(text)
        self.key = key


def rotation(rpy) -> np.ndarray:
    """URDF's fixed-axis roll, pitch, yaw (rad) as a 3x3 rotation: Rz(y) Ry(p) Rx(r)."""
    r, p, y = (float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def link_frames(description) -> dict[str, np.ndarray]:
    """Each link's frame in the root link's frame at zero joint positions: name -> 4x4."""
    children: dict[str, list] = {}
    for joint in description.joints:
        children.setdefault(joint.parent, []).append(joint)
    frames = {description.root: np.eye(4)}
    todo = [description.root]
    while todo:
        parent = todo.pop()
        for joint in children.get(parent, ()):
            step = np.eye(4)
            step[:3, :3] = rotation(joint.origin_rpy)
            step[:3, 3] = joint.origin_xyz
            frames[joint.child] = frames[parent] @ step
            todo.append(joint.child)
    return frames


def joint_named(description, name: str, what: str):
    """The joint ``name`` of ``description`` (see :func:`link_named`)."""
    return _named(description, description.joints, "joint", name, what)


def link_named(description, name: str, what: str):
    """The link ``name`` of ``description``.

    Raises:
        DescriptionKeyError: the file has no such link (``what``: the key, first in the text).
    """
    return _named(description, description.links, "link", name, what)


def _named(description, items, kind: str, name: str, what: str):
    """The item of ``items`` (links or joints, ``kind``) called ``name``."""
    found = next((item for item in items if item.name == name), None)
    if found is None:
        known = ", ".join(item.name for item in items) or "none"
        raise DescriptionKeyError(f"{what}: {description.name} has no {kind} {name!r} "
                                  f"(its {kind}s: {known})")
    return found


def mass_properties(description, frames=None) -> tuple[float, tuple[float, float, float]]:
    """The whole tree's mass (kg) and principal-axis moments about its centre of mass in the
    root's axes (kg m^2, the diagonal of the composite inertia: parallel-axis theorem)."""
    frames = frames if frames is not None else link_frames(description)
    parts = []
    for link in description.links:
        if link.name not in frames or not link.mass > 0:
            continue
        frame = frames[link.name]
        com = frame[:3, :3] @ np.asarray(getattr(link, "com", (0.0, 0.0, 0.0)), float) \
            + frame[:3, 3]
        parts.append((float(link.mass), com, frame[:3, :3] @ _tensor(link.inertia)
                      @ frame[:3, :3].T))
    mass = sum(m for m, _, _ in parts)
    if not mass > 0:
        raise DescriptionKeyError(f"{description.name} has no mass")
    centre = sum(m * c for m, c, _ in parts) / mass
    total = np.zeros((3, 3))
    for m, c, tensor in parts:
        d = c - centre
        total += tensor + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, (float(total[0, 0]), float(total[1, 1]), float(total[2, 2]))


def _tensor(inertia) -> np.ndarray:
    """A 3x3 inertia tensor from (ixx, ixy, ixz, iyy, iyz, izz), (ixx, iyy, izz) or 3x3."""
    a = np.asarray(inertia, dtype=float)
    if a.shape == (3, 3):
        return a
    if a.size == 3:
        return np.diag(a)
    ixx, ixy, ixz, iyy, iyz, izz = a.reshape(6)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def mount(description, link: str, what: str,
          tilt: tuple[float, float] = (0.0, 0.0)) -> tuple[float, float, float, float]:
    """Where a sensor on ``link`` sits: x, y, z (m) in the root's frame and the yaw of the
    link's x axis (rad); with ``tilt`` (roll, pitch, rad: the root turned on its mount,
    ``DescriptionSpec.tilt``), in the mount's frame."""
    link_named(description, link, what)
    frame = link_frames(description)[link]
    if any(tilt):
        turn = np.eye(4)
        turn[:3, :3] = rotation((tilt[0], tilt[1], 0.0))
        frame = turn @ frame
    return (float(frame[0, 3]), float(frame[1, 3]), float(frame[2, 3]),
            float(math.atan2(frame[1, 0], frame[0, 0])))
