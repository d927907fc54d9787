"""A world's meshes and terrain as ROS 2 frames (the layout document's ``scenery``, protocol
9): on ``/tf_static``, ``map`` -> ``scenery/<mesh name>`` at each mesh's file frame (its
position and full orientation) and ``map`` -> ``scenery/terrain`` at the terrain's centre and
black level. REP 103: x forward, y left, z up, metres; quaternions (x, y, z, w) on the wire."""

from __future__ import annotations

from .cdr import Writer
from .messages import yaw_quaternion

FRAME_PREFIX = "scenery"


def scenery_frames(layout: dict, ns: int) -> list[tuple]:
    """``(ns, parent, child, x, y, z, qx, qy, qz, qw)`` of each mesh and the terrain (none
    without ``scenery``)."""
    scenery = layout.get("scenery") or {}
    out = []
    for mesh in scenery.get("meshes", ()):
        w, x, y, z = (float(v) for v in mesh.get("quat", (1.0, 0.0, 0.0, 0.0)))
        out.append((ns, "map", f"{FRAME_PREFIX}/{mesh.get('name', '')}", *_xyz(mesh),
                    x, y, z, w))
    t = scenery.get("terrain")
    if t:
        out.append((ns, "map", f"{FRAME_PREFIX}/terrain", *_xyz(t), 0.0, 0.0, 0.0, 1.0))
    return out


def _xyz(doc: dict) -> tuple[float, float, float]:
    """(x, y, z) of a ``scenery`` entry, m (0 for a key an older or damaged file lacks)."""
    return tuple(float(doc.get(k, 0.0)) for k in ("x", "y", "z"))


def planar(items) -> list[tuple]:
    """``(ns, parent, child, x, y, yaw)`` items as :func:`scenery_frames`'s (z 0)."""
    return [(ns, parent, child, x, y, 0.0, *yaw_quaternion(yaw))
            for ns, parent, child, x, y, yaw in items]


def transforms3d(items) -> bytes:
    """tf2_msgs/TFMessage of ``(ns, parent, child, x, y, z, qx, qy, qz, qw)`` items."""
    w = Writer()
    w.seq(len(items))
    for ns, parent, child, *values in items:
        w.header(ns, parent)
        w.string(child)
        w.f64(*values)
    return w.bytes()
