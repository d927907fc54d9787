"""Optional capabilities of a hardware module: what one front end needs of it, beyond the base.

The :class:`~coopsim.model.module.Module` base holds what every module needs; a module that
serves one front end more declares that front end's members (duck typing: the same names and
signatures as below, no base class to inherit). Front ends ask by type, never by name::

    scanner = capability(MODULES.get(label), LaserScanner)   # None: no range finder

and get the module itself, or a view of it whose missing members are the capability's defaults
(the behaviour the base class used to give every module). A user may map someone else's module
to a capability without editing it::

    register_adapter(LaserScanner, "thirdparty_sensor", MyAdapter)

``MyAdapter`` (a class or any object) supplies the capability's members; the module's own
declarations (``fields``, ``command_fields``, ``label``...) fill the rest. docs/plugins.md lists
which front end uses which capability. Frames and units as in :mod:`coopsim.model.module`.
Nothing here imports pymunk, zmq, Gymnasium or ROS.
"""

from __future__ import annotations

import dis
import types
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Protocol, runtime_checkable

import numpy as np


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


# -- the capabilities (ROS 2 and Foxglove; learning; viewer; network; recording) ---------------

@runtime_checkable
class LaserScanner(Protocol):
    """A range finder as other robot software sees it (ROS 2's ``/R/scan``, Foxglove's scans).

    Attributes:
        laser_rank: Which of a robot's range finders is its main scan: the highest rank.
    """

    laser_rank: ClassVar[int]

    @classmethod
    def laser_scan(cls, snap, robot: str, params: Mapping, radius: float) -> LaserScan | None:
        """The latest reading of ``robot`` (network name) as a planar scan, or None when there
        is none; ``params`` its values of the module's parameters, ``radius`` its chassis, m."""

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
        frame (``yaw`` its heading, rad, world frame; ``axle`` m), or None when not driven so.

        Raises:
            ProtocolError: the values are beyond what the module takes.
        """


@runtime_checkable
class Learnable(Protocol):
    """A reading a learner observes and/or a drive a learner's action commands (coopsim.env).

    Attributes:
        contact: The reading is contact switches (above 0.5: touching; the ``collisions``
            metric reads every such module).
        per_target: Values per target when the reading holds one block per target, else 0.
        action_fields: Names of a learner's action values, with units; () when a learner
            cannot drive this module, else it is a robot's motion module.
    """

    contact: ClassVar[bool]
    per_target: ClassVar[int]
    action_fields: ClassVar[tuple[str, ...]]

    @classmethod
    def observation_space(cls, params: Mapping[str, float],
                          n_targets: int) -> tuple[Any, Any] | None:
        """``(low, high)`` of the reading, each ``len(reading_fields(...))`` floats (default:
        unbounded), or None when it cannot be observed (no reading fields)."""

    @classmethod
    def action_space(cls, params: Mapping[str, float]) -> tuple[Any, Any]:
        """``(low, high)`` of an action, each ``len(action_fields)`` floats (default:
        unbounded)."""

    @classmethod
    def from_action(cls, action: np.ndarray, params: Mapping[str, float]) -> tuple[float, ...]:
        """The stored command for a checked action (default: its values, then zeros up to
        ``len(command_fields)``; batched worlds refuse a module that overrides it)."""


@runtime_checkable
class PerTargetReading(Protocol):
    """A reading whose width follows the world's targets (the target finder's)."""

    @classmethod
    def field_names(cls, n_targets: int) -> tuple[str, ...]:
        """Names of the reading's values for ``n_targets`` targets."""


@runtime_checkable
class Drawable(Protocol):
    """A module the viewer (and Foxglove) draws: ``draw`` is a JSON-ready hint
    (docs/plugins.md), sent in the module's ``/sim state`` entry."""

    draw: ClassVar[Mapping | None]


@runtime_checkable
class Answerer(Protocol):
    """A module that replies to ``read`` commands with more or less than its reading row."""

    @classmethod
    def answer(cls, command, row: np.ndarray, text: str, snap) -> tuple[str, list]:
        """Reply (text, data) from one robot's reading ``row`` (default: the whole row)."""

    @classmethod
    def answer_robot(cls, command, robot: str, row: np.ndarray, text: str,
                     snap) -> tuple[str, list]:
        """Reply (text, data) to robot ``robot`` (network name); default: :meth:`answer`."""


@runtime_checkable
class Recordable(Protocol):
    """What the state stream and the recording keep of a module.

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
        """What recorded ``data`` puts back on the snapshot's board, given the previous step's
        ``board`` (None at first) and the step's robot names; default None."""


