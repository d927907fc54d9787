"""Each link's world pose and visuals of an imported robot, from what a network client has
(docs/protocol.md, the state document's ``links`` and the stream's
``link_q`` columns; docs/robots.md "Your own robot", *What is shown where*).

A robot built from a description file (URDF, MJCF) has, in the state document (``/sim``
command 23, a replay's, a recording's layout), a ``links`` key: its kinematic tree and the
visual shapes of every link, bounded (no triangle: meshes by their file's basename). The state
stream (and a snapshot, a recording's frame) carries the robot's base pose and the positions of
its moving joints as the ``posture`` module's columns ``link_q1``..``link_q32``. This module, numpy
only, turns the two into every link's pose in the world frame: the viewer (2D outlines, the 3D
view), Foxglove's scene and ROS 2's ``/tf`` all draw from it.

The ``links`` document (:func:`coopsim.physics.mujoco.links.links_document` makes it from the
model MuJoCo compiled of the file, so an URDF and an MJCF read the same)::

    {"root": "panda_link0",            # the description's root link
     "columns": 9,                     # link_q columns the robot fills (moving joints, <= 32)
     "links": [                        # parents before children
        {"name": "panda_link1", "parent": "panda_link0",     # "" for the root
         "xyz": [0, 0, 0.333], "quat": [1, 0, 0, 0],         # in the parent's frame at zero
         "moving": [{"name": "panda_joint1", "kind": "hinge",    # or "slide"
                     "axis": [0, 0, 1], "anchor": [0, 0, 0],     # in this link's frame
                     "zero": 0.0, "column": "link_q1"}],         # column null: drawn at zero
         "visuals": [{"kind": "mesh", "file": "link1.stl", "scale": [1, 1, 1],
                      "xyz": [...], "quat": [...], "color": [r, g, b, a]},
                     {"kind": "box", "size": [l, w, h], ...}]}]}

A root's ``xyz``/``quat`` are in the robot's base frame (the body the stream's pose is of: a
fixed base's mount at the section's pose, a floating base's free body, a wheeled base's
chassis): at its origin, turned by the section's roll and pitch where it gives them (a file
whose robot is not z up). Visual kinds and ``size`` (m): ``box`` [length x, width y, height
z]; ``sphere`` [radius]; ``cylinder`` and ``capsule`` [radius, length along z]; ``ellipsoid`` [rx, ry, rz];
``mesh`` [] with ``file`` (the mesh file's basename), ``scale`` (the file's units to m per
axis) and ``bounds`` ([min xyz, max xyz] of its vertices in its file's frame, scaled, m), its ``xyz``/``quat`` the placement of the *file's own frame* in the link frame. Colours
are RGBA in 0..1. Joint kinds ``hinge`` (turns ``q - zero`` rad about ``axis`` through
``anchor``) and ``slide`` (moves ``q - zero`` m along ``axis``); a ball or free joint inside
the tree is not streamed (its link is drawn at the zero pose).

Frames: quaternions (w, x, y, z) rotate body to world; metres, radians.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .arm import quat_matrix  # noqa: F401 -- (w, x, y, z) -> 3 x 3, for the clients
from .statedoc import DocKey

MAX_COLUMNS = 32  # moving joints streamed per robot (link_q1..link_q32)
COLUMNS = tuple(f"link_q{i}" for i in range(1, MAX_COLUMNS + 1))
KINDS = ("mesh", "box", "sphere", "cylinder", "capsule", "ellipsoid")

Pose = tuple[np.ndarray, np.ndarray]  # (xyz (3,), quat wxyz (4,))


@dataclass(frozen=True)
class Visual:
    """One visual shape of a link (the ``visuals`` rows of the document).

    Attributes:
        kind: One of :data:`KINDS`.
        size: The kind's sizes, m (module docstring); () for a mesh.
        file: A mesh file's basename ("" for a primitive).
        scale: A mesh's scale per axis (file units to m).
        xyz: The shape's (a mesh file's own) frame origin in the link frame, m.
        quat: Its orientation in the link frame (w, x, y, z).
        color: RGBA, 0..1.
        bounds: A mesh's ((xmin, ymin, zmin), (xmax, ymax, zmax)) in its file's frame, m
            (scaled): what a client without the file draws (its box).
    """

    kind: str
    size: tuple[float, ...] = ()
    file: str = ""
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    color: tuple[float, float, float, float] = (0.7, 0.7, 0.7, 1.0)
    bounds: tuple = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


def _mul(a, b) -> tuple:
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


def _rot(q, v) -> tuple:
    w, x, y, z = q
    vx, vy, vz = v
    tx, ty, tz = 2.0 * (y * vz - z * vy), 2.0 * (z * vx - x * vz), 2.0 * (x * vy - y * vx)
    return (vx + w * tx + (y * tz - z * ty), vy + w * ty + (z * tx - x * tz),
            vz + w * tz + (x * ty - y * tx))


def quat_mul(a, b) -> np.ndarray:
    """Hamilton product a b of two (w, x, y, z) quaternions."""
    return np.array(_mul([float(v) for v in a], [float(v) for v in b]))


def quat_rotate(q, v) -> np.ndarray:
    """Vector ``v`` (3,) turned by the unit quaternion ``q`` (w, x, y, z)."""
    return np.array(_rot([float(c) for c in q], [float(c) for c in v]))


def _axis_angle(axis, angle: float) -> tuple:
    s = math.sin(angle / 2.0)
    return (math.cos(angle / 2.0), axis[0] * s, axis[1] * s, axis[2] * s)


def links_of(entry: Mapping) -> Mapping | None:
    """The ``links`` document of a robot's state-document entry (or the document itself);
    None for a robot without one (a built-in type, an older server)."""
    if not isinstance(entry, Mapping):
        return None
    doc = entry.get("links")
    if isinstance(doc, Mapping):
        entry = doc
    return entry if isinstance(entry.get("links"), list) else None


def base_pose(pose: Sequence[float]) -> Pose:
    """The robot's base pose from a stream row or snapshot: ``(x, y, z, qw, qx, qy, qz)`` (a 3D
    world: x, y from the planar pose, the rest from the 3D block), or ``(x, y, yaw)`` (a 2D
    view: level at z = 0)."""
    if len(pose) == 3:
        x, y, yaw = (float(v) for v in pose)
        return np.array([x, y, 0.0]), np.array([math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])
    if len(pose) != 7:
        raise ValueError(f"a base pose is (x, y, yaw) or (x, y, z, qw, qx, qy, qz), got "
                         f"{len(pose)} values")
    q = np.asarray(pose[3:7], dtype=float)
    n = float(np.linalg.norm(q))
    return np.asarray(pose[:3], dtype=float), (q / n if n > 0 else np.array([1.0, 0, 0, 0]))


def _joint_value(joint: Mapping, columns: Mapping[str, float] | None) -> float:
    """The joint's displacement from its zero (rad or m): 0 without a finite column value."""
    name = joint.get("column")
    if not name or columns is None:
        return 0.0
    v = columns.get(name)
    if v is None or not math.isfinite(float(v)):
        return 0.0
    return float(v) - float(joint.get("zero", 0.0))


