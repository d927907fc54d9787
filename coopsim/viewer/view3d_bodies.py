"""What the 3D view draws, as instances of unit shapes: pure numpy, no OpenGL.

Each function turns the layout document and the latest poses into rows of
:data:`~coopsim.viewer.gl3d.INSTANCE_FLOATS` numbers (position m, world frame; body-to-world
quaternion w, x, y, z; scale m along the unit shape's x, y, z; RGBA 0-1) for one shape kind
(``box``, ``cylinder``, ``sphere``, ``disc``). A body made of several parts (a quadrotor: hull,
arms, rotors, blades) is a fixed list of parts in its own frame, turned and moved for every
body at once, so 1,000 quadrotors cost a few numpy expressions.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.armstate import matrix_quaternion
from .flight import AIRBORNE

SPIN_HZ = 1.3  # turns per second of sim time a flying rotor is drawn at without its speed
SPIN_SCALE = 1 / 400  # drawn rad per propeller rad: 2,500 rad/s (hover) turns ~1 per second
SHADOW = (0.05, 0.05, 0.08, 0.32)
ROTOR_DISC = (0.75, 0.75, 0.8, 0.35)
BLADE = (0.12, 0.12, 0.14, 1.0)
NOSE = (0.97, 0.97, 0.97, 1.0)
FLOOR = (222 / 255, 222 / 255, 214 / 255, 1.0)
BORDER = (70 / 255, 70 / 255, 70 / 255, 1.0)
GRID = (0.62, 0.62, 0.6, 1.0)
ARM_LINK = (235 / 255, 140 / 255, 40 / 255, 1.0)
ARM_JOINT = (45 / 255, 45 / 255, 50 / 255, 1.0)
ARM_BASE = (110 / 255, 110 / 255, 120 / 255, 1.0)
SELECTED = (1.0, 0.85, 0.1, 0.6)
FINGER = 0.012  # m, half-width of a drawn gripper finger
PART_LIFT = 0.06  # m: a carried part's underside above its tallest carrier's top (supports)
PART_THICKNESS = 0.04  # m: a carried part's drawn thickness (the layout gives it in plan only)
IDENTITY = (1.0, 0.0, 0.0, 0.0)
KINDS = ("box", "cylinder", "sphere", "disc", "quadfar")  # quadfar: gl3d.far_quad_mesh


# -- quaternions (w, x, y, z), body to world --------------------------------------------------

def qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products a * b of (..., 4) quaternions."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a, dtype=float), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, dtype=float), -1, 0)
    return np.stack((aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw),
                    axis=-1)


def qrot(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(..., 3) vectors v turned by the (..., 4) quaternions q."""
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    u, w = q[..., 1:], q[..., :1]
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def yaw_quat(angle) -> np.ndarray:
    """(..., 4) turns by ``angle`` rad about +z."""
    a = np.asarray(angle, dtype=float) / 2
    z = np.zeros_like(a)
    return np.stack((np.cos(a), z, z, np.sin(a)), axis=-1)


def quat_from_z(d: np.ndarray) -> np.ndarray:
    """(K, 4) the shortest turns taking +z onto the directions d (K, 3)."""
    d = np.asarray(d, dtype=float)
    n = np.linalg.norm(d, axis=1, keepdims=True)
    d = np.where(n > 1e-12, d / np.where(n > 1e-12, n, 1.0), (0.0, 0.0, 1.0))
    q = np.column_stack((1.0 + d[:, 2], -d[:, 1], d[:, 0], np.zeros(len(d))))
    q[d[:, 2] < -1 + 1e-9] = (0.0, 1.0, 0.0, 0.0)  # straight down: half a turn about x
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def rows(pos, quat, scale, color) -> np.ndarray:
    """(K, 14) instance rows from broadcastable positions, quaternions, scales, colours."""
    pos = np.asarray(pos, dtype=float).reshape(-1, 3)
    k = len(pos)
    out = np.empty((k, 14), dtype=np.float32)
    out[:, :3] = pos
    out[:, 3:7] = np.broadcast_to(np.asarray(quat, dtype=float).reshape(-1, 4), (k, 4))
    out[:, 7:10] = np.broadcast_to(np.asarray(scale, dtype=float).reshape(-1, 3), (k, 3))
    out[:, 10:] = np.broadcast_to(np.asarray(color, dtype=float).reshape(-1, 4), (k, 4))
    return out


