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
declarations (``fields``, ``command_fields``, ``label``...) fill the rest. The generated
reference (docs/reference/contract.md) lists each capability, its members and who asks for it. Frames and units as in :mod:`coopsim.model.module`.
The capabilities themselves (each a ``Protocol``) are in :mod:`coopsim.model.capability_kinds`
and re-exported here. Nothing here imports pymunk, zmq, Gymnasium or ROS.
"""

from __future__ import annotations

import dis
import types
import warnings
from typing import Any, Mapping

import numpy as np

from .capability_kinds import (  # noqa: F401 - the capabilities, re-exported from here
    LaserScan, LaserScanner, TwistDriven, Learnable, PerTargetReading, Drawable, Answerer,
    Recordable, ModuleKernel, Offloaded, ValueChecker)


# -- the defaults (what the base class gave every module before) -------------------------------
# Plain functions of the view (``self``), so a default reaches the module's own members.

def reading_fields(module, n_targets: int) -> tuple[str, ...]:
    """Names of ``module``'s reading values for ``n_targets`` targets (its ``fields`` unless it
    is a :class:`PerTargetReading`)."""
    sized = capability(module, PerTargetReading)       # a dict look-up once known
    return module.fields if sized is None else sized.field_names(n_targets)


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


class _CheckDefaults:
    def check_values(self, values, robot=None):
        return ""


class _KernelDefaults:
    kernel_views: tuple = ()
    kernel_beams: tuple = ()
    kernel_sense = None
    kernel_actuate = None
    kernel_drive: tuple = ()
    kernel_rowwise: bool = False


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
    ValueChecker: (("check_values",), ("check_values",), _CheckDefaults),
    ModuleKernel: (("kernel_views", "kernel_sense", "kernel_actuate", "kernel_drive",
                    "kernel_beams", "kernel_rowwise"), (), _KernelDefaults),
}
CAPABILITIES: tuple[type, ...] = tuple(_KINDS)


def members(kind: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(every member of capability ``kind``, the members a module must define to offer it: any
    of them; () when any member does)."""
    return _KINDS[kind][0], _KINDS[kind][1]

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
    ``kernel_sense`` or ``kernel_actuate``, else None (a kind of Python code: its own
    ``sense``/``measure``/``actuate``, one call per kind per step)."""
    found = capability(module, ModuleKernel)
    if found is None or (found.kernel_sense is None and found.kernel_actuate is None):
        return None
    return found


def kernels_of(module) -> tuple:
    """(``kernel_sense``, ``kernel_actuate``, ``kernel_drive``) of ``module``'s
    :class:`ModuleKernel` (its own or an adapter's), (None, None, ()) when it has none: what
    the base ``Module`` runs, looked up once (kept until an adapter is registered)."""
    key = (module, kernels_of)
    found = _CACHE.get(key)
    if found is None:
        view = kernel_of(module)
        found = _CACHE[key] = ((None, None, ()) if view is None else
                               (view.kernel_sense, view.kernel_actuate, tuple(view.kernel_drive)))
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


class CopyKernel:
    """Deprecated, kept so that a plugin importing it still imports: the ``copies`` batch
    backend reads a kind's :class:`ModuleKernel` (``kernel_sense``,
    ``kernel_actuate``, ``kernel_drive``, ``kernel_beams``) and ignores ``copy_kind`` and
    ``copy_angles``. Making one warns (DeprecationWarning)."""

    copy_kind = ""
    copy_angles: tuple = ()

    def __init_subclass__(cls, **kwargs):
        warnings.warn("coopsim.model.capabilities.CopyKernel is deprecated: the copies backend "
                      "reads the kind's ModuleKernel (kernel_sense, kernel_actuate)",
                      DeprecationWarning, stacklevel=2)
        super().__init_subclass__(**kwargs)