@runtime_checkable
class CopyKernel(Protocol):
    """A module the ``copies`` backend of batched worlds computes inside its compiled step
    (:mod:`coopsim.env.copies`), by what it is rather than by its name.

    Attributes:
        copy_kind: ``"wheels"``: a differential drive whose command is the (left, right) wheel
            speeds, m/s, clipped to +-``max_speed`` and scaled by ``efficiency`` % (parameters
            of those names), driving at their mean along the heading and turning at their
            difference over the axle; ``"fan"``: distances from the chassis edge along
            ``copy_angles``, cast from the centre against everything but the robot's own
            chassis, capped at ``max_range`` m; ``"contact"``: the engine's front and rear
            contact flags; ``"frame"``: the module's own ``measure`` run on a frame of the
            copies' arrays, so its ``sense`` may read only the frame's ``dt``, ``pose``,
            ``velocity``, ``radius``, ``axle``, ``group``, ``targets``, ``target_colors``,
            ``contacts``, ``memo``, ``actuated`` (the wheels driven, under the drive's label)
            and ``geometry.heading``, and its previous reading (:mod:`coopsim.env.copysense`).
            A ``wheels`` drive's own reading is a ``frame`` one. "" (the default): not
            computed there (the batch then runs on the ``world`` backend, saying so).
        copy_angles: A fan's beam angles, rad from the heading, counter-clockwise.
    """

    copy_kind: ClassVar[str]
    copy_angles: ClassVar[tuple[float, ...]]


@runtime_checkable
class ModuleKernel(Protocol):
    """A kind whose ``sense``/``measure`` and/or ``actuate`` are compiled kernels over arrays:
    what the step plan (:class:`coopsim.sim.plan.StepPlan`) looks for to skip gathers or to
    fuse kinds into one compiled call. The module's own classmethods stay the entry points
    (the plan calls them once per kind per step, as every module's); the kernels are what they
    call, declared so that a plan may call them itself.

    Attributes:
        kernel_views: The frame arrays the kernels read, in the order they take them: names of
            :class:`~coopsim.model.module.Frame` attributes (``pose``, ``velocity``,
            ``state3d``, ``radius``, ``axle``, ``group``) -- read-only, all robots' rows.
        kernel_sense: A compiled function ``(views, rows, params, state, normals, uniforms,
            prev, out)`` writing the noisy reading of robots ``rows`` (int64, ascending) into
            ``out`` (len(rows), width): ``views`` the tuple of ``kernel_views``, ``params``
            (len(rows), P) float64 in the order of the module's ``params``, ``state`` the
            tuple of its state table's arrays in ``state_fields`` order (written in place,
            all robots' rows) then ``seen``, ``normals`` (len(rows), k) its block of the
            step's one draw (``noise_draws``), ``uniforms`` (len(rows),) for lost data (empty
            when its ``lost`` is 0), ``prev`` the rows' previous reading; or None.
        kernel_actuate: A compiled function ``(views, rows, params, state, commands, out)``
            computing what ``actuate`` hands the engine for robots ``rows`` from their stored
            ``commands`` (len(rows), command fields) into ``out``; or None.
    """

    kernel_views: ClassVar[tuple[str, ...]]
    kernel_sense: ClassVar[Any]
    kernel_actuate: ClassVar[Any]


# -- the defaults (what the base class gave every module before) -------------------------------
# Plain functions of the view (``self``), so a default reaches the module's own members.

def reading_fields(module, n_targets: int) -> tuple[str, ...]:
    """Names of ``module``'s reading values for ``n_targets`` targets (its ``fields`` unless it
    is a :class:`PerTargetReading`)."""
    sized = capability(module, PerTargetReading)       # a dict look-up once known
    return module.fields if sized is None else sized.field_names(n_targets)


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


class _LaserDefaults:
    laser_rank = 0

    def laser_scan(self, snap, robot, params, radius):
        return None

    def laser_mount(self, params):
        return 0.0, 0.0, 0.0


class _TwistDefaults:
    def from_twist(self, forward, left, turn, yaw, axle, params):
        return None


class _LearnDefaults:
    contact = False
    per_target = 0
    action_fields: tuple = ()

    def observation_space(self, params, n_targets):
        n = len(reading_fields(self.module, n_targets))
        return (np.full(n, -np.inf), np.full(n, np.inf)) if n else None

    def action_space(self, params):
        n = len(self.action_fields)
        return np.full(n, -np.inf), np.full(n, np.inf)

    def from_action(self, action, params):
        values = tuple(np.asarray(action, dtype=float).ravel().tolist())  # Python floats
        return values + (0.0,) * (len(self.module.command_fields) - len(values))


class _TargetDefaults:
    def field_names(self, n_targets):
        return self.module.fields


class _DrawDefaults:
    draw = None


class _AnswerDefaults:
    def answer(self, command, row, text, snap):
        return "", row.tolist()

    def answer_robot(self, command, robot, row, text, snap):
        return self.answer(command, row, text, snap)


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