def rgba(color, alpha: float = 1.0) -> tuple[float, float, float, float]:
    """A layout colour (0-255 RGB) as RGBA 0-1."""
    r, g, b = (tuple(color) + (150, 150, 150))[:3]
    return (r / 255, g / 255, b / 255, alpha)


def place(pose7: np.ndarray, offsets: np.ndarray, quats: np.ndarray, scales: np.ndarray,
          colors: np.ndarray) -> np.ndarray:
    """Instances of P parts (their offsets (P, 3), quats (P, 4) and scales (P, 3) in the body
    frame, per body (N, P, 3) or shared (P, 3)) on N bodies at ``pose7`` (N, 7): (N * P, 14)."""
    n = len(pose7)
    p = max(np.shape(a)[-2] for a in (offsets, quats, scales))
    if n == 0 or p == 0:
        return np.zeros((0, 14), dtype=np.float32)
    q = np.repeat(pose7[:, None, 3:7], p, axis=1)
    pos = pose7[:, None, :3] + qrot(q, np.broadcast_to(offsets, (n, p, 3)))
    return rows(pos.reshape(-1, 3), qmul(q, np.broadcast_to(quats, (n, p, 4))).reshape(-1, 4),
                np.broadcast_to(scales, (n, p, 3)).reshape(-1, 3),
                np.broadcast_to(colors, (n, p, 4)).reshape(-1, 4))


# -- the world --------------------------------------------------------------------------------

def floor_rows(length: float, width: float) -> np.ndarray:
    """The floor (a 2 cm slab under z = 0) and its dark border, as boxes."""
    if length <= 0 or width <= 0:
        return np.zeros((0, 14), dtype=np.float32)
    w = 0.05
    slab = rows((0, 0, -0.01), IDENTITY, (length, width, 0.02), FLOOR)
    edges = rows([(0, width / 2 + w / 2, 0.0), (0, -width / 2 - w / 2, 0.0),
                  (length / 2 + w / 2, 0, 0.0), (-length / 2 - w / 2, 0, 0.0)], IDENTITY,
                 [(length + 2 * w, w, 0.04), (length + 2 * w, w, 0.04),
                  (w, width, 0.04), (w, width, 0.04)], BORDER)
    return np.concatenate((slab, edges))


def grid_lines(length: float, width: float) -> tuple[np.ndarray, np.ndarray]:
    """Grid segments on the floor every metre (coarser on a large floor): starts, ends."""
    step = max(1.0, 10.0 ** math.floor(math.log10(max(length, width, 1.0) / 5)))
    xs = np.arange(math.ceil(-length / 2 / step), math.floor(length / 2 / step) + 1) * step
    ys = np.arange(math.ceil(-width / 2 / step), math.floor(width / 2 / step) + 1) * step
    z = 0.002  # just above the slab, so the lines win the depth test
    starts = [(x, -width / 2, z) for x in xs] + [(-length / 2, y, z) for y in ys]
    ends = [(x, width / 2, z) for x in xs] + [(length / 2, y, z) for y in ys]
    return np.array(starts, dtype=float).reshape(-1, 3), np.array(ends, dtype=float).reshape(-1, 3)


