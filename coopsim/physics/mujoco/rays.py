"""Range sensing in 3D on the ``mujoco`` engine: rays cast from robots against the 3D geometry
with MuJoCo's batched ray casting (``mujoco.mj_multiRay``).

A robot's rays skip its own geoms (every geom of the tree of bodies its chassis roots: arm
links, fingers, an imported robot's links), and see everything else MuJoCo would draw: the
floor, the walls, objects, other robots, world meshes and a height field. How its own geoms are
skipped: ``mj_multiRay`` excludes a single body (the chassis: enough for a robot of one body),
so during the cast of a robot of several bodies its geoms are put in a geom group no geom of
the model uses and that group is masked out; where every group is in use, its chassis body
alone is excluded.

The bodies' frames are brought up to the joints' positions first (``mj_kinematics``, once
between two steps): after ``mj_step`` MuJoCo's frames lag one substep behind the state every
sensor reads. The physics is untouched by it: the next step computes the frames again.

Frames and units: world frame (z up), metres; quaternions (w, x, y, z) body to world.
"""

from __future__ import annotations

import numpy as np

from . import raykernel as mrk

try:
    import mujoco
except ImportError:  # the engine module says how to install it
    mujoco = None

_GROUPS = 6  # MuJoCo's geom groups a ray can mask (mjNGROUP)
#: Fewer rays than this from one robot go one by one through ``mj_ray``: on the project's VM
#: (MuJoCo 4.0) ``mj_multiRay`` costs ~10 us a call plus 0.3-1.6 us a ray, ``mj_ray`` ~2 us a
#: ray, so the batched call pays from a few rays on. Fewer go in one lean loop over all the
#: robots' rays, screened first (:mod:`.raykernel`): an altimeter's one ray ~25 us of
#: Python and ``mj_ray`` before, mostly none now that the floor alone is below.
FEW = 4
_IDENTITY = np.eye(3).reshape(9)
#: From this many rays on, a lean cast screens them first (:mod:`.raykernel`): below,
#: its fixed cost (~15 us) is more than ``mj_ray``'s in the small worlds that cast so few.
SCREEN = 8