class _CheckDefaults:
    def check_values(self, values, robot=None):
        return ""


class _CopyDefaults:
    copy_kind = ""
    copy_angles: tuple = ()


class _KernelDefaults:
    kernel_views: tuple = ()
    kernel_sense = None
    kernel_actuate = None


class _OffloadDefaults:
    prepare = None


class _RecordDefaults:
    columns: tuple = ()

    def record(self, snap, after):
        return None

    def replay(self, data, board, robots):
        return None


#: Each capability: (its members, the members a module must define to offer it (any of them
#: when empty), its defaults).
_KINDS: dict[type, tuple[tuple[str, ...], tuple[str, ...], type]] = {
    LaserScanner: (("laser_scan", "laser_mount", "laser_rank"), ("laser_scan",), _LaserDefaults),
    TwistDriven: (("from_twist",), ("from_twist",), _TwistDefaults),
    Learnable: (("observation_space", "action_space", "from_action", "action_fields",
                 "per_target", "contact"), (), _LearnDefaults),
    PerTargetReading: (("field_names",), ("field_names",), _TargetDefaults),
    Drawable: (("draw",), ("draw",), _DrawDefaults),
    Answerer: (("answer", "answer_robot"), (), _AnswerDefaults),
    Recordable: (("columns", "record", "replay"), (), _RecordDefaults),
    Offloaded: (("prepare",), ("prepare",), _OffloadDefaults),
    CopyKernel: (("copy_kind", "copy_angles"), ("copy_kind",), _CopyDefaults),
    ValueChecker: (("check_values",), ("check_values",), _CheckDefaults),
    ModuleKernel: (("kernel_views", "kernel_sense", "kernel_actuate"),
                   (), _KernelDefaults),
}
CAPABILITIES: tuple[type, ...] = tuple(_KINDS)
_ADAPTERS: dict[tuple[type, str], Any] = {}
_CACHE: dict[tuple, Any] = {}


class Legacy:
    """The members the base class had before they became capabilities, for a module written
    then: a ``Module`` subclass whose code names one it does not define (``super().answer``,
    ``cls.field_names``) gets this class as a last base, with a DeprecationWarning
    (docs/plugins.md, *Deprecated*). Each member gives the old default through the capability;
    :func:`capability` never counts these as the module's own."""


def _legacy(name: str, kind: type):
    def default(cls, *args):
        warnings.warn(f"Module.{name} is deprecated: it is the {kind.__name__} capability's "
                      "default (coopsim.model.capabilities)", DeprecationWarning, stacklevel=2)
        # the default itself (what super() gave), bound to a view of the module: the members
        # it calls are the module's own (the old answer_robot called the module's answer)
        return types.MethodType(vars(_KINDS[kind][2])[name], _View(cls, cls, kind))(*args)
    return classmethod(default)


for _kind, (_members, _, _defaults) in _KINDS.items():
    for _name in _members:
        _value = vars(_defaults).get(_name)
        setattr(Legacy, _name, _value if not callable(_value) else _legacy(_name, _kind))


#: Every name :class:`Legacy` supplies: the capabilities' members, and ``validate`` and
#: ``describe`` (model/module.py adds those two: they are its functions now).
LEGACY_NAMES = frozenset({*(n for n in vars(Legacy) if not n.startswith("_")), "validate",
                          "describe"})


def own(module, name: str) -> bool:
    """Whether ``module`` defines ``name`` itself (a deprecated override of the old base's
    ``validate``/``describe`` is still called)."""
    return _defines(module, name)


def _defines(owner, name: str) -> bool:
    """Whether ``owner`` (a class, or an object and its class) has ``name`` of its own: not
    from :class:`Legacy`, not from ``object``."""
    if not isinstance(owner, type):
        if name in getattr(owner, "__dict__", {}):
            return True
        owner = type(owner)
    return any(name in vars(k) for k in owner.__mro__ if k is not Legacy and k is not object)


class _View:
    """A module (or an adapter for it) seen as one capability: the adapter's members, then the
    module's own, then the capability's defaults (resolved once, then kept)."""

    def __init__(self, source, module, kind: type) -> None:
        self._source, self.module, self._defaults = source, module, _KINDS[kind][2]
        self.label = getattr(module, "label", "")

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        for owner in (self._source, self.module):
            if owner is not None and _defines(owner, name):
                value = getattr(owner, name)
                break
        else:
            value = getattr(self._defaults, name)   # AttributeError: nobody has it
            if isinstance(value, types.FunctionType):
                value = types.MethodType(value, self)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"<{self._defaults.__name__[1:]} view of {self.label or self._source!r}>"