def _moved(xyz: tuple, quat: tuple, joints, columns) -> tuple[tuple, tuple]:
    """A link frame moved by its joints (MuJoCo's order: each in turn, in the turned frame)."""
    for joint in joints:
        d = _joint_value(joint, columns)
        if d == 0.0:
            continue
        axis = [float(a) for a in joint["axis"]]
        if joint.get("kind") == "slide":
            dx, dy, dz = _rot(quat, axis)
            xyz = (xyz[0] + dx * d, xyz[1] + dy * d, xyz[2] + dz * d)
        elif joint.get("kind") == "hinge":
            anchor = [float(a) for a in joint.get("anchor", (0.0, 0.0, 0.0))]
            ax, ay, az = _rot(quat, anchor)
            at = (xyz[0] + ax, xyz[1] + ay, xyz[2] + az)  # the anchor stays where it is
            quat = _mul(quat, _axis_angle(axis, d))
            bx, by, bz = _rot(quat, anchor)
            xyz = (at[0] - bx, at[1] - by, at[2] - bz)
    return xyz, quat


def local_poses(entry: Mapping, columns: Mapping[str, float] | None = None
                ) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """Every link's pose in its parent link's frame (the root's in the robot's base frame) at
    the joints' positions: (link, parent ("" for the root), xyz (3,), quat wxyz (4,)),
    parents first: what ROS's ``/tf`` sends. [] for a robot without a ``links`` document."""
    doc = links_of(entry)
    if doc is None:
        return []
    return [(name, parent, np.array(xyz), np.array(quat))
            for name, parent, xyz, quat in _local(doc, columns)]


