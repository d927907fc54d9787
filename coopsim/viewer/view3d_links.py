"""Imported robots (URDF, MJCF) in the 3D view, link by link: each link at the pose
:func:`coopsim.model.linkposes.link_poses` gives from the state document's ``links`` and the
stream's ``link_q`` columns, drawn as its visual shapes.

Primitive visuals (box, sphere, cylinder, capsule, ellipsoid) are drawn as they are; a mesh
visual as its triangles once ``/sim`` has sent them (protocol 11, viewer/view3d_meshes.py: one
instanced kind per robot type and file, scaled by the visual's ``scale``), else as a dot at the
mesh's origin. Only what the file draws is drawn (what MuJoCo's own viewer and a camera image
show): a link without visual shapes (a massless frame such as robosuite's Spot's
``fixed_support`` or a tool frame) draws nothing. A robot with no visual shape at all is drawn
as its skeleton instead, a grey bone from each link's origin to its parent's (true to the
joints). A robot without a ``links`` document (built-in types, older servers) is drawn as its
base, as before.
Frames: world, metres; quaternions (w, x, y, z).
"""

from __future__ import annotations

import numpy as np

from ..model.linkposes import columns_of, link_poses, link_visuals, links_of, placed_visuals, \
    quat_matrix, quat_mul, quat_rotate
from .view3d_bodies import merge, quat_from_z, rows
from .view3d_meshes import robot_key

BONE = (0.55, 0.56, 0.6, 1.0)
BONE_RADIUS = 0.012  # m
MESH_DOT = 0.03  # m, diameter of the dot at a mesh's origin


def imported(robots: list[dict]) -> np.ndarray:
    """(N,) which robots carry a ``links`` document (drawn link by link)."""
    return np.array([links_of(r) is not None for r in robots], dtype=bool)


def link_rows(robots: list[dict], pose7: np.ndarray, columns: np.ndarray | None,
              names: list[str], meshes=()) -> dict[str, np.ndarray]:
    """Instance rows (per shape kind) of every imported robot's links.

    Args:
        robots: The layout's robot entries.
        pose7: (N, 7) their base poses x, y, z, qw, qx, qy, qz.
        columns: (N, C) the streamed columns (None: every joint at its zero).
        names: The layout's column names.
        meshes: The mesh kinds whose triangles have come (view3d_meshes.robot_key).
    """
    out = []
    for row, entry in enumerate(robots):
        if links_of(entry) is None:
            continue
        values = columns_of(names, columns[row]) if columns is not None and \
            row < len(columns) else None
        out.append(_robot(entry, pose7[row], values, meshes))
    return merge(*out) if out else {}


def _robot(entry: dict, pose7: np.ndarray, columns, meshes=()) -> dict[str, np.ndarray]:
    poses = link_poses(entry, pose7, columns)
    visuals_of = link_visuals(entry)
    kinds: dict[str, list] = {"cylinder": [], "sphere": [], "box": []}
    if not any(visuals_of.values()):  # nothing the file draws: its skeleton
        parents = {link["name"]: link.get("parent", "") for link in links_of(entry)["links"]}
        starts = [poses[p][0] for n, p in parents.items() if p in poses and n in poses]
        ends = [poses[n][0] for n, p in parents.items() if p in poses and n in poses]
    else:
        starts = ends = []
    if starts:
        a, b = np.array(starts), np.array(ends)
        length = np.linalg.norm(b - a, axis=1)
        kinds["cylinder"].append(rows((a + b) / 2, quat_from_z(b - a), np.column_stack(
            (np.full(len(a), 2 * BONE_RADIUS),) * 2 + (np.maximum(length, 1e-3),)), BONE))
    for link, visuals in visuals_of.items():
        lxyz, lquat = poses[link]
        for v in visuals:
            kind, scale = _shape(v)
            if v.kind == "mesh" and robot_key(entry.get("type", ""), v.file) in meshes:
                kind, scale = robot_key(entry.get("type", ""), v.file), tuple(v.scale)
                kinds.setdefault(kind, [])
            xyz = lxyz + quat_rotate(lquat, v.xyz)
            kinds[kind].append(rows(xyz, quat_mul(lquat, np.asarray(v.quat, dtype=float)),
                                    scale, v.color))
    return {k: np.concatenate(v) for k, v in kinds.items() if v}


def _shape(v) -> tuple[str, tuple[float, float, float]]:
    """The unit shape and its scale (m) that draw visual ``v`` (sizes: linkposes' table)."""
    s = list(v.size) + [0.0, 0.0, 0.0]
    if v.kind == "box":
        return "box", (s[0], s[1], s[2])
    if v.kind == "sphere":
        return "sphere", (2 * s[0],) * 3
    if v.kind == "ellipsoid":
        return "sphere", (2 * s[0], 2 * s[1], 2 * s[2])
    if v.kind == "cylinder":
        return "cylinder", (2 * s[0], 2 * s[0], s[1])
    if v.kind == "capsule":
        return "cylinder", (2 * s[0], 2 * s[0], s[1] + 2 * s[0])
    return "sphere", (MESH_DOT,) * 3  # a mesh: its origin (its triangles stay on the server)


def links_extent(entry: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """(low, high) corners (m, world frame) of the box round a described robot's visual
    shapes at its layout pose (``x, y, z, quat``; joints at zero): a mesh's bounds' corners,
    a primitive's sphere of its largest size. None for a robot without a ``links`` document
    or shapes."""
    if links_of(entry) is None:
        return None
    pose = (float(entry.get("x", 0.0)), float(entry.get("y", 0.0)), float(entry.get("z", 0.0)),
            *entry.get("quat", (1.0, 0.0, 0.0, 0.0)))
    points = []
    for _, v, (xyz, quat) in placed_visuals(entry, pose):
        if v.kind == "mesh":
            lo, hi = v.bounds
            corners = np.array([(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                                for z in (lo[2], hi[2])])
            points.append(xyz + corners @ quat_matrix(quat).T)
        else:
            reach = max(list(v.size) + [0.0])
            points.append(xyz + np.array([[-reach] * 3, [reach] * 3]))
    if not points:
        return None
    points = np.concatenate(points)
    return points.min(axis=0), points.max(axis=0)
