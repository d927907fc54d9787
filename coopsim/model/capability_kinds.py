"""The optional capabilities a hardware module may offer, each a typing ``Protocol``: the
members one front end calls (ROS 2 scans and twists, Gymnasium spaces, drawing, recording
columns, compiled kernels...).

:mod:`coopsim.model.capabilities` finds them on a module (``capability(module, LaserScanner)``),
gives the defaults of a module that declares part of one, registers adapters and keeps the
deprecated base-class members; it re-exports every name here. Frames and units as in
:mod:`coopsim.model.module`. Nothing here imports pymunk, zmq, Gymnasium or ROS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Protocol, runtime_checkable

import numpy as np


# -- the capabilities (ROS 2 and Foxglove; learning; viewer; network; recording) ---------------

@dataclass(frozen=True)
class LaserScan:
    """One planar scan of a range finder, as ROS 2's ``sensor_msgs/LaserScan`` holds it.

    Attributes:
        angle_min: Angle of the first beam, rad, counter-clockwise from the sensor's axis.
        increment: Angle between beams, rad.
        ranges: (beams,) distances from the sensor's mounting point, m: +inf for nothing seen,
            anything below ``range_min`` for no return.
        range_min, range_max: The distances it measures, m.
    """

    angle_min: float
    increment: float
    ranges: np.ndarray
    range_min: float
    range_max: float


@runtime_checkable
class LaserScanner(Protocol):
    """A range finder as other robot software sees it (ROS 2's ``/R/scan`` and bags,
    Foxglove's ``/robots/NAME/scan``).

    Attributes:
        laser_rank: Which of a robot's range finders is its main scan: the highest rank is
            the robot's ``/R/scan``, and the scan Foxglove draws (``/robots/NAME/scan``) is
            the highest among its modules not drawn as ``rays``.
    """

    laser_rank: ClassVar[int]

    @classmethod
    def laser_scan(cls, snap, robot: str, params: Mapping, radius: float) -> LaserScan | None:
        """The latest reading of ``robot`` (network name) in ``snap`` as a planar scan, or None
        (the default: not a range finder); ``params`` its values of the module's parameters,
        ``radius`` its chassis, m. Called when ROS 2 publishes, a bag is written and Foxglove
        draws the robot's scan."""

    @classmethod
    def laser_mount(cls, params: Mapping) -> tuple[float, float, float]:
        """Where the beams start: (x ahead, y left, m; yaw, rad) in the robot's frame
        (default: the chassis centre)."""


@runtime_checkable
class TwistDriven(Protocol):
    """A drive that takes body velocities (ROS 2's ``cmd_vel``)."""

    @classmethod
    def from_twist(cls, forward: float, left: float, turn: float, yaw: float, axle: float,
                   params: Mapping) -> tuple[float, ...] | None:
        """The stored command for ``forward``/``left`` m/s and ``turn`` rad/s in the robot's
        frame (``yaw`` its heading, rad, world frame; ``axle`` m; ``params`` the robot's
        values of the module's parameters), or None (the default) when not driven so; called
        when a ROS 2 ``cmd_vel`` arrives, the result checked by the module's rules as
        ``command_row``'s.

        Raises:
            ProtocolError: the values are beyond what the module takes.
        """


@runtime_checkable
class Learnable(Protocol):
    """A reading a learner observes and/or a drive a learner's action commands: asked by
    learning environments (coopsim.env) and the benchmarks' drive.

    Attributes:
        contact: The reading is contact switches (above 0.5: touching; the ``collisions``
            metric reads every such module); default False.
        per_target: Values per target when the reading holds one block per target (the
            ``target`` module: 2; batched worlds keep each copy's own block), else 0 (the
            default).
        action_fields: Names of a learner's action values, with units; () (the default) when
            a learner cannot drive this module, else it is a motion module: a robot's first
            module declaring them is its motion module.
    """

    contact: ClassVar[bool]
    per_target: ClassVar[int]
    action_fields: ClassVar[tuple[str, ...]]

    @classmethod
    def observation_space(cls, params: Mapping[str, float],
                          n_targets: int) -> tuple[Any, Any] | None:
        """``(low, high)`` of the reading, each ``len(reading_fields(...))`` floats, -inf/inf
        unbounded (the default), or None when it cannot be observed (no reading fields);
        ``params`` the robot's values of the module's parameters, ``n_targets`` the world's
        targets. Asked when a learning environment is made, for each observed module."""

    @classmethod
    def action_space(cls, params: Mapping[str, float]) -> tuple[Any, Any]:
        """``(low, high)`` of an action, each ``len(action_fields)`` floats (default:
        unbounded). Asked when a learning environment is made, of the robot's motion module
        (the first declaring ``action_fields``)."""

    @classmethod
    def from_action(cls, action: np.ndarray, params: Mapping[str, float]) -> tuple[float, ...]:
        """The stored command row (as ``command_row`` returns it) for an action already checked
        against ``action_space``, one float64 per ``action_fields`` entry, each learning step
        (default: its values, then zeros up to ``len(command_fields)``; batched worlds store
        that and refuse a module that overrides it)."""


@runtime_checkable
class PerTargetReading(Protocol):
    """A reading whose width follows the world's targets (the target finder's): the
    simulation sizes the reading by it."""

    @classmethod
    def field_names(cls, n_targets: int) -> tuple[str, ...]:
        """Names of the reading's values for ``n_targets`` targets."""


@runtime_checkable
class Drawable(Protocol):
    """A module the viewer (and Foxglove) draws, from the module's ``/sim state`` entry.

    Attributes:
        draw: A JSON-ready hint, or None:
            ``{"kind": "rays", "angles", "columns", "origin", "color"}`` draws a fan of ranges from streamed columns (one line per angle from
            the robot's rim, as long as the reading) in the viewer, the Foxglove bridge and
            export; ``{"kind": "leds", "columns"}`` a ring of dots, one per column, coloured
            by the packed colour it streams (R·65536 + G·256 + B, 0 = off), in the viewer
            and in Foxglove (the ``leds`` module).
    """

    draw: ClassVar[Mapping | None]


@runtime_checkable
class Answerer(Protocol):
    """A module that replies to ``read`` commands with more or less than its reading row:
    asked by the network's ``read`` commands and by in-process drivers."""

    @classmethod
    def answer(cls, command, row: np.ndarray, text: str, snap) -> tuple[str, list]:
        """Reply (text, data) from one robot's reading ``row`` (default: the whole row)."""

    @classmethod
    def answer_robot(cls, command, robot: str, row: np.ndarray, text: str,
                     snap) -> tuple[str, list]:
        """Reply (text, data) to robot ``robot`` (network name) from its reading ``row``, the
        request's ``text`` and the latest Snapshot ``snap``, when a read command arrives (on any
        thread); default: :meth:`answer`."""


@runtime_checkable
class Recordable(Protocol):
    """What the state stream, the recording and its exports keep of a module.

    Attributes:
        columns: Per-robot :class:`~coopsim.model.module.Column` values (default none).
    """

    columns: ClassVar[tuple]

    @classmethod
    def record(cls, snap, after: int) -> Any:
        """msgpack-ready data kept beyond the columns at a recorded step (taken after step
        ``after``; -1 at the start), or None (the default)."""

    @classmethod
    def replay(cls, data: Any, board: Any, robots: tuple) -> Any:
        """What recorded ``data`` (what :meth:`record` returned at that step, None when
        nothing) puts back on the snapshot's board (``snap.extra[label]``), given the previous
        step's rebuilt ``board`` (None at first) and the step's robot names; default None.
        Called for each recorded step when a recording is read step by step (exports)."""


@runtime_checkable
class ModuleKernel(Protocol):
    """A kind whose reading and/or actuation is a compiled kernel over the world's arrays: the
    one way a kind computes, built-in or a plugin's. The step calls the kernels itself (the
    base :meth:`~coopsim.model.module.Module.measure`, ``sense`` and ``actuate`` run them, so
    a kind declaring them writes none of those), with no Python per robot, on every path: the
    sensing plan, a fused step's stages, batched worlds.
    :func:`coopsim.model.capabilities.kernel_of` gives a module's kernel view or None.

    The arguments, every one an array or a tuple of arrays (``rows`` the robots carrying the
    kind this step, int64, ascending; index ``views`` and ``state`` by ``rows[k]``, the others
    by ``k``):

    - ``views``: the frame arrays named by ``kernel_views`` (of
      :data:`coopsim.model.kernel.VIEWS`), read-only. Every robot's rows (index by
      ``rows[k]``): ``pose``, ``velocity``, ``state3d``, ``radius``, ``axle``, ``group`` and
      ``contact`` ((N, 2) float64, the engine's contact flags of the last step: 1.0 where the
      chassis touches something at its front / rear half). Not by rows: ``dt`` ((1,) float64,
      the step, s), ``targets`` ((T, 2) float64, the targets' positions, m, world frame) and
      ``ranges`` ((len(rows), K) float64, index by ``k``): for a kind declaring
      ``kernel_beams`` and a ``max_range`` parameter, each beam's distance from the chassis
      edge, m, cast from the centre against everything but the robot's own parts, at most
      ``max_range`` (the floor slice's cast, or the 3D one on an engine casting in 3D).
      And the views the core makes for the kind before the call
      (:data:`coopsim.model.kernel.COMPUTED`): ``clock`` ((2,) float64, the step's time and
      its length dt, s); ``full_state`` ((N, 13), every robot's STATE3D, the planar state on
      the floor on a 2D engine; index by ``rows[k]``); ``below`` ((len(rows),), index by
      ``k``): m from each body's underside along its -z axis to what is below, at most the
      kind's ``max_range`` parameter, on an engine that casts rays in 3D ((0,) elsewhere);
      ``zones``: the scenario's no-go zones, a tuple (a, b (E, 2) float64 each edge of their
      outlines from a to b, m, world frame; zone (E,) int64 its zone; kind (Z,) float64 each
      zone's code: 1 water, 2 border, 3 nogo), empty arrays without zones.
    - ``params``: (len(rows), P) float64, one column per entry of the kind's ``params``, in
      order, read-only.
    - ``state``: the kind's state table (``state_fields``): its arrays in that order, then
      ``seen`` (N,) bool, every robot's rows, written in place; () when it keeps none.

    A kind keeping what its actuation computed for its reading (``motors``: the wheels
    driven) declares a state field for it (``state_fields``): ``kernel_actuate`` writes it,
    ``kernel_sense`` reads it (``frame.actuated`` is not a kernel's).

    Attributes:
        kernel_views: Names of the frame arrays the kernels read, in the order they take them.
        kernel_beams: With ``ranges`` among the views: the beams' angles from the heading, rad,
            counter-clockwise (a tuple of floats); the kind declares a ``max_range``
            parameter, m.
        kernel_sense: A compiled function ``(views, rows, params, state, normals, uniforms,
            prev, out)`` writing the reading of robots ``rows`` into ``out`` (len(rows),
            width) with its noise and lost data applied and kept physically possible:
            ``normals`` (len(rows), k) its block of the step's one draw (k its
            ``noise_draws``, else its width when its ``noise`` is non-zero somewhere, else
            0; a kind declaring ``noise_draws`` works out from ``params`` which parameters
            drew), ``uniforms`` (len(rows),) for lost data (empty when its ``lost`` is 0
            everywhere), ``prev`` the rows' previous reading (read-only). Called with no
            normals and no uniforms it is the noiseless reading (``sense``); or None.
        kernel_actuate: A compiled function ``(views, rows, params, state, commands, out,
            drive)``: from the stored ``commands`` (len(rows), command fields; read-only
            on every path), ``out`` (len(rows), command fields) what the step keeps as
            actuated (``frame.actuated[label]``: the command as carried out) and ``drive``
            (len(rows), the columns of ``kernel_drive``) what the engine is handed; or None.
            It may raise a :class:`~coopsim.model.errors.SimulationError` with a constant
            sentence (the ``rotors`` without a 3D state); the engine's refusals of what it
            is handed (a wrench that is not finite) come from the role's call.
        kernel_drive: (role, columns): the :class:`~coopsim.model.module.PhysicsAccess`
            method ``drive`` is handed to after ``rows``: one array a column when
            ``columns`` is a count (``("drive", 2)``: forward speed and yaw rate), blocks of
            columns when it is a tuple of widths (``("apply_wrench", (3, 3))``: force, N,
            and torque, N m, (len(rows), 3) each; ``("set_velocity", (3,))``: world vx, vy
            m/s and yaw rate rad/s, (len(rows), 3)); or () for none
            (:func:`coopsim.model.kernel.drive_parts`). An engine whose compiled step takes
            the role (kinematic: ``drive``, ``set_velocity``; aerial: ``apply_wrench``) runs
            it inside the composed acting call, with its step.
        kernel_rowwise: True when each row ``k`` of ``out`` and ``drive``, and robot
            ``rows[k]``'s state, come from the views and row ``k`` of the other arguments
            alone (no loop across rows, no test of a whole column): a world of
            ``threads.ROWS_MIN`` robots or more then runs the kernels on numba's threads, a
            chunk of rows at a time (each argument indexed by ``k`` cut to the chunk; the
            same bits). False (the default): all rows in one call on one thread.
    """

    kernel_views: ClassVar[tuple[str, ...]]
    kernel_beams: ClassVar[tuple[float, ...]]
    kernel_sense: ClassVar[Any]
    kernel_actuate: ClassVar[Any]
    kernel_drive: ClassVar[tuple]
    kernel_rowwise: ClassVar[bool]


@runtime_checkable
class Offloaded(Protocol):
    """An action whose costly part may run off the stepper thread (the ``tool`` module's
    inverse kinematics): the network serves it in real time from a solver thread
    (coopsim.net.offload) while the run goes on stepping."""

    @classmethod
    def prepare(cls, command, sim, robot: str, msg, seconds: float | None):
        """Take what the action needs from the world now (on the thread owning it) and return
        its job: an object with ``run()`` (pure computation, any thread, touches no World) and
        ``finish(sim, result) -> str`` (the reply's text, on the thread owning the World; it
        may raise the errors ``act`` raises). ``seconds``: the wall-time cap of ``run``
        (None: none, as in lockstep). ``act`` must equal ``finish(sim, run())`` with None."""


@runtime_checkable
class ValueChecker(Protocol):
    """A module whose parameter values are checked together, beyond each one's own range (an
    airframe's thrust-to-weight): asked wherever values change, before anything is stored --
    a scenario's ``param`` lines and timed events (``coopsim check``: file:line) and
    parameter writes over the network and by events (error 4)."""

    @classmethod
    def check_values(cls, values: Mapping, robot=None) -> str:
        """Why this combination of one robot's values is refused ("" when it is not).

        Args:
            values: Parameter name -> value, every parameter of the module.
            robot: The robot's :class:`~coopsim.model.module.RobotInfo` (its body's
                ``mass``), or None when unknown.
        """