def capability(module, kind: type, default: bool = False):
    """``module`` as capability ``kind``: an adapter registered for its label, else the module
    itself (or a view adding the kind's defaults for members it leaves out) when it offers the
    kind, else None, or with ``default`` a view that is all defaults (a front end that treats
    every module alike: the learner's unbounded observation, the whole-reading reply).

    Args:
        module: A module class (or any object with a ``label``).
        kind: One of :data:`CAPABILITIES` (:class:`LaserScanner`, :class:`Learnable`...).
    """
    key = (module, kind, default)
    found = _CACHE.get(key, _CACHE)
    if found is not _CACHE:
        return found
    members, required, _ = _KINDS[kind]
    adapter = _ADAPTERS.get((kind, getattr(module, "label", None)))
    own = [_defines(module, n) for n in members]
    if adapter is not None:
        found = _View(adapter, module, kind)
    elif all(own):
        found = module
    elif any(own) and all(_defines(module, n) for n in required):
        found = _View(module, module, kind)
    else:
        found = _View(module, module, kind) if default else None
    _CACHE[key] = found
    return found


def offers(module, kind: type) -> bool:
    """Whether ``module`` offers capability ``kind`` (by itself or through an adapter)."""
    return capability(module, kind) is not None


def register_adapter(kind: type, label: str, adapter: Any) -> None:
    """Map module ``label`` (someone else's) to capability ``kind`` without editing it.

    Args:
        kind: One of :data:`CAPABILITIES`.
        label: The module's registered label.
        adapter: A class or object with the kind's members (classmethods or plain functions
            called with the same arguments as the capability's); members it leaves out come
            from the module itself, then from the kind's defaults.

    Raises:
        TypeError: ``kind`` is no capability, or ``adapter`` has none of its members.
    """
    if kind not in _KINDS:
        raise TypeError(f"{kind!r} is not a module capability: one of "
                        f"{', '.join(k.__name__ for k in CAPABILITIES)}")
    members = _KINDS[kind][0]
    if not any(hasattr(adapter, n) for n in members):
        raise TypeError(f"adapter {adapter!r} has none of {kind.__name__}'s members {members}")
    _ADAPTERS[(kind, label)] = adapter
    _CACHE.clear()


def unregister_adapter(kind: type, label: str) -> None:
    """Forget the adapter mapping module ``label`` to ``kind`` (if any)."""
    _ADAPTERS.pop((kind, label), None)
    _CACHE.clear()


def legacy_uses(cls: type) -> set[str]:
    """The removed base members ``cls``'s own functions reach on the class (``cls.columns``)
    or through ``super()`` (``super().answer(...)``) that no class of it (for ``super()``: no
    base of it) defines: what :class:`Legacy` must supply."""
    names: set[tuple[str, bool]] = set()
    for value in vars(cls).values():
        code = getattr(getattr(value, "__func__", value), "__code__", None)
        stack = [code] if code is not None else []
        while stack:
            c = stack.pop()
            if LEGACY_NAMES.intersection(c.co_names):    # cheap: most code names none of them
                names |= _attributes_of_self(c)
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return {n for n, up in names if n in LEGACY_NAMES
            and not any(_defines(k, n) for k in (cls.__mro__[1:] if up else (cls,)))}


def _attributes_of_self(code: types.CodeType) -> set[tuple[str, bool]]:
    """(attribute name, through super()) of what ``code`` loads from ``cls``/``self`` or from
    a ``super()``."""
    out, recent = set(), []
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR") and recent:
            up = ins.opname == "LOAD_SUPER_ATTR" or "super" in recent[-4:]
            if up or recent[-1] in ("cls", "self"):
                out.add((ins.argval, up))
        if ins.opname not in ("PRECALL", "CACHE", "PUSH_NULL", "NOP"):
            recent.append(ins.argval if ins.opname in ("LOAD_FAST", "LOAD_DEREF",
                                                       "LOAD_GLOBAL") else ins.opname)
    return out


def kernel_of(module):
    """``module`` as a :class:`ModuleKernel` when it (or its adapter) declares a compiled
    ``kernel_sense`` or ``kernel_actuate``, else None (the slow path: its Python classmethods,
    one call per kind per step)."""
    found = capability(module, ModuleKernel)
    if found is None or (found.kernel_sense is None and found.kernel_actuate is None):
        return None
    return found


def draw_hint(module) -> Mapping | None:
    """``module``'s :class:`Drawable` hint (its own or an adapter's), or None."""
    return capability(module, Drawable, default=True).draw


def supplies(module, kind: type, name: str) -> bool:
    """Whether ``module`` (or its adapter) supplies member ``name`` of ``kind`` itself, rather
    than leaving it to the kind's default (batched learning needs ``from_action``'s default)."""
    found = capability(module, kind)
    if found is None:
        return False
    owners = (found,) if not isinstance(found, _View) else (found._source, found.module)
    return any(_defines(owner, name) for owner in owners)