def object_rows(objects: list[dict], pose7: np.ndarray) -> dict[str, np.ndarray]:
    """Boxes, cylinders and spheres at their 3D poses (z is the centre), per kind."""
    out: dict[str, list] = {k: [] for k in KINDS}
    for obj, p in zip(objects, pose7):
        size = [float(s) for s in obj.get("size", (0.2, 0.2))] + [0.0]
        l, w = size[0], size[1]
        h = size[2] if len(obj.get("size", ())) >= 3 and size[2] > 0 else max(l, w)
        kind = obj.get("shape", "box")
        scale = {"box": (l, w, h), "sphere": (l, l, l)}.get(kind, (l, l, h))
        kind = kind if kind in ("box", "sphere") else "cylinder"
        centre = p[:3] if "z" in obj else (p[0], p[1], scale[2] / 2)  # a 2D world's: on the floor
        out[kind].append(rows(centre, p[3:7], scale, rgba(obj.get("color", (150, 150, 150)))))
    return {k: np.concatenate(v) for k, v in out.items() if v}


def target_rows(targets: list[dict]) -> np.ndarray:
    """A sphere of 10 cm per target, in its colour."""
    if not targets:
        return np.zeros((0, 14), dtype=np.float32)
    pos = [(t["x"], t["y"], float(t.get("z", 0.0)) + 0.05) for t in targets]  # resting on it
    return rows(pos, IDENTITY, (0.1, 0.1, 0.1), [rgba(t.get("rgb", (255, 0, 0)), 0.85)
                                                   for t in targets])


# -- robots -----------------------------------------------------------------------------------

def quad_parts(r: float) -> tuple[np.ndarray, ...]:
    """A quadrotor's solid parts in its frame (X layout): hull, two arms, the nose, as
    offsets, quats, scales; sized by its radius r (m, centre to a rotor's hub)."""
    d = r / math.sqrt(2)
    offsets = np.array([(0, 0, 0), (0, 0, 0), (0, 0, 0), (0.32 * r, 0, 0.1 * r)])
    quats = np.array([IDENTITY, yaw_quat(math.pi / 4), yaw_quat(-math.pi / 4), IDENTITY])
    scales = np.array([(0.55 * r, 0.55 * r, 0.22 * r), (2 * r, 0.1 * r, 0.07 * r),
                       (2 * r, 0.1 * r, 0.07 * r), (0.3 * r, 0.14 * r, 0.06 * r)])
    hubs = np.array([(d, -d, 0.1 * r), (-d, -d, 0.1 * r), (-d, d, 0.1 * r), (d, d, 0.1 * r)])
    return offsets, quats, scales, hubs


def quad_rows(pose7: np.ndarray, radius: np.ndarray, colors: np.ndarray,
              time: float, detail: bool = True, spin=None) -> dict[str, np.ndarray]:
    """Quadrotors at their attitude: hull, arms and nose (boxes), rotor discs, blades turning
    (alternate rotors the other way) while airborne, a shadow on the floor under each.
    Without ``detail`` (bodies a few pixels large) each body is one ``quadfar`` instance
    (gl3d.far_quad_mesh: hull, arms, rotor discs; no blades, no nose) and its shadow.
    ``spin``: (N, 4) each blade's angle, rad (from the rotors' streamed speeds: Spin); None
    turns every flying rotor at :data:`SPIN_HZ`."""
    n = len(pose7)
    if n == 0:
        return {}
    flying = pose7[:, 2] > AIRBORNE
    shadow = rows(np.column_stack((pose7[flying, :2], np.full(flying.sum(), 0.003))), IDENTITY,
                  np.column_stack((2.4 * radius[flying],) * 2 + (np.ones(flying.sum()),)),
                  SHADOW)
    if not detail:  # one instance of the whole body each (a few pixels: no blades, no nose)
        return {"quadfar": rows(pose7[:, :3], pose7[:, 3:7], np.repeat(radius[:, None], 3, 1),
                                colors), "disc": shadow}
    r = radius[:, None, None]
    off, quats, scales, hubs = quad_parts(1.0)
    body = np.concatenate((colors[:, None], colors[:, None] * (0.6, 0.6, 0.6, 1),
                           colors[:, None] * (0.6, 0.6, 0.6, 1),
                           np.broadcast_to(NOSE, (n, 1, 4))), axis=1)
    boxes = place(pose7, off * r, quats, scales * r, body)
    discs = place(pose7, hubs * r + (0, 0, 0.03) * r, np.array([IDENTITY] * 4),
                  np.array((0.9, 0.9, 1.0)) * r, np.array(ROTOR_DISC))
    if spin is None:
        spin = np.where(flying, 2 * math.pi * SPIN_HZ * time, 0.0)[:, None] * (1, -1, 1, -1)
    blade_q = yaw_quat(spin + np.arange(4) * 0.7)
    blades = place(pose7, hubs * r + (0, 0, 0.02) * r, blade_q,
                   np.array((0.85, 0.07, 0.02)) * r, np.array(BLADE))
    return {"box": np.concatenate((boxes, blades)), "disc": np.concatenate((discs, shadow))}


