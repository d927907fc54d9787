"""The mujoco engine's scenery (:mod:`coopsim.model.scenery`): static meshes and a height
field in the world's MuJoCo model, ground robots riding on the height field, and what of them
the 2D range sensors see.

* A mesh is a static body of its own (so the broadphase tests it only where it is) with one
  mesh geom, its vertices scaled as the file says. MuJoCo collides a mesh as its **convex
  hull**: a concave shape (an arch, a U) is to be cut into convex files, one ``[MESH_n]``
  each. Meshes touch everything (``SOLID``): ground robots stop against them as against a
  wall, objects and quadrotors rest and land on them.
* The height field is MuJoCo's hfield (``FLOOR`` bits: objects and flyers fall and land on
  it). A ground robot does not touch the floor (mujoco.build); on a world with a height field
  each ground body gets a fourth joint, a slide along z, that follows the ground's height
  under its origin, set moving towards it every step (:class:`Ground`): it rides over the
  terrain level (it does not tilt), at any slope, as if its wheels always kept contact.
* The 2D ray caster sees each mesh that reaches into its slice as its convex hull's floor
  outline (the projection of all its vertices, as MuJoCo collides it), and the height field's
  cells higher than its ``seen_above`` as rectangles (none by default: the terrain is ground).

Frames and units: world frame (z up), metres, radians; quaternions (w, x, y, z).
"""

from __future__ import annotations

import numpy as np

from ...model.scenery import MeshSpec, TerrainSpec, hull
from . import build as mb
from . import state as ms

try:
    import mujoco
except ImportError:  # the engine is optional
    mujoco = None


class Scenery:
    """What a world's scenery made in the model: its meshes' bodies and its terrain.

    Attributes:
        meshes: (MeshSpec, MuJoCo body name) in file order.
        terrain: The height field, or None.
    """

    def __init__(self) -> None:
        self.meshes: list[tuple[MeshSpec, str]] = []
        self.terrain: TerrainSpec | None = None
        self._outline: tuple | None = None  # (model, circles, segments) of the meshes

    def add(self, spec, meshes: tuple, terrain: TerrainSpec | None) -> None:
        """Build ``meshes`` and ``terrain`` into the MjSpec ``spec``."""
        for k, m in enumerate(meshes, len(self.meshes) + 1):
            name = f"scenery:{k}:{m.name}"
            if m.vertices is None:
                spec.add_mesh(name=name, file=m.path, scale=list(m.scale))
            else:  # an ASCII STL: its triangles as read
                spec.add_mesh(name=name, uservert=m.vertices.ravel().tolist(),
                              userface=list(range(len(m.vertices))), scale=list(m.scale))
            body = spec.worldbody.add_body(name=name, pos=list(m.position), quat=list(m.quat()))
            body.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_MESH, meshname=name,
                          contype=mb.SOLID, conaffinity=mb.SOLID,
                          friction=[mb.WALL_FRICTION, 0.005, 0.0001],
                          rgba=[c / 255 for c in m.color] + [1.0])
            self.meshes.append((m, name))
        if terrain is not None:
            self.terrain = terrain
            _add_hfield(spec, terrain)

    def segments(self, model, data, slice_top: float) -> list:
        """The floor outlines (x1, y1, x2, y2, 0) of the meshes whose lowest vertex is at most
        ``slice_top`` m high and of the terrain's cells above its ``seen_above``."""
        if self._outline is None or self._outline[0] is not model:
            segs: list = []
            for _, name in self.meshes:
                g = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name)
                m = model.geom_dataid[g]
                world = _hull_vertices(model, m) @ data.geom_xmat[g].reshape(3, 3).T \
                    + data.geom_xpos[g]
                if world[:, 2].min() > slice_top:
                    continue
                pts = hull(world[:, :2]).tolist()
                segs += [(p[0], p[1], q[0], q[1], 0) for p, q in zip(pts, pts[1:] + pts[:1])]
            for cx, cy, length, width in (self.terrain.outline if self.terrain else ()):
                ms.outline((("box", length, width, 0.0, 0.0),), cx, cy, 0.0, 0, [], segs)
            self._outline = (model, segs)
        return list(self._outline[1])


def _hull_vertices(model, m: int) -> np.ndarray:
    """(k, 3) the vertices of mesh ``m``'s convex hull (MuJoCo's, which it collides with; all
    its vertices where it kept none), mesh frame."""
    verts = model.mesh_vert[model.mesh_vertadr[m]:model.mesh_vertadr[m] + model.mesh_vertnum[m]]
    adr = model.mesh_graphadr[m]
    if adr < 0:
        return verts
    n = model.mesh_graph[adr]  # the graph: nvert, nface, then each vertex's edge address,
    return verts[model.mesh_graph[adr + 2 + n:adr + 2 + 2 * n]]  # then their mesh indices


def _add_hfield(spec, t: TerrainSpec) -> None:
    """The height field: MuJoCo's hfield from the normalised grid, in a static body of its
    own; the floor plane lets ground bodies' z joints be (they never touch either)."""
    rows, cols = t.heights.shape
    length, width, height = t.size
    spec.add_hfield(name="terrain", nrow=rows, ncol=cols,
                    size=[length / 2, width / 2, height, t.base],
                    userdata=t.heights.ravel().tolist())
    body = spec.worldbody.add_body(name="terrain", pos=list(t.position))
    body.add_geom(name="terrain", type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname="terrain",
                  contype=mb.FLOOR, conaffinity=mb.FLOOR,
                  friction=[mb.FLOOR_FRICTION, 0.005, 0.0001])


def ride(body: mb.Body) -> None:
    """Give a ground body its fourth joint, a slide along z after its three (its x, y, yaw
    stay the first three coordinates), which :class:`Ground` moves."""
    body.element.add_joint(name=f"{body.name}:z", type=mujoco.mjtJoint.mjJNT_SLIDE,
                           axis=[0, 0, 1])


class Ground:
    """The riding ground bodies of one compiled model and the terrain they follow.

    Args:
        terrain: The height field.
        bodies: The ground bodies (each with :func:`ride`'s joint), bound to ``model``.
        model: The compiled model.
    """

    def __init__(self, terrain: TerrainSpec, bodies: list, model) -> None:
        self.terrain, self.model = terrain, model
        self.q = np.array([b.qadr for b in bodies], dtype=np.int64)
        self.d = np.array([b.dadr for b in bodies], dtype=np.int64)
        # what holds each body up along its z joint: its weight (its arm's included)
        self.weight = np.array([model.body_subtreemass[b.id] for b in bodies]) * mb.GRAVITY

    def follow(self, data, dt: float) -> None:
        """Start each body's z joint towards the ground's height under its origin now, at
        the rate that takes it there in the step of ``dt`` s, its weight held: once a step
        (not each substep), as the drive's horizontal motion in a step is millimetres."""
        if not len(self.q):
            return
        qpos = data.qpos
        z = self.terrain.height_at(qpos[self.q], qpos[self.q + 1])
        data.qvel[self.d + 3] = (z - qpos[self.q + 3]) / dt
        data.qfrc_applied[self.d + 3] = self.weight

    def lift(self, full: np.ndarray, free: np.ndarray, static: np.ndarray) -> None:
        """Add the ground's height under each ground robot to its z in ``full`` ((N, 13)
        :meth:`~coopsim.physics.engine.Engine.state3d` rows, in place)."""
        g = np.flatnonzero(~free & ~static)
        if len(g):
            full[g, 2] += self.terrain.height_at(full[g, 0], full[g, 1])