def _local(doc: Mapping, columns) -> list[tuple[str, str, tuple, tuple]]:
    """:func:`local_poses` in plain floats (the fast path every client takes per frame)."""
    out = []
    for link in doc["links"]:
        xyz, quat = _moved(tuple(float(v) for v in link["xyz"]),
                           tuple(float(v) for v in link["quat"]), link.get("moving", ()),
                           columns)
        out.append((link["name"], link.get("parent", ""), xyz, quat))
    return out


def link_poses(entry: Mapping, pose: Sequence[float],
               columns: Mapping[str, float] | None = None) -> dict[str, Pose]:
    """Every link's world pose of one imported robot.

    Args:
        entry: The robot's entry of the state document (its ``links`` key read), or the
            ``links`` document itself.
        pose: The robot's base pose (:func:`base_pose`: ``(x, y, z, qw, qx, qy, qz)`` from the
            stream's planar pose and 3D block, or ``(x, y, yaw)``).
        columns: The robot's streamed columns by name (``{"link_q1": 0.3, ...}``); a missing
            or NaN one (a replay of an older recording) leaves its joint at zero.

    Returns:
        Link name -> (xyz (3,) m, quat (w, x, y, z) (4,)) in the world frame; {} for a robot
        without a ``links`` document.
    """
    doc = links_of(entry)
    if doc is None:
        return {}
    return {name: (np.array(xyz), np.array(quat))
            for name, (xyz, quat) in _world(doc, pose, columns).items()}


def _world(doc: Mapping, pose: Sequence[float], columns) -> dict[str, tuple[tuple, tuple]]:
    """:func:`link_poses` in plain floats."""
    bxyz, bquat = base_pose(pose)
    base = (tuple(bxyz.tolist()), tuple(bquat.tolist()))
    world: dict[str, tuple] = {}
    for name, parent, xyz, quat in _local(doc, columns):
        pxyz, pquat = world.get(parent, base)
        dx, dy, dz = _rot(pquat, xyz)
        world[name] = ((pxyz[0] + dx, pxyz[1] + dy, pxyz[2] + dz), _mul(pquat, quat))
    return world


def link_visuals(entry: Mapping) -> dict[str, tuple[Visual, ...]]:
    """Every link's visual shapes (in the link frame), from the robot's entry or its ``links``
    document; {} for a robot without one. Unknown kinds (a later version's) are skipped."""
    doc = links_of(entry)
    if doc is None:
        return {}
    held = _VISUALS.get(id(doc))
    if held is not None and held[0] is doc:  # a layout's document does not change
        return held[1]
    out = {}
    for link in doc["links"]:
        out[link["name"]] = tuple(
            Visual(v["kind"], tuple(v.get("size", ())), str(v.get("file", "")),
                   tuple(v.get("scale", (1.0, 1.0, 1.0))), tuple(v.get("xyz", (0.0, 0.0, 0.0))),
                   tuple(v.get("quat", (1.0, 0.0, 0.0, 0.0))),
                   tuple(v.get("color", (0.7, 0.7, 0.7, 1.0))),
                   tuple(tuple(b) for b in v.get("bounds", ((0.0,) * 3, (0.0,) * 3))))
            for v in link.get("visuals", ()) if v.get("kind") in KINDS)
    if len(_VISUALS) >= 256:  # documents of layouts gone
        _VISUALS.clear()
    _VISUALS[id(doc)] = (doc, out)
    return out


_VISUALS: dict[int, tuple] = {}  # id(links document) -> (document, its link_visuals)


def placed_visuals(entry: Mapping, pose: Sequence[float],
                   columns: Mapping[str, float] | None = None) -> list[tuple[str, Visual, Pose]]:
    """Every visual shape of the robot with its world pose: (link, visual, (xyz, quat)), the
    shape's own frame (a mesh: its file's frame) in the world frame."""
    doc = links_of(entry)
    if doc is None:
        return []
    world, out = _world(doc, pose, columns), []
    for link, visuals in link_visuals(doc).items():
        lxyz, lquat = world[link]
        for v in visuals:
            dx, dy, dz = _rot(lquat, v.xyz)
            out.append((link, v, (np.array((lxyz[0] + dx, lxyz[1] + dy, lxyz[2] + dz)),
                                  np.array(_mul(lquat, v.quat)))))
    return out


