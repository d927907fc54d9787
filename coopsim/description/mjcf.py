"""What an MJCF file says about a body's frame and a joint's attributes, read the way MuJoCo's
compiler reads them, so that a description's chain (:mod:`coopsim.description.arm`) has the
file's own kinematics: a body's ``pos`` and orientation (``quat``, ``euler`` with the
compiler's ``angle`` and ``eulerseq``, ``axisangle``, ``xyaxes``, ``zaxis``) relative to its
parent body, and a joint's ``type``, ``axis`` and ``range`` through the ``<default>`` classes
(a joint's ``class``, else the nearest enclosing body's ``childclass``, else ``main``).

Frames: a body's pose is in its parent body's frame (m, rad); the orientation is returned as
URDF's roll, pitch, yaw (R = Rz(yaw) Ry(pitch) Rx(roll)).
"""

from __future__ import annotations

import math

import numpy as np

from ..model.arm import axis_rotation

ORIENTATIONS = ("quat", "euler", "axisangle", "xyaxes", "zaxis")
AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def rpy_of(r: np.ndarray) -> tuple[float, float, float]:
    """URDF roll, pitch, yaw (rad) of rotation matrix ``r``."""
    pitch = math.asin(max(-1.0, min(1.0, -r[2, 0])))
    if abs(r[2, 0]) < 1.0 - 1e-12:
        return math.atan2(r[2, 1], r[2, 2]), pitch, math.atan2(r[1, 0], r[0, 0])
    return 0.0, pitch, math.atan2(-r[0, 1], r[1, 1])  # gimbal lock: yaw carries the turn


def _quat(w: float, x: float, y: float, z: float) -> np.ndarray:
    n = math.sqrt(w * w + x * x + y * y + z * z) or 1.0
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _euler(angles, seq: str) -> np.ndarray:
    """MuJoCo's ``eulerseq``: lower case turns about the moving axes, upper case fixed ones."""
    r = np.eye(3)
    for a, c in zip(angles, seq):
        turn = axis_rotation(AXES[c.lower()], a)
        r = r @ turn if c.islower() else turn @ r
    return r


def _zaxis(z) -> np.ndarray:
    """The least turn taking (0, 0, 1) to ``z``."""
    z = np.asarray(z, float) / (np.linalg.norm(z) or 1.0)
    axis = np.cross((0.0, 0.0, 1.0), z)
    s, c = np.linalg.norm(axis), float(z[2])
    if s < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    return axis_rotation(tuple(axis / s), math.atan2(s, c))


def body_frame(tree, body, degrees: bool, seq: str) -> tuple[tuple, tuple]:
    """(xyz, rpy) of ``body`` in its parent body's frame (m, rad); ``tree`` reads numbers with
    the file's line on error."""
    unit = math.pi / 180.0 if degrees else 1.0
    xyz = tree.numbers(body, "pos", 3, (0.0, 0.0, 0.0))
    given = [k for k in ORIENTATIONS if body.get(k) is not None]
    if len(given) > 1:
        raise tree.error(body, f"body orientation given twice ({', '.join(given)})")
    kind = given[0] if given else ""
    if kind == "quat":
        r = _quat(*tree.numbers(body, "quat", 4, (1.0, 0.0, 0.0, 0.0)))
    elif kind == "euler":
        r = _euler([a * unit for a in tree.numbers(body, "euler", 3, (0.0,) * 3)], seq)
    elif kind == "axisangle":
        *axis, angle = tree.numbers(body, "axisangle", 4, (0.0, 0.0, 1.0, 0.0))
        r = axis_rotation(tuple(np.asarray(axis) / (np.linalg.norm(axis) or 1.0)), angle * unit)
    elif kind == "xyaxes":
        v = np.asarray(tree.numbers(body, "xyaxes", 6, (1.0, 0, 0, 0, 1.0, 0)))
        x = v[:3] / (np.linalg.norm(v[:3]) or 1.0)
        y = v[3:] - x * (x @ v[3:])
        y = y / (np.linalg.norm(y) or 1.0)
        r = np.column_stack((x, y, np.cross(x, y)))
    elif kind == "zaxis":
        r = _zaxis(tree.numbers(body, "zaxis", 3, (0.0, 0.0, 1.0)))
    else:
        r = np.eye(3)
    return xyz, rpy_of(r)


#: MJCF's actuator elements (``<actuator>`` children and ``<default>`` entries).
ACTUATORS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder",
             "muscle", "adhesion")


class Defaults:
    """An element's attributes through the file's ``<default>`` classes (nested classes
    inherit their parent's), for joints and actuators; built once per file. MuJoCo keeps one
    actuator default per class whatever shortcut wrote it: so here."""

    def __init__(self, root) -> None:
        self.classes: dict[str, dict[str, dict]] = {}  # class -> tag -> attributes
        for top in root.findall("default"):
            self._walk(top, {}, "main")

    def _walk(self, element, inherited: dict, name: str) -> None:
        attrs = {tag: dict(values) for tag, values in inherited.items()}
        for child in element:
            tag = "actuator" if child.tag in ACTUATORS else child.tag
            if tag in ("joint", "actuator"):
                attrs.setdefault(tag, {}).update(child.attrib)
        self.classes[element.get("class", name)] = attrs
        for child in element.findall("default"):
            self._walk(child, attrs, child.get("class", name))

    def get(self, element, cls: str, attr: str, default=None):
        """``attr`` of ``element`` (a joint or an actuator): its own, else its class's
        (``cls``: the element's ``class``, the enclosing ``childclass`` or ``main``)."""
        if element.get(attr) is not None:
            return element.get(attr)
        tag = "actuator" if element.tag in ACTUATORS else "joint"
        return self.classes.get(element.get("class", cls), {}).get(tag, {}).get(attr, default)
