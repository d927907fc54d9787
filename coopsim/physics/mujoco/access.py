"""What the ``mujoco`` engine's modules read and set beyond the step: a mixin of
:class:`~coopsim.physics.mujoco.engine.MujocoEngine` (kept apart so that the engine's own
module holds the world's layout, compile and step).

* Arms (:mod:`coopsim.physics.mujoco.arms`): their joints' state and servo set points, the
  wrist's force-torque sensor, and grasps as welds (:meth:`Access.attach`).
* Robots from description files: their moving joints' positions and their ``links`` documents
  (:mod:`coopsim.physics.mujoco.links`).
* Camera images (``camera3d``): geoms painted in their objects' colours and offscreen renders
  in the run's render process (:mod:`coopsim.physics.mujoco.renderproc`, started on first use),
  each camera's own robot left out of its image.
* The 2D casters' geometry (the engines' common ray casters, used by the 2D engines' sensors and
  any cast not made in 3D): :meth:`Access.static_geometry` and :meth:`Access.moving_geometry`
  give the floor projection of what reaches into the slice ``z <= SLICE_TOP`` (a body whose
  lowest point is higher is left out: a shelf, a flying object), boxes as their four edges
  turned by their yaw, cylinders and spheres as circles, an arm's joints as circles of their
  links' radii (moving geometry), numpy over index arrays gathered once a layout.
* Bodies put somewhere between steps: :meth:`Access.reset_rows` (a planar state) and
  :meth:`Access.hold_rows` (an external robot's full pose, held: :mod:`coopsim.physics.mujoco.held`).
* Bodies' poses (:meth:`Access.poses`, :meth:`Access.poses3d`, from index arrays kept per
  list of handles: :mod:`coopsim.physics.mujoco.bodies`) and the robots' contacts.
* Range sensing in 3D: :meth:`Access.cast3d` casts from world-frame origins against the
  compiled model with each robot's own geoms skipped (:mod:`coopsim.physics.mujoco.rays`).

Frames and units: world frame (z up), metres; colours 0-255 RGB.
"""

from __future__ import annotations

import numpy as np

from ...model.errors import SimulationError
from . import arms as ma
from . import bodies as mbt
from . import build as mb
from . import held as mhd
from . import links as ml
from . import rays as mr
from . import servos as msv
from . import state as ms
from ..shapes import as_geometry
from .build import WALL_THICKNESS, Body

try:
    import mujoco
except ImportError:  # the engine says how to install it
    mujoco = None

SLICE_TOP = 1.0  # m: bodies whose lowest point is higher are not in the ray caster's 2D world


