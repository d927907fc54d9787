"""The physics-engine seam: what the simulation asks of any engine.

An engine holds the bodies of one world and steps them. It is built from engine-neutral specs
(:class:`~coopsim.model.specs.ObjectSpec`, :class:`~coopsim.model.robot_type.Assembly`), hands
back opaque handles, and answers batched queries in *robot order*: the order the world last gave
to :meth:`Engine.set_robots`, which is the row order of every array the simulation uses.

Two engines ship: ``pymunk`` (rigid-body dynamics: pushing, stalling, joints, carried bars) and
``kinematic`` (commanded motion with overlap resolution in numba kernels, numpy without numba,
for swarms; :mod:`coopsim.physics.kinematic.engine` states its rules). A new
engine implements this class and registers under ``coopsim.engines`` (docs/plugins.md). The
3D calls (flight, arms, described robots, images) and a 2D engine's answers to them are its base
:class:`~coopsim.physics.engine3d.Engine3D`.

Frames and units: world frame, metres, radians, seconds; yaw counter-clockwise from +x.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..model import held
from ..model.errors import SimulationError
from ..model.robot_type import Assembly
from ..model.specs import FloorSpec, ObjectSpec
from ..model.health import Divergence
from .engine3d import Engine3D
from .shapes import bottom, floats

#: What an engine may offer. ``joints``: pivot/revolute joints (carried bars, arms);
#: ``movable_objects``: objects with mass (pymunk: robots push them; kinematic: they stand still
#: until attached); ``multi_body``: assemblies of more than one body per robot; ``differential``
#: and ``velocity``: the two drives; ``attach``: run-time constraints between two bodies
#: (:meth:`Engine.attach`, a gripper's hold); ``swarm``: built for thousands of robots a step
#: (what ``coopsim bench realtime`` runs by default); ``batch``: the engine batched learning
#: worlds run on (:mod:`coopsim.env.batch`: K copies side by side, rows reset between steps);
#: ``copies``: the engine whose per-robot bodies (:mod:`coopsim.physics.kinematic.kernels`) the
#: copies batch backend's compiled step inlines (:mod:`coopsim.env.copykernels`); it answers
#: :meth:`Engine.copy_template` (the arrays those bodies need).
#: ``flight``: bodies free in 3D (six degrees of freedom, gravity) driven by body-frame
#: wrenches (:meth:`Engine.apply_wrench`, the ``rotors`` drive) and reporting
#: :meth:`Engine.state3d`: an engine without it is a 2D engine and refuses 3D bodies.
#: ``arms``: 3D serial manipulators (:class:`~coopsim.model.arm.ArmSpec` in an assembly's
#: ``arms``): joint servos (:meth:`Engine.set_arm_targets`), joint state and efforts
#: (:meth:`Engine.arm_state`), the wrist's wrench (:meth:`Engine.wrist_wrench`) and a 3D grasp
#: (:meth:`Engine.attach` with an arm's handle: the object welded to its last link).
#: The core finds an engine by these and by :attr:`Engine.default`, never by its label.
FEATURES = frozenset({"joints", "movable_objects", "multi_body", "differential", "velocity",
                      "attach", "swarm", "batch", "copies", "flight", "arms", "scenery"})
#: Columns of :meth:`Engine.state3d`: position (m, world frame), orientation quaternion (w, x,
#: y, z; body to world), linear velocity (m/s, world frame), angular velocity (rad/s, body
#: frame: what a gyroscope reads).
STATE3D = ("x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz")
#: Kinds of :meth:`Engine.attach`: ``pin`` (a pivot at a point: b may turn about it) and
#: ``weld`` (b keeps its pose relative to a).
ATTACH_KINDS = ("pin", "weld")


@dataclass
class Handles:
    """What an engine made for one assembly.

    Attributes:
        bodies: Body key -> engine handle.
        joints: Joint key -> engine handle.
        robots: Member name -> the handle :meth:`Engine.set_robots` takes for it.
        arms: Arm key -> the handle :meth:`Engine.arm_state` and the other arm calls take.
        imports: Mounted description key -> the engine's handle of it (an imported robot:
            :mod:`coopsim.physics.mujoco.imported`).
        items: The engine's own bookkeeping (what to remove).
    """

    bodies: dict[str, Any] = field(default_factory=dict)
    joints: dict[str, Any] = field(default_factory=dict)
    robots: dict[str, Any] = field(default_factory=dict)
    arms: dict[str, Any] = field(default_factory=dict)
    imports: dict[str, Any] = field(default_factory=dict)
    items: list = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class CopyTemplate:
    """One world's robots and static layout as the copies batch backend tiles them
    (:meth:`Engine.copy_template`; :mod:`coopsim.env.copies`). Arrays in robot order, copies
    of the engine's (the engine keeps its own); world frame, m, rad, s.

    Attributes:
        pos: (N, 2) robot centres, m. yaw: (N,) rad. heading: (N, 2) cos, sin of each yaw, as
            the engine's per-robot bodies turn them.
        radius: (N,) chassis radii, m. driven: (N,) whether each robot has a drive.
        half: (2,) the floor's half length and half width, m (its edges are walls).
        static: The static shapes binned as the engine's per-robot bodies take them: (shapes
            (M, 6), kinds (M,), grid geometry (5,), cell start (cells + 1,), entries).
        limits: (6,) the engine's small-world step's limits: smallest positive and largest
            radius (m), the largest move per substep (in smallest radii), the most substeps a
            step, a robot grid cell's side (in largest radii), the most resolution passes a
            substep (:func:`~coopsim.physics.kinematic.small.step_small`'s ``limits``).
    """

    pos: np.ndarray
    yaw: np.ndarray
    heading: np.ndarray
    radius: np.ndarray
    driven: np.ndarray
    half: np.ndarray
    static: tuple
    limits: np.ndarray


class Engine(Engine3D, ABC):
    """Base of physics engines.

    Args:
        floor: The floor; its edges are walls.

    Class attributes:
        label: Registered name (``--engine``, ``[SETTINGS] engine``).
        description: One line for ``coopsim list``.
        features: The subset of :data:`FEATURES` it offers.
        checks_health: Whether it checks its bodies itself after each step (see
            :meth:`diverged`).
        default: The engine a scenario runs on when neither ``[SETTINGS] engine`` nor
            ``--engine`` names one (:func:`coopsim.model.plugins.default_engine`); read on the
            class itself, so an engine built on the default one is not the default.
        strict_placement: True: bodies may not start below the floor, inside each other or
            inside static geometry on this engine (:mod:`coopsim.model.placement`): files,
            loaders and run-time insertions refuse such placements with the sentence. False
            (the default): the engine resolves them itself (pymunk and kinematic push
            overlapping bodies apart, aerial lifts a body onto the floor).
        ranges3d: True (the default): an engine with ``cast3d`` and ``chassis_extent`` (mujoco,
            aerial) casts the range sensors in 3D; False (on the class or one engine) casts
            them in the floor slice (a benchmark's baseline).
    """

    label: ClassVar[str] = ""
    description: ClassVar[str] = ""
    features: ClassVar[frozenset] = frozenset()
    default: ClassVar[bool] = False
    strict_placement: ClassVar[bool] = False
    #: True when :meth:`step` checks every body and :meth:`diverged` reports what it put back.
    checks_health: ClassVar[bool] = False
    ranges3d: bool = True

    def __init__(self, floor: FloorSpec) -> None:
        self.floor = floor

    # -- what it can run --------------------------------------------------------------------------

    @classmethod
    def missing(cls) -> str:
        """Why this engine cannot run on this machine at all ("" when it can): an optional
        library it needs is not installed, said with the one command that installs it. A
        scenario naming it is refused at its ``engine`` line."""
        return ""

    @classmethod
    def refuses_assembly(cls, assembly: Assembly) -> str:
        """Why this engine cannot build ``assembly`` ("" when it can)."""
        f = cls.features
        if "flight" not in f and any(b.free for b in assembly.bodies):
            return (f"the {cls.label} engine is 2D and this robot flies in 3D: use an engine "
                    "with the flight feature (engine mujoco)")
        if assembly.arms and "arms" not in f:
            return (f"the {cls.label} engine has no arms (3D manipulators): use an engine "
                    "with the arms feature (engine mujoco)")
        if assembly.imports and "descriptions" not in f:
            return (f"the {cls.label} engine cannot build a robot from a description file: "
                    "use an engine with the descriptions feature (engine mujoco)")
        if assembly.joints and "joints" not in f:
            return f"the {cls.label} engine has no joints"
        if (len(assembly.bodies) > len(assembly.members) or assembly.parts) \
                and "multi_body" not in f:
            return f"the {cls.label} engine runs only one-body robots (no carried parts)"
        for m in assembly.members:  # the rotors drive is a flight engine's wrench
            if m.drive and ("flight" if m.drive == "rotors" else m.drive) not in f:
                return f"the {cls.label} engine has no {m.drive} drive"
        return ""

    @classmethod
    def refuses_object(cls, spec: ObjectSpec) -> str:
        """Why this engine cannot hold ``spec`` ("" when it can). A 2D engine (no ``flight``)
        refuses a 3D object: one whose bottom is above the floor (centre z minus half its
        height, a sphere's diameter, > 0), which it could only drop onto the floor."""
        if "flight" not in cls.features and floats(spec):
            return (f"the {cls.label} engine is 2D and object {spec.name} floats above the "
                    f"floor (its bottom at z = {bottom(spec):g} m): use an engine with the "
                    "flight feature (engine mujoco)")
        if not spec.static and "movable_objects" not in cls.features:
            return (f"the {cls.label} engine has no movable objects: give {spec.name} mass 0 "
                    "or use the pymunk engine")
        return ""

    def check_assembly(self, assembly: Assembly) -> None:
        """Raise SimulationError when :meth:`refuses_assembly` says why."""
        reason = self.refuses_assembly(assembly)
        if reason:
            raise SimulationError(reason)

    def check_object(self, spec: ObjectSpec) -> None:
        """Raise SimulationError when :meth:`refuses_object` says why."""
        reason = self.refuses_object(spec)
        if reason:
            raise SimulationError(reason)

    def fused(self):
        """The engine's side of a fused step (:mod:`coopsim.sim.fused`): an object handing its
        compiled step's parts and arrays to a pass that runs the whole tick in one compiled
        call, or None (the default: every step is the plain one, :meth:`step`)."""
        return None

    def close(self) -> None:
        """End what the engine runs outside this process (mujoco: the camera render process)
        now rather than when the engine is dropped; the engine still steps, and starts it again
        if it needs it. The default: nothing to end."""

    def warnings(self) -> tuple[str, ...]:
        """What the engine could not do as the world asked without ending the run, one
        sentence each, each said once since the engine was built (mujoco: its contacts
        overflowed the arena and some were dropped); the same tuple until one is added.
        Called after every step: it must be cheap. The default: none."""
        return ()

    @classmethod
    def refuses_scenery(cls, world) -> tuple[int, str] | None:
        """(line, why) when this engine cannot hold the static meshes or the height field of
        ``world`` (a WorldSpec; :mod:`coopsim.model.scenery`): an engine without the
        ``scenery`` feature refuses both, at the first one's line; None when it can."""
        items = sorted([*world.meshes, *([world.terrain] if world.terrain else [])],
                       key=lambda item: item.line)
        if items and "scenery" not in cls.features:
            return items[0].line, (f"the {cls.label} engine has no meshes or height fields: "
                                   "use an engine with the scenery feature (engine mujoco)")
        return None

    def add_scenery(self, meshes: tuple, terrain) -> None:
        """Build a world's static meshes and its height field (before its robots). The
        default, for an engine without the ``scenery`` feature: refuse any.

        Raises:
            SimulationError: this engine has no scenery and some was given.
        """
        if meshes or terrain is not None:
            raise SimulationError(f"the {self.label} engine has no meshes or height fields")

    # -- layout (between steps) -------------------------------------------------------------------

    @abstractmethod
    def add_object(self, spec: ObjectSpec) -> Any:
        """Build an object; return its handle."""

    @abstractmethod
    def remove_object(self, handle: Any) -> None:
        """Remove an object."""

    @abstractmethod
    def add_assembly(self, assembly: Assembly, group: int) -> Handles:
        """Build a robot type's assembly; its shapes share collision/sensing ``group``."""

    @abstractmethod
    def remove_assembly(self, handles: Handles) -> None:
        """Remove everything one :meth:`add_assembly` made."""

    @abstractmethod
    def set_robots(self, robots: list, drives: list[str]) -> None:
        """Fix the robot order: ``Handles.robots`` values and each one's drive, in row order."""

    # -- stepping ---------------------------------------------------------------------------------

    @abstractmethod
    def step(self, dt: float) -> None:
        """Advance by ``dt`` seconds."""

    @abstractmethod
    def robot_state(self) -> np.ndarray:
        """(N, 6) x, y, yaw, vx, vy, yaw rate of every robot's chassis, robot order."""

    @abstractmethod
    def drive(self, rows: np.ndarray, forward: np.ndarray, turn: np.ndarray) -> None:
        """Differential drive: robots ``rows`` move at ``forward`` m/s along their heading and
        turn at ``turn`` rad/s (up to the drive's force caps)."""

    def set_velocity(self, rows: np.ndarray, velocity: np.ndarray) -> None:
        """Velocity drive: (len(rows), 3) vx, vy (m/s, world frame) and yaw rate (rad/s)."""
        raise SimulationError(f"the {self.label} engine has no velocity drive")

    def reset_rows(self, rows: np.ndarray, state: np.ndarray) -> None:
        """Put robots ``rows`` back between steps: each chassis at ``state`` (len(rows), 6) x,
        y, yaw, vx, vy, yaw rate (m, rad, m/s, rad/s; world frame), its drive command dropped
        (it stands still until driven again). The only way for code outside the engine to
        move robots (a batched world's episode reset, :mod:`coopsim.env.batch`).

        Raises:
            SimulationError: the engine cannot (the default: an engine from before this call).
        """
        raise SimulationError(f"the {self.label} engine cannot reset robots in place")

    def hold_rows(self, rows: np.ndarray, states: np.ndarray) -> None:
        """Hold robots ``rows`` through the next step as bodies moved from outside (external
        robots): each put at ``states`` (len(rows), 13; :data:`STATE3D`'s
        columns, the state at the step's start) and carried at its velocity, pushed by nothing,
        its drive command and wrench dropped. A ``flight`` engine holds the full pose
        (height and attitude); the default (a 2D engine) holds the planar part through
        :meth:`reset_rows` (:func:`coopsim.model.held.planar`).
        """
        self.reset_rows(rows, held.planar(states))

    def copy_template(self) -> CopyTemplate:
        """This world's robots and static layout for the copies batch backend (an engine with
        the ``copies`` feature: its per-robot bodies are what that backend's compiled step
        inlines).

        Raises:
            SimulationError: the engine has no ``copies`` feature (the default).
        """
        raise SimulationError(f"the {self.label} engine has no copies feature")

    def diverged(self) -> tuple[Divergence, ...]:
        """The bodies the last :meth:`step` found diverged (:mod:`coopsim.model.health`: a
        state non-finite or beyond the sane bounds) and put back: each where it was at that
        step's start, at rest, its drive command and wrench dropped; the other bodies went on.

        An engine that checks its own bodies says so with :attr:`checks_health` (``mujoco``,
        ``aerial``); for any other (the default: none found) the simulation checks the
        robots' :meth:`robot_state` itself and puts one back with :meth:`reset_rows`
        (:mod:`coopsim.sim.health`).
        """
        return ()

    @abstractmethod
    def contacts(self, pose: np.ndarray) -> np.ndarray:
        """(N, 2) 1.0 where a robot's chassis touches something at its front / rear half."""

    @abstractmethod
    def poses(self, handles: list) -> np.ndarray:
        """(K, 3) x, y, yaw of bodies (objects or assembly bodies) by handle."""

    def joint_state(self, handles: list) -> np.ndarray:
        """(K, 2) angle of b relative to a (rad) and its rate (rad/s) of joints by handle."""
        return np.zeros((len(handles), 2))

    def joint_force(self, handles: list, dt: float) -> np.ndarray:
        """(K,) force each joint carried during the last step, N."""
        return np.zeros(len(handles))

    def set_motor_rates(self, handles: list, rates: np.ndarray) -> None:
        """Drive motor joints at ``rates`` rad/s (b relative to a), up to their torque caps."""
        if len(handles):
            raise SimulationError(f"the {self.label} engine has no joint motors")

    def attach(self, a: Any, b: Any, kind: str, anchor: tuple[float, float]) -> Any:
        """Constrain body ``b`` to body ``a`` from the next step on; return a handle for
        :meth:`detach`. Called between steps (a gripper's grab).

        Args:
            a, b: Body handles: a robot's (``Handles.robots`` value), an assembly body's
                (``Handles.bodies`` value) or an object's (what :meth:`add_object` returned);
                ``a`` may be an arm's (``Handles.arms`` value): its last link holds ``b``
                (an engine with the ``arms`` feature).
            kind: ``pin`` (a pivot at ``anchor``: b may turn about it) or ``weld`` (b keeps its
                pose relative to a). An engine without joints holds both rigidly.
            anchor: The pivot, (x, y) m, world frame.

        Raises:
            SimulationError: the engine has no run-time constraints, or cannot tie these two.
        """
        raise SimulationError(f"the {self.label} engine has no run-time constraints")

    def detach(self, handle: Any) -> None:
        """Remove a constraint :meth:`attach` made (b stays where it is, at rest relative to
        a)."""
        raise SimulationError(f"the {self.label} engine has no run-time constraints")

    @abstractmethod
    def static_geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Shapes that never move, for ray casting: circles (C, 3) x, y, r; their groups (C,);
        segments (S, 4) x1, y1, x2, y2; their groups (S,). Floor walls included."""

    @abstractmethod
    def moving_geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Movable objects and assembly bodies other than robot chassis, as above (chassis are
        added by the sensing phase as circles from :meth:`robot_state`)."""
