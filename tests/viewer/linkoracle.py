"""An oracle for what the 3D view draws of a robot from a description file: Pinocchio's own
reading of the URDF (its kinematics, and its visual meshes loaded by assimp through coal),
placed at the pose MuJoCo's live world holds the robot in, against the instance rows and mesh
triangles the view uploaded (viewer/view3d_links.py, viewer/view3d_meshes.py).

Nothing of coopsim computes the expected vertices: Pinocchio parses the file and reads each
mesh (COLLADA node transforms and units, STL, scale) itself; MuJoCo gives only where the robot
stands (the world pose of one of its links) and its joints' positions. Frames: world, metres.
"""

from __future__ import annotations

import os
from collections import defaultdict

import numpy as np
from scipy.spatial import cKDTree

pin = None


def _pin():
    global pin
    if pin is None:
        import pinocchio
        pin = pinocchio
    return pin


def _q(pm, value) -> np.ndarray:
    """Pinocchio's configuration holding each joint at ``value(file's joint name)`` (rad or
    m; None: its neutral)."""
    q = _pin().neutral(pm)
    for jid in range(1, pm.njoints):
        joint, v = pm.joints[jid], value(pm.names[jid])
        if v is None or joint.nq == 0:
            continue
        if joint.nq == 2:  # a continuous joint: (cos, sin)
            q[joint.idx_q:joint.idx_q + 2] = (np.cos(v), np.sin(v))
        else:
            q[joint.idx_q] = v
    return q


def mujoco_world(model, data, prefix: str):
    """(joint value, link anchor) of a robot in MuJoCo's world (its names ``prefix``ed): a
    joint's position by the file's name, a link's world pose (position, 3 x 3) by its name;
    None where MuJoCo has no such joint or body."""
    import mujoco

    def value(name: str):
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, prefix + name)
        return None if j < 0 else float(data.qpos[model.jnt_qposadr[j]])

    def anchor(name: str):
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, prefix + name)
        return None if b < 0 else (np.array(data.xpos[b]), np.array(data.xmat[b]).reshape(3, 3))

    return value, anchor


def expected_meshes(urdf: str, packages: str, doc: dict, value, anchor
                    ) -> dict[tuple[str, str], list[tuple]]:
    """(link, mesh file's realpath) -> for each of that link's visual meshes of that file, in
    the file's order: (its vertices (V, 3) in its own frame, scaled, as Pinocchio read them;
    the rotation (3, 3) and translation (3,) placing that frame in the world; its triangle
    count). Pinocchio's placements at the joints' ``value(name)``, the model anchored where
    ``anchor(link)`` puts the first link of ``doc`` it places (:func:`mujoco_world`)."""
    p = _pin()
    pm = p.buildModelFromUrdf(urdf)
    gm = p.buildGeomFromUrdf(pm, urdf, p.GeometryType.VISUAL, package_dirs=[packages])
    pd, gd = pm.createData(), gm.createData()
    p.forwardKinematics(pm, pd, _q(pm, value))
    p.updateFramePlacements(pm, pd)
    p.updateGeometryPlacements(pm, pd, gm, gd)
    for link in doc["links"]:
        at = anchor(link["name"])
        if at is not None and pm.existFrame(link["name"]):
            frame = pd.oMf[pm.getFrameId(link["name"])]
            rot = at[1] @ frame.rotation.T  # world <- Pinocchio's base
            shift = at[0] - rot @ frame.translation
            break
    else:
        raise AssertionError("no link of the robot is anchored")
    out = defaultdict(list)
    for k, g in enumerate(gm.geometryObjects):
        if not g.meshPath or not hasattr(g.geometry, "vertices"):
            continue
        out[(pm.frames[g.parentFrame].name, os.path.realpath(g.meshPath))].append(
            (np.asarray(g.geometry.vertices()), rot @ gd.oMg[k].rotation,
             rot @ gd.oMg[k].translation + shift, int(g.geometry.num_tris)))
    return out


def drawn_meshes(doc: dict, files: dict[str, str], drawn: dict, triangles: dict, key
                 ) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """(link, file's realpath, the vertices of its served triangles (file frame, unscaled),
    the view's instance row) of every mesh visual in ``doc``: the k-th row of a file's kind is
    the k-th visual naming that file (view3d_links draws them in the document's order).
    ``files``: the document's file names -> paths; ``key(file)`` the view's kind of a file."""
    out, seen = [], defaultdict(int)
    for link in doc["links"]:
        for v in link["visuals"]:
            if v["kind"] != "mesh":
                continue
            kind = key(v["file"])
            out.append((link["name"], os.path.realpath(files[v["file"]]),
                        np.unique(triangles[kind][:, :3], axis=0), drawn[kind][seen[kind]]))
            seen[kind] += 1
    return out


def _matrix(q) -> np.ndarray:
    w, x, y, z = (float(c) for c in q / np.linalg.norm(q))
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def misplacements(expected: dict, drawn: list, cap: int) -> list[tuple[str, float, float, bool]]:
    """Per drawn mesh: (which, pose error, served error, decimated), m. The pose error: the
    largest distance between where the view's instance row and where Pinocchio put each of
    the file's vertices (as Pinocchio read them). The served error: the largest distance from
    a drawn vertex (the row applied to the served triangles) to the nearest vertex Pinocchio
    places; ``decimated`` when the file has over ``cap`` triangles (the wire's bound: those
    vertices are means of clusters)."""
    out, count = [], defaultdict(int)
    for link, path, served, row in drawn:
        k = count[(link, path)]
        count[(link, path)] += 1
        which = f"{link} {os.path.basename(path)}"
        wanted = expected.get((link, path), [])
        if k >= len(wanted):
            out.append((which + " (Pinocchio has no such mesh)", np.inf, np.inf, False))
            continue
        verts, rot, shift, tris = wanted[k]
        truth = verts @ rot.T + shift
        view = _matrix(row[3:7])
        scale = np.asarray(row[7:10], dtype=float)
        pose = float(np.abs(row[:3] + verts @ view.T - truth).max())
        placed = row[:3] + (served * scale) @ view.T
        served_error = float(cKDTree(truth).query(placed)[0].max())
        out.append((which, pose, served_error, tris > cap))
    return out