class RobotRays:
    """What casting from the robots of one compiled model needs, worked out once a compile.

    Args:
        model: The compiled MjModel.
        body_ids: (N,) every robot's chassis body id, in robot order.

    Attributes:
        own: Per robot, the ids of the geoms its rays skip (int32 arrays).
        extent: (N, 2) lowest and highest point of each chassis body's own geoms along its
            body z axis, m (body frame; 0, 0 for a body without geoms).
        spare: A geom group no geom uses (its rays mask it out), or -1.
    """

    def __init__(self, model, body_ids: np.ndarray) -> None:
        self.model = model
        self.body_ids = np.asarray(body_ids, dtype=np.int64)
        self.bodies = self.body_ids.tolist()  # as Python ints, what MuJoCo's calls take
        geom_root = model.body_rootid[model.geom_bodyid]
        roots = model.body_rootid[self.body_ids]
        self.own = [np.flatnonzero(geom_root == r).astype(np.int32) for r in roots]
        # a robot whose geoms are all its chassis body's (a quadrotor, a plain ground robot)
        # needs no group swap: MuJoCo's own body exclusion skips them
        self.alone = [bool((model.geom_bodyid[g] == b).all())
                      for g, b in zip(self.own, self.body_ids.tolist())]
        used = set(np.unique(model.geom_group).tolist())
        self.spare = next((g for g in range(_GROUPS - 1, -1, -1) if g not in used), -1)
        # robots whose cast swaps groups (see cast); the others may go through the lean loop
        self.swaps = np.array([self.spare >= 0 and not a for a in self.alone], dtype=bool)
        self.swapping = bool(self.swaps.any())  # none (quadrotors alone): no gather a cast
        self._geomid = np.empty(1, dtype=np.int32)
        self._seen = None  # _screen's geoms, worked out when first asked
        self.mask = np.ones(_GROUPS, dtype=np.uint8)
        if self.spare >= 0:
            self.mask[self.spare] = 0
        self.extent = np.array([_extent(model, np.flatnonzero(model.geom_bodyid == b))
                                for b in self.body_ids], dtype=float).reshape(-1, 2)

    def cast(self, data, rows: np.ndarray, origins: np.ndarray, directions: np.ndarray,
             reach: np.ndarray) -> np.ndarray:
        """Distances from ``origins`` along ``directions`` for robots ``rows``.

        Args:
            data: The MjData whose frames are current (:func:`refresh`).
            rows: (n,) robot rows.
            origins: (n, 3) world-frame points, m.
            directions: (n, k, 3) world-frame unit vectors.
            reach: (n,) farthest distance looked at, m.

        Returns:
            (n, k) distances to the first geom each ray meets, m; ``reach`` where nothing is
            within it. The robot's own geoms are not seen.
        """
        model, n, k = self.model, len(rows), directions.shape[1]
        reach = np.asarray(reach, dtype=float)
        if k < FEW and not (self.swapping and self.swaps[np.asarray(rows, np.int64)].any()):
            if n * k < SCREEN:  # too few to screen: mj_ray for each, capped on floats
                return self._one_by_one(data, rows, origins, directions, reach)
            dist = self._few(data, rows, origins, directions, reach)
            cap = reach[:, None]
            return np.where((dist >= 0.0) & (dist < cap), dist, cap)
        dist = np.empty((n, k))
        geomid = np.empty(k, dtype=np.int32)
        vec = np.ascontiguousarray(directions, dtype=float).reshape(n, 3 * k)
        pnt = np.ascontiguousarray(origins, dtype=float)
        rows = np.asarray(rows).tolist()
        groups = model.geom_group if self.spare >= 0 else None
        for i, row in enumerate(rows):
            swap = groups is not None and not self.alone[row]
            if swap:  # its geoms hidden in the spare group for its cast only
                own = self.own[row]
                saved = groups[own].copy()
                groups[own] = self.spare
            try:
                _cast(model, data, pnt[i], vec[i], self.mask, self.bodies[row], geomid,
                      dist[i], reach[i])
            finally:
                if swap:
                    groups[own] = saved
        cap = reach[:, None]
        return np.where((dist >= 0.0) & (dist < cap), dist, cap)


    def _one_by_one(self, data, rows, origins, directions, reach) -> np.ndarray:
        """:meth:`cast` of fewer rays than :data:`SCREEN` (an altimeter's one ray from each
        of a few quadrotors) that swap no groups: ``mj_ray`` for each, as :meth:`_few` calls
        it, and its cap on floats (the same test as the array path's ``np.where``)."""
        n, k = directions.shape[:2]
        vec = np.ascontiguousarray(directions, dtype=float)
        pnt = np.ascontiguousarray(origins, dtype=float)
        out = np.empty((n, k))
        ray, model, mask, geomid, bodies = mujoco.mj_ray, self.model, self.mask, \
            self._geomid, self.bodies
        for i, (row, cap) in enumerate(zip(np.asarray(rows).tolist(), reach.tolist())):
            for j in range(k):
                d = ray(model, data, pnt[i], vec[i, j], mask, 1, bodies[row], geomid)
                out[i, j] = d if d >= 0.0 and d < cap else cap
        return out

    def _few(self, data, rows, origins, directions, reach) -> np.ndarray:
        """(n, k) raw ``mj_ray`` distances (-1: no hit) of a few rays from each robot none of
        whose casts swaps groups (an altimeter's one ray, a quadrotor's). The rays that only
        the planes can stop are worked out compiled (:func:`.raykernel.screen`, the
        same bits); the others go through ``mj_ray`` in one lean loop, the calls
        :func:`_cast` makes for them without its per-robot Python."""
        n, k = directions.shape[:2]
        vec = np.ascontiguousarray(directions, dtype=float).reshape(n * k, 3)
        pnt = np.ascontiguousarray(origins, dtype=float)
        bodies = self.body_ids[np.asarray(rows, dtype=np.int64)]
        if k > 1:
            pnt, bodies, reach = (np.repeat(pnt, k, axis=0), np.repeat(bodies, k),
                                  np.repeat(reach, k))
        dist = np.full(n * k, mrk.ASK)
        # the screen bounds each ray's segment by its reach: an unbounded one goes to mj_ray
        screen = self._screen(data) if n * k >= SCREEN and np.isfinite(reach).all() else None
        ask = range(n * k)  # unscreened (a few rays): every one through mj_ray
        if screen is not None:
            mrk.screen(pnt, vec, bodies, np.ascontiguousarray(reach, dtype=float), screen[0],
                       self.model.geom_bodyid, data.geom_xpos, data.geom_xmat,
                       self.model.geom_aabb, *screen[1:], dist)
            ask = np.flatnonzero(dist == mrk.ASK).tolist()
        ray, model, mask, geomid = mujoco.mj_ray, self.model, self.mask, self._geomid
        for i in ask:
            dist[i] = ray(model, data, pnt[i], vec[i], mask, 1, int(bodies[i]), geomid)
        return dist.reshape(n, k)

    def _screen(self, data):
        """The geoms :func:`.raykernel.screen` looks at now (those ``mj_ray`` would
        not skip with this mask: visible, in an unmasked group), or None (a plane turned away
        from the world's frame: ``mj_ray`` for all)."""
        if self._seen is None:
            self._seen = _seen(self.model, self.mask)
        others, planes = self._seen
        if (data.geom_xmat[planes] != _IDENTITY).any():
            return None
        return others, planes, data.geom_xpos[planes], self.model.geom_size[planes]