def ground_rows(robots: list[dict], pose7: np.ndarray, radius: np.ndarray,
                colors: np.ndarray) -> dict[str, np.ndarray]:
    """Ground robots: a cylinder (or a box for a box-shaped type) standing on the floor, and
    a white nose on top pointing along the heading."""
    n = len(robots)
    if n == 0:
        return {}
    height = ground_height(radius)
    centre = pose7.copy()
    centre[:, 2] = np.maximum(pose7[:, 2], height / 2)
    boxy = np.array([r.get("draw", {}).get("shape") == "box" for r in robots])
    sizes = np.array([(list(r.get("draw", {}).get("size", (0.4, 0.4))) + [0, 0])[:2]
                      for r in robots], dtype=float)
    scale = np.where(boxy[:, None], np.column_stack((sizes, height)),
                     np.column_stack((2 * radius, 2 * radius, height)))
    out = {"cylinder": rows(centre[~boxy, :3], centre[~boxy, 3:7], scale[~boxy], colors[~boxy]),
           "box": rows(centre[boxy, :3], centre[boxy, 3:7], scale[boxy], colors[boxy])}
    heading = np.array([r.get("draw", {}).get("heading", True) for r in robots], dtype=bool)
    nose = place(centre[heading], np.column_stack((0.45 * radius[heading], 0 * radius[heading],
                                                   height[heading] / 2 + 0.005))[:, None],
                 np.array([IDENTITY]), np.column_stack((0.7 * radius[heading],
                                                        0.22 * radius[heading],
                                                        np.full(heading.sum(), 0.01)))[:, None],
                 np.array(NOSE))
    out["box"] = np.concatenate((out["box"], nose))
    return out


def ground_height(radius) -> np.ndarray:
    """The drawn height (m) of ground robots of ``radius`` (m): a chassis' proportions."""
    return np.clip(0.8 * np.asarray(radius, dtype=float), 0.04, 0.3)


def part_rows(parts: list[dict], poses: np.ndarray, robots: list[dict], pose7: np.ndarray,
              radius: np.ndarray) -> dict[str, np.ndarray]:
    """Carried parts (a team's bar, the layout's ``parts``) at their planar poses (x, y m,
    yaw rad), raised on supports: each part :data:`PART_LIFT` above the tallest robot of its
    section, :data:`PART_THICKNESS` thick, and a post from each of the section's robots up to
    it. A box shape is drawn as a box, a circle as a cylinder, a polygon as its bounding box."""
    boxes, cylinders = [], []
    sections = [r.get("section") for r in robots]
    for part, (x, y, yaw) in zip(parts, np.asarray(poses, dtype=float).reshape(-1, 3)):
        carriers = [k for k, s in enumerate(sections) if s == part.get("section")]
        top = float(ground_height(radius[carriers]).max()) if carriers else 0.0
        z = top + PART_LIFT + PART_THICKNESS / 2
        color = rgba(part.get("color", (150, 110, 60)))
        turn, c, s = yaw_quat(yaw), math.cos(yaw), math.sin(yaw)
        for shape in part.get("shapes", ()):
            ox, oy = (list(shape.get("offset", (0.0, 0.0))) + [0.0, 0.0])[:2]
            at = (x + c * ox - s * oy, y + s * ox + c * oy, z)
            if shape.get("kind") == "circle":
                d = 2 * float(shape.get("radius", 0.05))
                cylinders.append(rows(at, IDENTITY, (d, d, PART_THICKNESS), color))
                continue
            size = shape.get("size") or np.ptp(np.asarray(shape.get("vertices", [[0, 0]]),
                                                          dtype=float), axis=0)
            boxes.append(rows(at, turn, (float(size[0]), float(size[1]), PART_THICKNESS), color))
        for k in carriers:  # the supports: from the robot's top up to the part's underside
            base = ground_height(radius[k])
            cylinders.append(rows((pose7[k, 0], pose7[k, 1], (base + z) / 2), IDENTITY,
                                  (0.03, 0.03, max(z - base, 1e-3)), ARM_BASE))
    return {k: np.concatenate(v) for k, v in (("box", boxes), ("cylinder", cylinders)) if v}


