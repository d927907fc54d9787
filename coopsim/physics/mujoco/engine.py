"""The ``mujoco`` engine: rigid bodies in 3D on MuJoCo, ground robots and flyers in one world.

* The world is a MuJoCo model built from the engine-neutral specs with ``mujoco.MjSpec``: the
  floor plane (z = 0, up), four walls ``WALL_HEIGHT`` m tall standing just outside the floor's
  edges, objects (boxes, cylinders, spheres, standing on the floor unless their bottom is above
  it; static when their mass is 0, else on a free joint, sliding with floor friction), and the
  robots' bodies. Adding or removing something between steps marks the model stale; it is
  compiled again before the next step or query, and every body that stays keeps its state
  (its joint positions and velocities copied across the compile by body).
* Ground robots (``BodySpec(free=False)``) stand on the floor on three joints (slide x, slide
  y, hinge z, world axes), their shapes ``height`` m tall above their origin (``z``). Their
  drives work like pymunk's control body: every substep a force and a torque pull the chassis's
  velocity to the commanded one (world frame), capped by the member's ``max_force`` and
  ``max_torque``, so a robot pushes light objects and stalls against a wall. A ground robot
  does not touch the floor (the two never collide): it neither sinks nor rubs.
* Free bodies (``BodySpec(free=True)``, quadrotors) sit on a free joint under gravity; a
  wrench given in the body frame (:meth:`MujocoEngine.apply_wrench`) is turned into the world
  frame every substep and held until set again.
* Arms (the ``arms`` feature, :mod:`coopsim.physics.mujoco.arms`): each ArmSpec of an
  assembly is a chain of bodies nested in the body it is mounted on, its joints driven by
  MuJoCo servo actuators with gravity compensation (:meth:`MujocoEngine.set_arm_targets`,
  :meth:`MujocoEngine.arm_state`), a force-torque sensor at the wrist
  (:meth:`MujocoEngine.wrist_wrench`) and grasps as welds (:meth:`MujocoEngine.attach` with
  an arm's handle). A static chassis (an arm's pedestal) is a robot that stands still.
* One :meth:`MujocoEngine.step` of ``dt`` is ``ceil(dt / MAX_SUBSTEP)`` MuJoCo steps
  (semi-implicit Euler; ``implicitfast`` in a world with arms, for their servos' damping), so
  contacts stay stiff at the simulation's 0.02 s steps; shorter ones where an attached
  description's ``<option timestep>`` is shorter (:meth:`MujocoEngine._longest_substep`).
* What modules read and set beyond the step (arms, grasps, described robots' joints, camera
  images, the 2D casters' floor-slice geometry, range sensing in 3D) is
  :class:`~coopsim.physics.mujoco.access.Access`'s, which the engine inherits.

* MuJoCo's arena (contacts, constraints, the step's scratch) is sized from the world at every
  compile (:func:`coopsim.physics.mujoco.build.arena_bytes`); when a pile's contacts still
  overflow it, MuJoCo drops them and :meth:`MujocoEngine.warnings` says so once. Bodies may not
  start below the floor or inside each other here (``strict_placement``: the loaders and the
  world refuse such placements, :mod:`coopsim.model.placement`).

MuJoCo is deterministic on one thread: the same scenario and seed give the same bits. After
every MuJoCo substep each tree of bodies (a robot with its arm, an object) is checked: one whose
state went non-finite or beyond :mod:`coopsim.model.health`'s bounds is put back where it was
at the start of the step, at rest, alone (:mod:`coopsim.physics.mujoco.health`; MuJoCo's own
reset of every body on a bad state is turned off), and :meth:`MujocoEngine.diverged` says which.
MuJoCo is optional (``pip install 'coopsim[3d]'``): only this module, its mixin
(:mod:`coopsim.physics.mujoco.access`) and its builders (:mod:`coopsim.physics.mujoco.build`,
:mod:`coopsim.physics.mujoco.arms`, ...) import it, and only when the engine is chosen
(engines load lazily).

Frames and units: world frame (z up), metres, kilograms, seconds, radians; quaternions (w, x,
y, z) turn the body frame into the world frame.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from ...model.errors import SimulationError
from ...description.arm import ImportedArmSpec
from ...description.rotors import remix_rows
from ...model.robot_type import Assembly
from ...model.specs import FloorSpec, ObjectSpec
from . import arms as ma
from . import build as mb
from . import drive as md
from . import health as mh
from . import imported as mi
from . import scenery as msc
from . import imported_arm as mia
from . import servos as msv
from . import links as ml
from . import state as ms
from ..engine import Engine, Handles
from .access import SLICE_TOP, Access  # noqa: F401 (SLICE_TOP: tests)
from .build import GRAVITY, MAX_SUBSTEP, WALL_THICKNESS, Body  # noqa: F401 (GRAVITY: tests)

try:
    import mujoco
except ImportError:  # the engine is optional: choosing it says how to install it
    mujoco = None
else:
    # MuJoCo's own handler appends every warning to MUJOCO_LOG.TXT in the working folder (the
    # user's, not ours to write in); the engine puts a diverged body back itself
    # (mujoco.health), so a warning only needs to reach the log.
    mujoco.set_mju_user_warning(logging.getLogger("coopsim.mujoco").warning)

INSTALL = "pip install 'coopsim[3d]'"
_STILL, _DIFFERENTIAL, _VELOCITY = mb.STILL, mb.DIFFERENTIAL, mb.VELOCITY
_FULL = (int(mujoco.mjtWarning.mjWARN_CONTACTFULL),  # the arena overflowed
         int(mujoco.mjtWarning.mjWARN_CNSTRFULL)) if mujoco is not None else None


class MujocoEngine(Access, Engine):
    """Rigid bodies in 3D with MuJoCo: ground robots, arms, movable objects and flying
    bodies (``pip install 'coopsim[3d]'``).

    Gravity along -z, the floor a plane with walls 4 m tall at its edges, objects as boxes,
    cylinders and spheres (standing on the floor unless their bottom is above it; movable ones
    slide with floor friction 0.5); ground robots ride on the floor (x, y, yaw) and are driven
    like pymunk's (the drive's force and torque caps, so they push and stall); free bodies
    (``BodySpec(free=True)``: quadrotors) fly under body-frame wrenches; arms (``irb120``,
    ``mh5``, ``lwa``, ``mobile_lwa``: the ``arms`` feature) turn their joints with servos, and
    their ``gripper`` grasps (a grab welds the object to the arm's last link). A step of ``dt``
    is cut into n = ceil(dt / 5 ms) equal MuJoCo steps of dt / n (so at most 5 ms each): dt
    0.02 s is four 5 ms steps, 0.01 s two, 0.012 s three of 4 ms, 0.002 s (the arm scenarios)
    one, 0.1 s twenty. No joints between a robot's bodies besides an arm's (a ``team2``'s
    carried bar is refused), and no grasp without an arm: a ground robot's ``gripper``
    (``gripperbot``) answers ``grab`` with error 8 (``the mujoco engine holds objects only in
    an arm's gripper``). Use it for quadrotors, arms and ground robots in one world (the
    ``flight`` and ``arms`` features).
    """

    label = "mujoco"
    description = ("3D rigid bodies (MuJoCo): ground robots, arms, movable objects and free "
                   "flyers in one world")
    features = frozenset({"flight", "differential", "velocity", "movable_objects", "arms",
                          "descriptions", "scenery"})
    strict_placement = True  # a body started inside another is thrown out by its contacts
    checks_health = True

    def __init__(self, floor: FloorSpec) -> None:
        if mujoco is None:
            raise SimulationError(self.missing())
        super().__init__(floor)
        self.spec = mb.new_spec(floor)
        self._bodies: dict[str, Body] = {}  # MuJoCo body name -> body, in insertion order
        self._count = 0  # bodies made so far: their names stay unique
        self._robots: list[Body] = []
        self.model = self.data = None
        self._stale = True  # the model must be compiled before it is used
        self._rows: md.Rows | None = None
        self._arms: list[ma.Arm] = []  # in insertion order
        self._arm_table: ma.ArmTable | None = None
        self._imports: list[mi.Imported] = []  # robots from description files (mujoco.imported)
        self._diverged: list = []  # what the last step put back (mujoco.health)
        self._substeps: tuple = (None, 0.0, 1)  # model, dt, MuJoCo steps per step
        self._moved = 0  # steps and resets so far: the robots' state read since is kept
        self._mean = None  # (rows, step, (driven, 3)): ground robots' mean velocity (step)
        self._mixers: dict = {}  # id(body) -> a described multirotor's Mixer (description.rotors)
        self._states: tuple = (-1, None, None, None)  # moved, rows, state3d, robot_state
        self._tables: dict = {}  # id()s of a list of bodies -> (model, BodyTable, the list)
        self._notes: tuple[str, ...] = ()  # what warnings() has said (once each)
        self._warned: tuple | None = None  # (data, its warning counts, the overflow kinds)
        self._scenery = msc.Scenery()  # meshes and a height field (mujoco.scenery)
        self._ground: msc.Ground | None = None  # the bodies riding on the height field
        self._renderer = None  # camera3d's render process (mujoco.renderproc), on first use

    @classmethod
    def refuses_assembly(cls, assembly: Assembly) -> str:
        """The base checks, then what MuJoCo's compiler refuses of a robot from a description
        file, built as a run builds it (:func:`coopsim.physics.mujoco.imported.refusal`).

        Raises:
            FileFormatError: at the description file's line of what MuJoCo names.
        """
        reason = super().refuses_assembly(assembly)
        if reason or mujoco is None or not assembly.imports:
            return reason
        return mi.refusal(assembly, lambda: cls._built(assembly))

    @classmethod
    def _built(cls, assembly: Assembly) -> None:
        """Build ``assembly`` alone in a world of its own and compile it, as a run does
        (raises what the build or MuJoCo's compiler raises)."""
        engine = cls(FloorSpec(100.0, 100.0))
        engine.add_assembly(assembly, 0)
        engine._compile()

    @classmethod
    def missing(cls) -> str:
        """Why this engine cannot run on this machine ("" when MuJoCo is installed)."""
        return "" if mujoco is not None else (
            f"the mujoco engine needs MuJoCo, which is not installed: {INSTALL}")

    # -- layout -----------------------------------------------------------------------------------

    def add_object(self, spec: ObjectSpec) -> Body:
        self.check_object(spec)
        body = self._added(mb.object_body(self.spec, self._name(spec.name), spec))
        self.paint((body,), spec.color)  # what a camera3d image shows
        return body

    def remove_object(self, handle: Body) -> None:
        self._removed(handle)

    def add_assembly(self, assembly: Assembly, group: int) -> Handles:
        self.check_assembly(assembly)
        handles = Handles()
        members = {m.body: m for m in assembly.members}
        for spec in assembly.bodies:
            member = members.get(spec.key)
            label = f"robot {member.name}" if member else \
                f"{assembly.members[0].name}'s {spec.key}"
            body = mb.assembly_body(self.spec, self._name(spec.key), label, spec, member, group)
            self._ride(body)
            handles.bodies[spec.key] = self._added(body)
            handles.items.append(body)
        for member in assembly.members:
            handles.robots[member.name] = handles.bodies[member.body]
        for arm in assembly.arms:
            if isinstance(arm, ImportedArmSpec):  # on its description's bodies, once attached
                continue
            owner = next((m.name for m in assembly.members if m.refs.get("arm") == arm.key),
                         assembly.members[0].name)
            self._save()
            handles.arms[arm.key] = ma.build(self.spec, arm, handles.bodies[arm.base],
                                             self._name(arm.key), f"robot {owner}'s arm "
                                             f"{arm.key}")
            self._arms.append(handles.arms[arm.key])
        self._add_imports(assembly, handles)
        self._add_imported_arms(assembly, handles)
        return handles

    def _add_imported_arms(self, assembly: Assembly, handles: Handles) -> None:
        """Give the arms of the assembly's descriptions their servos, tool and weld
        (mujoco.imported_arm), and their joints their start angles."""
        for arm in assembly.arms:
            if not isinstance(arm, ImportedArmSpec):
                continue
            imported = next(iter(handles.imports.values()))
            owner = assembly.members[0].name
            handles.arms[arm.key] = mia.build(self.spec, arm, imported.prefix,
                                              f"robot {owner}'s arm",
                                              handles.bodies[arm.base].group)
            self._arms.append(handles.arms[arm.key])
            mia.start(imported, arm)

    def _add_imports(self, assembly: Assembly, handles: Handles) -> None:
        """Attach the assembly's description files on their mount bodies (mujoco.imported)."""
        for mounted in assembly.imports:
            self._save()
            imported = mi.attach(self.spec, mounted, handles.bodies[mounted.body])
            msv.build(self.spec, imported)  # its held joints' servos (mujoco.servos)
            if mounted.airframe is not None:  # a described multirotor's own rotors
                self._mixers[id(handles.bodies[mounted.body])] = mounted.airframe.mixer()
            handles.imports[mounted.key] = imported
            self._imports.append(imported)
            self._stale = True

    def remove_assembly(self, handles: Handles) -> None:
        self._save()
        for arm in handles.arms.values():
            ma.remove(self.spec, arm)
            self._arms.remove(arm)
        for imported in handles.imports.values():
            mi.remove(self.spec, imported)
            self._imports.remove(imported)
            self._mixers.pop(id(imported.mount), None)
        for body in handles.items:
            self._removed(body)

    def set_robots(self, robots: list, drives: list[str]) -> None:
        if self._rows is not None:
            self._rows.scatter()
        self._robots, self._rows = list(robots), None

    def _name(self, what: str) -> str:
        self._count += 1
        return f"{self._count}:{what}"

    def _added(self, body: Body) -> Body:
        self._save()  # the others' state, before the model changes under them
        self._bodies[body.name] = body
        self._stale = True
        return body

    def _removed(self, body: Body) -> None:
        self._save()
        for arm in self._arms:  # a held object goes with its grasp
            for held in [g for g in arm.grasps if g.body is body]:
                ma.release(None, None, held)  # the model is rebuilt without it
        self.spec.delete(body.element)
        del self._bodies[body.name]
        body.id = -1
        self._stale = True

    def _save(self) -> None:
        """Copy every body's state out of the current data (what the next compile restores)."""
        if self.data is not None and not self._stale:
            for body in self._bodies.values():
                body.save(self.data)
            for arm in self._arms:
                arm.save(self.data)
            for imported in self._imports:
                imported.save(self.data)
            if self._rows is not None:
                self._rows.scatter()

    def _ready(self) -> md.Rows:
        """Compile the model if it changed; the robots' rows of the current layout."""
        if self._stale:
            self._compile()
        if self._rows is None:
            self._rows = md.Rows(self._robots, self.model)
        return self._rows

    def _compile(self) -> None:
        time = self.data.time if self.data is not None else 0.0
        # arms' servos damp implicitly (mujoco.arms); a world without arms stays as it was
        servos = any(i.servos for i in self._imports)  # held joints damp implicitly too
        self.spec.option.integrator = int(mujoco.mjtIntegrator.mjINT_IMPLICITFAST
                                          if self._arms or servos
                                          else mujoco.mjtIntegrator.mjINT_EULER)
        self.spec.memory = mb.world_arena(self._bodies.values(), self._arms) \
            + mi.arena(self._imports)
        # one diverged body must not put every other back at its start (mujoco.health)
        self.spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_AUTORESET)
        try:
            self.model = self.spec.compile()
        except Exception as exc:  # noqa: BLE001 -- MuJoCo's compiler raises its own errors
            raise SimulationError(f"MuJoCo could not build the world: {exc}") from None
        self.data = mujoco.MjData(self.model)
        self.data.time = time
        for body in self._bodies.values():
            body.bind(self.model)
            body.restore(self.data)
        for arm in self._arms:
            arm.bind(self.model)
            arm.restore(self.data)
            arm.rehold(self.model, self.data)
        for imported in self._imports:
            imported.bind(self.model)
            imported.restore(self.data)
            msv.bind(self.model, imported)
            msv.restore(self.data, imported)
        mujoco.mj_forward(self.model, self.data)  # frames and contacts of the new layout
        self._stale, self._rows, self._arm_table = False, None, None

    # -- stepping ---------------------------------------------------------------------------------

    def _longest_substep(self) -> float:
        """The longest MuJoCo step, s: :data:`MAX_SUBSTEP`, or an attached description's own
        ``<option timestep>`` where shorter (the step its gains and contacts were tuned for:
        dm_control's fruit fly, 0.1 ms, diverges at 5 ms)."""
        steps = [i.mounted.description.timestep for i in self._imports]
        return min([MAX_SUBSTEP] + [s for s in steps if s > 0])

    def step(self, dt: float) -> None:
        rows = self._ready()
        self._moved += 1
        model, data = self.model, self.data
        if self._substeps[0] is not model or self._substeps[1] != dt:  # cut dt again
            n = max(1, math.ceil(dt / self._longest_substep() - 1e-9))
            model.opt.timestep = dt / n
            self._substeps = (model, dt, n)
        n = self._substeps[2]
        guard = self._guard(rows)
        guard.begin(data)
        self._diverged, held = [], []
        if self._scenery.terrain is not None:  # ground bodies on their way to its height
            self._riders().follow(data, dt)
        ground = rows.ground  # x, y, yaw of the driven (a flyer's or an arm's world: none)
        start = data.qpos[ground] if len(ground) else None
        for imported in self._imports:  # a file's own gravity (dm_control's fly, in cm)
            imported.own_gravity(model, data)
        for _ in range(n):
            md.drive_forces(self.data, rows, dt / n)
            if len(rows.flyers):
                md.wrench_forces(self.data, rows)
            mujoco.mj_step(model, data)
            units = guard.substep(data)
            if len(units):  # the usual step has none: no arrays gathered
                held.append(self._contain(rows, guard, units))
        units = guard.step(data)
        if len(units):
            held.append(self._contain(rows, guard, units))
        if held:  # the substeps after a unit's containment moved it again: at rest
            held = np.unique(np.concatenate(held))
            guard.contain(model, data, held)
            mujoco.mj_forward(model, data)
        ml.roll_wheels(self._imports, model, data, dt)  # described bases' wheels turn
        # a ground robot's velocity is its displacement over the step (as the kinematic
        # engine's): what its wheels turned by, so odometry sums to the pose (the rate at the
        # step's end, sampled while the drive's capped force ramps it, drifts from it)
        self._mean = None if start is None else \
            (rows, self._moved, (data.qpos[ground] - start) / dt)

    def diverged(self) -> tuple:
        """See :meth:`Engine.diverged` (:mod:`coopsim.physics.mujoco.health`)."""
        return tuple(self._diverged)

    def _guard(self, rows: md.Rows) -> mh.Guard:
        if rows.guard is None:
            labels = {int(self.model.body_rootid[b.id]): b.label
                      for b in self._bodies.values() if b.id >= 0}
            rows.guard = mh.Guard(self.model, (self.floor.length / 2, self.floor.width / 2),
                                  rows.ids, labels)
        return rows.guard

    def _contain(self, rows: md.Rows, guard: mh.Guard, units: np.ndarray) -> np.ndarray:
        """Put diverged ``units`` back (their robots' commands dropped); note what they were;
        return them."""
        if not len(units):
            return units
        self._diverged += guard.report(self.data, units)
        guard.contain(self.model, self.data, units)
        hit = np.isin(guard.robot_unit, units)
        rows.mode[hit], rows.cmd[hit], rows.wrench[hit] = _STILL, 0.0, 0.0
        return units  # step() puts them back again at its end, frames and contacts computed

    def warnings(self) -> tuple[str, ...]:
        """See :meth:`Engine.warnings`: MuJoCo's arena overflowed (its CONTACTFULL or
        CNSTRFULL warning since the last compile): said once a world, with the time, the
        contacts and the arena's size."""
        if not self._notes and self.data is not None:
            counts = self._warned
            if counts is None or counts[0] is not self.data:  # a view of the data's counts
                counts = self._warned = (self.data, self.data.warning.number)
            number = counts[1]
            if number[_FULL[0]] or number[_FULL[1]]:  # the usual step: none, nothing built
                said = mb.overflow(self.model, self.data)
                self._notes = (said,) if said else ()
        return self._notes

    # -- state ------------------------------------------------------------------------------------

    def state3d(self) -> np.ndarray:
        return self._robot_states()[0].copy()

    def robot_state(self) -> np.ndarray:
        return self._robot_states()[1].copy()

    def _robot_states(self) -> tuple:
        """The robots' full and planar states now, computed once between steps (a step's
        phases ask for them several times)."""
        rows = self._ready()
        moved, table, full, planar = self._states
        if moved != self._moved or table is not rows:
            if rows.states is None:
                rows.states = ms.RobotStates(rows.qadr, rows.dadr, rows.free, rows.z,
                                             rows.static, rows.fixed)
            full = rows.states.full(self.data.qpos, self.data.qvel)
            self._mean_velocity(rows, full)
            if self._scenery.terrain is not None:  # ground robots at the terrain's height
                self._riders().lift(full, rows.free, rows.static)
            planar = rows.states.planar(full)
            self._states = (self._moved, rows, full, planar)
        return full, planar

    def _mean_velocity(self, rows: md.Rows, full: np.ndarray) -> None:
        """Each driven ground robot's velocity in ``full`` (in place): its mean over the last
        step (step()), kept across a recompile between steps (the rows rebuilt: matched by
        body)."""
        mean = self._mean
        if mean is None or mean[1] != self._moved or not len(rows.driven):
            return
        if mean[0] is rows:
            at, values = rows.driven, mean[2]
        else:  # a body added or removed since the step: the same robots by identity
            was = {id(mean[0].bodies[k]): i for i, k in enumerate(mean[0].driven)}
            pairs = [(k, was[id(rows.bodies[k])]) for k in rows.driven
                     if id(rows.bodies[k]) in was]
            at = np.array([k for k, _ in pairs], dtype=np.int64)
            values = mean[2][[i for _, i in pairs]].reshape(-1, 3)
        full[at, 7], full[at, 8], full[at, 12] = values[:, 0], values[:, 1], values[:, 2]

    def drive(self, rows: np.ndarray, forward: np.ndarray, turn: np.ndarray) -> None:
        table = self._ready()
        table.mode[rows] = _DIFFERENTIAL
        table.cmd[rows, 0], table.cmd[rows, 1], table.cmd[rows, 2] = forward, turn, 0.0

    def set_velocity(self, rows: np.ndarray, velocity: np.ndarray) -> None:
        table = self._ready()
        table.mode[rows] = _VELOCITY
        table.cmd[rows] = np.asarray(velocity, dtype=float).reshape(-1, 3)

    def apply_wrench(self, rows: np.ndarray, force: np.ndarray, torque: np.ndarray) -> None:
        table = self._ready()
        table.wrench[rows, :3] = np.asarray(force, dtype=float).reshape(-1, 3)
        table.wrench[rows, 3:] = np.asarray(torque, dtype=float).reshape(-1, 3)
        if self._mixers:  # described multirotors: the wanted wrench through their rotors
            remix_rows(self._mixers, table.bodies, table.wrench, rows)
        ground = np.asarray(rows)[~table.free[rows]] if table.grounded else ()
        if len(ground):
            raise SimulationError(f"{table.bodies[int(ground[0])].label} rides on the floor: "
                                  "only free bodies take a wrench")

    # -- scenery (mujoco.scenery) ---------------------------------------------------------------

    def add_scenery(self, meshes: tuple, terrain) -> None:
        """See :meth:`Engine.add_scenery`: static meshes and a height field
        (:mod:`coopsim.physics.mujoco.scenery`); before any robot is added (a ground body
        rides on the height field with a joint it gets when it is built)."""
        if terrain is not None and any(b.kind == "ground" for b in self._bodies.values()):
            raise SimulationError("a height field is added before the robots")
        self._save()
        self._scenery.add(self.spec, tuple(meshes), terrain)
        self._stale = True

    def _ride(self, body: Body) -> None:
        """A ground body on a world with a height field gets its z joint."""
        if self._scenery.terrain is not None and body.kind == "ground":
            msc.ride(body)

    def _riders(self) -> msc.Ground | None:
        """The bodies following the height field in the current model (None: no terrain)."""
        if self._scenery.terrain is None:
            return None
        if self._ground is None or self._ground.model is not self.model:
            self._ground = msc.Ground(self._scenery.terrain, [
                b for b in self._bodies.values() if b.kind == "ground"], self.model)
        return self._ground