class Access:
    """The engine's reads and sets beyond the step; it uses the engine's ``model``, ``data``,
    ``_ready`` (the model compiled for the current layout), ``_arms``, ``_bodies``,
    ``_robots``, ``_imports``, ``_scenery``, ``_stale``, ``_moved``, ``_arm_table`` and
    ``_renderer``."""

    # -- arms (mujoco.arms) -------------------------------------------------------------------

    def _arm_rows(self, handles: list) -> tuple:
        """The arm table of the current model (compiled if need be) and the rows of arm
        handles in it."""
        self._ready()
        if self._arm_table is None:
            self._arm_table = ma.ArmTable(self._arms)
        return self._arm_table, self._arm_table.rows(handles)

    def arm_state(self, handles: list) -> np.ndarray:
        """See :meth:`Engine.arm_state`; the torque is the servo's, gravity compensation
        included (MuJoCo's ``qfrc_actuator``, capped at the link's ``max_effort``)."""
        table, rows = self._arm_rows(handles)
        return table.state(self.data, rows)

    def set_arm_targets(self, handles: list, q: np.ndarray, qd: np.ndarray) -> None:
        """See :meth:`Engine.set_arm_targets`; angles beyond a joint's limits are clipped to
        them (the modules refuse them first).

        Raises:
            SimulationError: a set point is NaN or infinite.
        """
        table, rows = self._arm_rows(handles)
        table.set(self.data, rows, q, qd)

    def wrist_wrench(self, handles: list) -> np.ndarray:
        table, rows = self._arm_rows(handles)
        return table.wrench(self.data, rows)

    # -- robots from description files (mujoco.links) -------------------------------------------

    def described_positions(self, handles: list) -> np.ndarray:
        """See :meth:`Engine.described_positions` (mujoco.links.positions)."""
        return ml.positions(self._imports, self.model, self.data, handles)

    def servo_targets(self, handles: list, targets: np.ndarray | None = None) -> np.ndarray:
        """(K, width) the held joints' set points (rad or m; NaN beyond a robot's) of the
        described robots mounted on ``handles``; with ``targets`` ((K, width), NaN beyond),
        first hold those (NaN: the joint's home; mujoco.servos: the ``servos`` module checked
        their limits)."""
        self._ready()
        by_mount = {id(i.mount): i for i in self._imports}
        width = 32 if targets is None else np.shape(targets)[1]
        out = np.full((len(handles), width), np.nan)
        for k, h in enumerate(handles):
            found = by_mount.get(id(h))
            if found is None or not found.servos:
                continue
            n = min(len(found.servos), width)
            if targets is not None:  # NaN: the joint's home
                row = np.array(found.target, dtype=float)
                given = np.asarray(targets[k][:n], dtype=float)
                homes = np.array([s.home for s in found.servos[:n]])
                row[:n] = np.where(np.isnan(given), homes, given)
                msv.set_targets(self.data, found, row)
            out[k, :n] = found.target[:n]
        return out

    def links_document(self, handle) -> dict | None:
        """See :meth:`Engine.links_document` (mujoco.links)."""
        return ml.document_of(self._imports, handle)

    def attach(self, a, b, kind: str, anchor: tuple[float, float]):
        """See :meth:`Engine.attach`: ``a`` must be an arm's handle and ``b`` a movable
        object's or body's; b is welded to the arm's tool at their pose now (``pin`` holds as
        rigidly as ``weld``: a gripper's fingers do not let a held object swing)."""
        if not isinstance(a, ma.Arm):
            raise SimulationError("the mujoco engine holds objects only in an arm's gripper: "
                                  "attach needs an arm's handle")
        if not isinstance(b, Body) or b.static or b.name not in self._bodies:
            raise SimulationError(f"{a.label} can hold only a movable body, not "
                                  f"{getattr(b, 'label', b)}")
        if any(g.body is b for arm in self._arms for g in arm.grasps):
            raise SimulationError(f"{b.label} is held already")
        if a.grasps:
            raise SimulationError(f"{a.label} holds {a.grasps[0].body.label} already")
        self._ready()
        mujoco.mj_kinematics(self.model, self.data)  # frames of now, not the last substep's
        return ma.grasp(self.model, self.data, a, b)  # in place: no recompile

    def detach(self, handle) -> None:
        if not isinstance(handle, ma.Grasp):
            raise SimulationError("detach takes what attach returned")
        if self._stale:  # the next compile leaves it out
            ma.release(None, None, handle)
        else:
            ma.release(self.model, self.data, handle)

    # -- camera images (mujoco.camera) ----------------------------------------------------------

    def paint(self, handles, color) -> None:
        """Colour the geoms of bodies ``handles`` in the model's spec (a camera3d image's
        colours; the physics ignores them; a description's own visuals keep theirs): the
        next compile, which adding a body brings, carries them."""
        rgba = [c / 255.0 for c in color] + [1.0]
        for body in handles:
            if isinstance(body, Body):
                for geom in body.element.geoms:
                    geom.rgba = rgba

    def render_images(self, views: list, rows=None) -> list[tuple]:
        """Offscreen images rendered now by the run's render process
        (:mod:`coopsim.physics.mujoco.renderproc`), started on first use: a world whose
        cameras nobody reads starts none. ``rows``: per view, the robot row whose own geoms
        it does not see (its camera's robot), or None."""
        process = self._render_process()
        return process.render(self.model, self.data, views, self._hidden(rows, views))

    def render_submit(self, views: list, rows, keys: list, tags: list | None = None) -> None:
        """Queue images of the world as of now (rendered while the run steps on); view i's are
        taken with :meth:`render_take` of ``keys[i]``, with ``tags[i]``. ``rows`` as in
        :meth:`render_images`."""
        self._render_process().submit(self.model, self.data, views, self._hidden(rows, views),
                                      keys, tags)

    def render_take(self, key):
        """(tag, (rgb, depth or None)) queued under ``key`` by :meth:`render_submit` (waiting
        for it), None when none is (never queued, or lost with a render process that died)."""
        return self._render_process().take(key)

    def render_ready(self, key) -> bool:
        """Whether :meth:`render_take` of ``key`` would return without waiting (its images
        are back, or it has none queued); never waits itself."""
        return self._renderer is None or self._renderer.ready(key)

    def render_fd(self) -> int | None:
        """The render process's socket (readable when images are back), None before it runs."""
        return self._renderer.fileno() if self._renderer is not None else None

    def render_memory(self) -> int:
        """Bytes of shared memory the render process and this one map for images now."""
        return self._renderer.shared_bytes() if self._renderer is not None else 0

    def render_trim(self, keep: int) -> bool:
        """Release the render process's shared memory when it is over ``keep`` bytes and no
        request is queued (a huge read's megabytes are not kept; the next image maps what it
        needs). False: a request still renders, try later."""
        return self._renderer is None or self._renderer.trim(keep)

    def render_pid(self) -> int | None:
        """The process id of the run's render process (None before the first image): what a
        benchmark reads its CPU time by."""
        return self._renderer.pid if self._renderer is not None else None

    def close(self) -> None:
        """End the run's render process (a later image starts a new one)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    def _render_process(self):
        """The run's render process client, made on first use (the model compiled first)."""
        from .renderproc import RenderProcess

        if self._renderer is None:
            self._renderer = RenderProcess()
        self._ready()  # the model compiled for the current layout
        return self._renderer

    def _hidden(self, rows, views: list) -> list | None:
        """Per view, the geom ids of its robot (every geom of the tree its chassis roots)."""
        if rows is None:
            return None
        table = self._ready()
        model = self.model
        held = getattr(self, "_own_geoms", None)  # [model, {row: geom ids}]
        if held is None or held[0] is not model:
            held = self._own_geoms = [model, {}]
        out = []
        for row in rows:
            if row is None:
                out.append(None)
                continue
            ids = held[1].get(int(row))
            if ids is None:
                root = model.body_rootid[table.ids[int(row)]]
                ids = held[1][int(row)] = np.flatnonzero(
                    model.body_rootid[model.geom_bodyid] == root).astype(np.int32)
            out.append(ids)
        return out

    # -- geometry for the 2D casters -------------------------------------------------------------

    def static_geometry(self):
        circles: list = []
        segments = ms.wall_segments(self.floor.length, self.floor.width, WALL_THICKNESS)
        for body in self._bodies.values():
            if body.static and body.lowest(None) <= SLICE_TOP:
                ms.outline(body.shapes, *body.pose(None), body.group, circles, segments)
        if self._scenery.meshes or self._scenery.terrain is not None:
            self._ready()  # the meshes' vertices are the compiled model's
            segments += self._scenery.segments(self.model, self.data, SLICE_TOP)
        return as_geometry(circles, segments)

    def moving_geometry(self):
        rows = self._ready()
        if rows.movers is None:  # the bodies that move and are no robot's, once a layout
            robots = {id(b) for b in self._robots}
            rows.movers = mbt.Outlines([b for b in self._bodies.values()
                                        if not b.static and id(b) not in robots])
        c, groups, s, sgroups = rows.movers.geometry(self.data.qpos, SLICE_TOP)
        if self._arms:
            arms = ma.outlines(self._arm_rows([])[0], self.data, SLICE_TOP)
            c, groups = np.vstack([c, arms[:, :3]]), np.concatenate(
                [groups, arms[:, 3].astype(np.int64)])
        return c, groups, s, sgroups

    # -- range sensing in 3D (mujoco.rays) ---------------------------------------------------

    def cast3d(self, rows: np.ndarray, origins: np.ndarray, directions: np.ndarray,
               reach: np.ndarray) -> np.ndarray:
        """Distances (len(rows), k), m, from world-frame ``origins`` (n, 3) along unit
        ``directions`` (n, k, 3) against the 3D geometry, each robot's own geoms skipped;
        ``reach`` (n,) m where nothing is within it (:mod:`coopsim.physics.mujoco.rays`)."""
        return self._rays().cast(self.data, rows, origins, directions, reach)

    def chassis_extent(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), 2) lowest and highest point of each robot's chassis body along its
        body z axis, m, body frame (where its range sensors sit and its underside is)."""
        return self._rays().extent[np.asarray(rows, dtype=np.int64)]

    def _rays(self) -> mr.RobotRays:
        """The ray tables of the current layout, the frames brought up to this step's state."""
        rows = self._ready()
        held = getattr(self, "_rays3d", None)  # [robot rows, steps moved, RobotRays]
        if held is None or held[0] is not rows:
            held = self._rays3d = [rows, -1, mr.RobotRays(self.model, rows.ids)]
        if held[1] != self._moved:
            mr.refresh(self.model, self.data)
            held[1] = self._moved
        return held[2]

    # -- poses and contacts (mujoco.bodies, mujoco.state) ------------------------------------

    def poses3d(self, handles: list) -> np.ndarray:
        """See :meth:`Engine.poses3d`: each body's real position and orientation now, from
        its joints as :meth:`state3d` (MuJoCo's body frames lag a substep behind them)."""
        return self._table(handles).poses3d(self.data.qpos)

    def _table(self, handles: list) -> mbt.BodyTable:
        """The index arrays of ``handles`` in the current model (compiled if need be), kept
        for the last few lists asked for (the snapshot's objects, a module's bodies)."""
        self._ready()
        key = tuple(map(id, handles))
        table = self._tables.get(key)
        if table is None or table[0] is not self.model:
            if len(self._tables) >= 8:  # lists of bodies gone with old layouts
                self._tables.clear()
            # the handles are held with the table: their ids stay theirs while it lives
            table = self._tables[key] = (self.model, mbt.BodyTable(handles), list(handles))
        return table[1]

    def contacts(self, pose: np.ndarray) -> np.ndarray:
        """See :meth:`Engine.contacts`; touching the floor does not count."""
        rows = self._ready()
        data, n = self.data, len(self._robots)
        if not data.ncon or not n:
            return np.zeros((n, 2))
        geoms = data.contact.geom[:data.ncon]
        keep = (geoms != 0).all(axis=1)  # geom 0 is the floor
        bodies = self.model.geom_bodyid[geoms[keep]]
        return ms.contact_sides(bodies, data.contact.pos[:data.ncon][keep, :2],
                                rows.row_of_body, np.asarray(pose), n)

    def poses(self, handles: list) -> np.ndarray:
        return self._table(handles).poses(self.data.qpos)

    # -- bodies put somewhere between steps ------------------------------------------------------

    def reset_rows(self, rows: np.ndarray, state: np.ndarray) -> None:
        """See :meth:`Engine.reset_rows`: each chassis put at the planar state (a free body
        level, at the height it started at), its drive command and wrench dropped."""
        table = self._ready()
        state = np.asarray(state, dtype=np.float64).reshape(len(rows), 6)
        for k, s in zip(np.asarray(rows).tolist(), state):
            table.bodies[k].place(self.data, s)
        self._settle(table, rows)

    def hold_rows(self, rows: np.ndarray, states: np.ndarray) -> None:
        """See :meth:`Engine.hold_rows`: each chassis at its full pose (a ground one at the
        planar part), immovable through the step (:mod:`coopsim.physics.mujoco.held`)."""
        table = self._ready()
        mhd.hold(self.model, self.data, [table.bodies[k] for k in np.asarray(rows).tolist()],
                 states)
        self._settle(table, rows)

    def _settle(self, table, rows) -> None:
        """After bodies ``rows`` were put somewhere: their drive commands and wrenches dropped,
        the state's derived quantities worked out again (``mj_forward``), moved counted."""
        self._moved += 1
        table.mode[rows], table.cmd[rows], table.wrench[rows] = mb.STILL, 0.0, 0.0
        self.data.xfrc_applied[table.ids[rows]] = 0.0
        mujoco.mj_forward(self.model, self.data)