def columns_of(names: Sequence[str], values: Sequence[float]) -> dict[str, float]:
    """A robot's columns by name from a stream row's column values and the state document's
    ``columns`` (only the ``link_q`` ones are kept)."""
    return {n: float(v) for n, v in zip(names, values) if n.startswith("link_q")}


def link_columns(snap) -> np.ndarray | None:
    """(N robots, :data:`MAX_COLUMNS`) the ``link_q`` values of every robot of a snapshot
    (a live one's or a replay's: the reading whose fields are ``count, q1..q32``), NaN for
    robots without them; None when no module of the snapshot has that reading."""
    want = ("count", *(f"q{j}" for j in range(1, MAX_COLUMNS + 1)))
    for label, names in snap.fields.items():
        if tuple(names[:len(want)]) == want:
            values = snap.readings.get(label)
            if values is not None and values.shape[0] == len(snap.robots):
                return np.asarray(values[:, 1:1 + MAX_COLUMNS], dtype=float)
    return None


def row_columns(values) -> dict[str, float]:
    """One robot's ``link_q`` values (a row of :func:`link_columns`) by column name."""
    return {name: float(v) for name, v in zip(COLUMNS, values)}


#: The keys of a described robot's ``links`` (docs/reference/state.md is generated from them;
#: the module docstring shows an example).
LINKS_KEYS = (
    DocKey("root", "string", "the file's root link (listed first in `links`)"),
    DocKey("columns", "integer", "how many of `link_q1` .. `link_q32` the robot fills: its "
           "moving joints (revolute, continuous, prismatic; at most 32)"),
    DocKey("links", "list of objects", "every link, parents before children (at most 500)",
           fields=(
        DocKey("name", "string", "the link's name"),
        DocKey("parent", "string", "its parent link's name, \"\" for the root"),
        DocKey("xyz", "[x, y, z] m", "its frame in its parent's at the joints' zero; the "
               "root's in the robot's body frame (the body the stream's pose is of: a fixed "
               "base's mount at the section's pose, a floating base's free body, a wheeled "
               "base's chassis)"),
        DocKey("quat", "[w, x, y, z]", "the same frame's orientation"),
        DocKey("moving", "list of objects", "its joints, applied in the order listed",
               fields=(
            DocKey("name", "string", "the joint's name"),
            DocKey("kind", "string", "`hinge`: the link turns by `q - zero` rad about `axis` "
                   "through `anchor`; `slide`: it moves by `q - zero` m along `axis`"),
            DocKey("axis", "[x, y, z]", "in the link's frame"),
            DocKey("anchor", "[x, y, z] m", "in the link's frame"),
            DocKey("zero", "number, rad or m", "the joint's position at the link's `xyz`/`quat`"),
            DocKey("column", "string or null", "the stream column holding `q` (`link_q3`); "
                   "null for a joint beyond the 32nd, drawn at its zero"))),
        DocKey("visuals", "list of objects", "its visual geometry (URDF `<visual>`, an MJCF's "
               "geoms without contacts; a link with none: its collision geometry), at most 64",
               fields=(
            DocKey("kind", "string", "`box`, `sphere`, `cylinder`, `capsule`, `ellipsoid` or "
                   "`mesh`"),
            DocKey("size", "list, m", "a box's [length x, width y, height z], a sphere's "
                   "[radius], a cylinder's or capsule's [radius, length along z], an "
                   "ellipsoid's [rx, ry, rz], a mesh's []"),
            DocKey("file", "string", "its file's basename (where two files of the robot share "
                   "one, with as many of its folders as tell them apart: "
                   "`torso/base_link.STL`); it may be a COLLADA `.dae` (the Z1's): `/sim` 27 "
                   "`mesh` serves its triangles as an STL's", present="a mesh"),
            DocKey("scale", "[sx, sy, sz]", "the file's units to m, per axis",
                   present="a mesh"),
            DocKey("bounds", "[[x, y, z], [x, y, z]]", "min and max of its vertices in its "
                   "file's frame, scaled, m: what a client without the file draws",
                   present="a mesh"),
            DocKey("xyz", "[x, y, z] m", "the shape's frame in the link's (a mesh's: its "
                   "file's frame, MuJoCo's re-centring undone)"),
            DocKey("quat", "[w, x, y, z]", "that frame's orientation"),
            DocKey("color", "[r, g, b, a] 0..1", "RGBA"))))),
)