def arm_rows(arms, frames: dict[str, np.ndarray], pose7: np.ndarray) -> dict[str, np.ndarray]:
    """Arms from their world frames (viewer/arms.py's): a pedestal from the robot's pose up to
    the first joint, each link a cylinder from joint to joint (the last to the tool point),
    the joints dark spheres, the gripper's fingers two boxes along the tool's z."""
    cyl, sph, box = [], [], []
    for row, name, arm in arms:
        f = frames.get(name)
        if f is None:
            continue
        p = f[:, :3, 3]
        base = pose7[row, :3]
        h = max(0.01, p[1, 2] - base[2])
        cyl.append(rows(base + (0, 0, h / 2), IDENTITY, (2 * arm.base_radius,) * 2 + (h,),
                        ARM_BASE))
        a, b = p[1:-1], p[2:]
        radii = np.array([link.radius for link in arm.links])
        length = np.linalg.norm(b - a, axis=1)
        cyl.append(rows((a + b) / 2, quat_from_z(b - a),
                        np.column_stack((2 * radii, 2 * radii, np.maximum(length, 1e-3))),
                        ARM_LINK))
        sph.append(rows(a, IDENTITY, np.repeat(2.1 * radii[:, None], 3, axis=1), ARM_JOINT))
        if arm.gripper is not None:
            box.append(_finger_rows(arm.gripper, f[-1]))
    return {k: np.concatenate(v) for k, v in (("cylinder", cyl), ("sphere", sph), ("box", box))
            if v}


def _finger_rows(gripper, tool: np.ndarray) -> np.ndarray:
    """The gripper's two fingers: from the flange along the tool's z to the tool point, half
    the stroke either side along the tool's y."""
    x, y, z, w = matrix_quaternion(tool[:3, :3])
    out = []
    for side in (-1.0, 1.0):
        tip = tool[:3, 3] + tool[:3, 1] * side * gripper.stroke / 2
        root = tip - tool[:3, 2] * gripper.length
        out.append(rows((tip + root) / 2, (w, x, y, z), (2 * FINGER, 2 * FINGER, gripper.length),
                        ARM_JOINT))
    return np.concatenate(out)


def selection_rows(pose7: np.ndarray, radius: float) -> np.ndarray:
    """A ring-like yellow disc on the floor under the selected robot."""
    return rows((pose7[0], pose7[1], 0.004), IDENTITY, (3.2 * radius, 3.2 * radius, 1.0),
                SELECTED)


def merge(*parts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One (K, 14) array per kind from several kind -> rows dicts (the :data:`KINDS`, then
    any other kind a part names: a mesh's, viewer/view3d_meshes.py)."""
    out = {}
    extra = sorted({k for p in parts for k in p if k not in KINDS})
    for kind in KINDS + tuple(extra):
        found = [p[kind] for p in parts if kind in p and len(p[kind])]
        out[kind] = np.concatenate(found) if found else np.zeros((0, 14), dtype=np.float32)
    return out