def _seen(model, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ids of the geoms (not planes) and of the planes ``mj_ray`` would not skip with
    ``mask`` whatever the robot: visible (alpha > 0, the material's where it has one), in an
    unmasked group. (Nothing changes a geom's colour or group while a layout lasts but a
    robot's swapped cast, which does not come here.)"""
    group = np.clip(model.geom_group, 0, _GROUPS - 1)
    alpha = np.where(model.geom_matid < 0, model.geom_rgba[:, 3],
                     model.mat_rgba[np.maximum(model.geom_matid, 0), 3] if model.nmat else 0.0)
    seen = (alpha != 0) & (mask[group] != 0)
    plane = model.geom_type == int(mujoco.mjtGeom.mjGEOM_PLANE)
    return np.flatnonzero(seen & ~plane), np.flatnonzero(seen & plane)


def _cast(model, data, pnt, vec, mask, body, geomid, dist, cutoff) -> None:
    """``dist`` (k,) of the k rays ``vec`` (3 k,) from ``pnt``, ``body`` excluded: one
    ``mj_multiRay`` for many rays, ``mj_ray`` one by one for a few (see :data:`FEW`)."""
    k = len(dist)
    if k >= FEW:
        mujoco.mj_multiRay(model, data, pnt, vec, mask, 1, body, geomid, dist, None, k,
                           float(cutoff))
        return
    ray, one = mujoco.mj_ray, geomid[:1]
    for j in range(k):
        dist[j] = ray(model, data, pnt, vec[3 * j:3 * j + 3], mask, 1, body, one)


def _extent(model, geoms: np.ndarray) -> tuple[float, float]:
    """Lowest and highest body-frame z of ``geoms``' bounding boxes, m (0, 0 if none)."""
    if not len(geoms):
        return 0.0, 0.0
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)],
                       dtype=float)
    low, high = np.inf, -np.inf
    for g in geoms.tolist():
        box = model.geom_aabb[g]
        local = box[:3] + corners * box[3:]  # (8, 3) in the geom's frame
        mat = np.empty(9)
        mujoco.mju_quat2Mat(mat, model.geom_quat[g])
        z = local @ mat.reshape(3, 3)[2] + model.geom_pos[g][2]
        low, high = min(low, float(z.min())), max(high, float(z.max()))
    return low, high


def refresh(model, data) -> None:
    """Bring every body's and geom's frame up to the joints' positions (see the module)."""
    mujoco.mj_kinematics(model, data)
