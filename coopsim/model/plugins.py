"""The six plugin registries and the checks a plugin's declaration must pass to join one.

``ROBOT_TYPES``, ``MODULES``, ``DRIVERS``, ``ENGINES``, ``RULES`` and ``METRICS`` (metric kinds
of ``[MONITORS]``) read the entry-point groups ``coopsim.robot_types``, ``coopsim.modules``,
``coopsim.drivers``, ``coopsim.engines``, ``coopsim.rules`` and ``coopsim.metrics``
(docs/plugins.md); ``coopsim.defaults`` names each kind's default without importing it (its
``engine`` entry: the default engine's class, read by :func:`default_engine`). A module's command ids must be new across all modules and
at least :data:`~coopsim.model.commands.FIRST_MODULE_ID`; its column names new across modules.
"""

from __future__ import annotations

import os
import traceback
from importlib import metadata
from typing import Any, Iterable, Mapping

from .commands import FIRST_MODULE_ID
from .driver import Driver, Rule
from .metric_kind import MetricKind
from .capabilities import Learnable, Recordable, capability
from . import kernel
from .module import Module, check_declaration
from .errors import RegistryError
from .registry import BUILTIN, Registry, _dist
from .robot_type import RobotType


def _subclass(base: type, validate=None):
    def check(label, item, registry) -> None:
        if not (isinstance(item, type) and issubclass(item, base)):
            raise TypeError(f"{item!r} is not a subclass of {base.__name__}")
        validate(item) if validate else item.validate()
        for spec in getattr(item, "params", ()):
            spec.validate()
    return check


def _check_module(label, item, registry) -> None:
    _subclass(Module, check_declaration)(label, item, registry)
    for other_label, other in registry._items.items():
        taken = {c.id for c in other.commands} & {c.id for c in item.commands}
        if taken:
            raise ValueError(f"command id(s) {sorted(taken)} are already used by module "
                             f"{other_label!r}")
        cols = {c.name for c in _columns(other)} & {c.name for c in _columns(item)}
        if cols:
            raise ValueError(f"column(s) {sorted(cols)} are already used by module {other_label!r}")
    low = [c.id for c in item.commands if c.id < FIRST_MODULE_ID]
    if low:
        raise ValueError(f"command ids below {FIRST_MODULE_ID} belong to every robot: {low}")


def _check_engine(label, item, registry) -> None:
    if not (isinstance(item, type) and hasattr(item, "step") and hasattr(item, "features")):
        raise TypeError(f"{item!r} is not an engine class (see coopsim.physics.engine.Engine)")


ROBOT_TYPES: Registry = Registry("robot type", "coopsim.robot_types", check=_subclass(RobotType))
MODULES: Registry = Registry("module", "coopsim.modules", check=_check_module)
kernel.fields_of = lambda label: getattr(MODULES.get(label), "state_fields", ())
DRIVERS: Registry = Registry("driver", "coopsim.drivers", check=_subclass(Driver))
RULES: Registry = Registry("rule", "coopsim.rules", check=_subclass(Rule))
ENGINES: Registry = Registry("engine", "coopsim.engines", lazy=True, check=_check_engine)
METRICS: Registry = Registry("metric kind", "coopsim.metrics", check=_subclass(MetricKind))
#: The entry-point group that names a kind's default by its class, read from the packages'
#: metadata without importing anything: ``engine = <the default engine's class>``, the target of
#: its ``coopsim.engines`` entry (docs/plugins.md). The class's own declaration still decides.
DEFAULTS = "coopsim.defaults"

#: Every registry by its plural name, in the order ``coopsim list`` shows them.
REGISTRIES = {"robot types": ROBOT_TYPES, "modules": MODULES, "drivers": DRIVERS,
              "engines": ENGINES, "rules": RULES, "metric kinds": METRICS}


def blame(exc: BaseException) -> str:
    """One line naming the plugin from another package whose code raised ``exc``, its package
    and where (``plugin coopsim.modules:lamp from coopsim-lamp 0.2 raised ValueError: ...``);
    "" when no such plugin's code is on the traceback (a coopsim bug keeps its traceback).

    The innermost frame of a plugin's package decides; its ``self``/``cls`` names the plugin
    when several come from one package."""
    outside = [(registry.group, label, item, origin) for registry in REGISTRIES.values()
               for label, item, origin in registry.loaded() if origin.package != BUILTIN]
    for frame, lineno in reversed(list(traceback.walk_tb(exc.__traceback__))):
        top = str(frame.f_globals.get("__name__", "")).split(".")[0]
        ours = [p for p in outside if p[3].target.split(":")[0].split(".")[0] == top]
        if not ours:
            continue
        me = frame.f_locals.get("cls", type(frame.f_locals.get("self")))
        group, label, _, origin = next((p for p in ours if isinstance(me, type)
                                        and issubclass(me, p[2])), ours[0])
        where = f"{os.path.basename(frame.f_code.co_filename)}:{lineno}, in {frame.f_code.co_name}"
        return (f"plugin {group}:{label} from {origin} raised {type(exc).__name__}: {exc} "
                f"({where})")
    return ""


def problems() -> list[str]:
    """Every plugin that failed to load, one line each."""
    for registry in REGISTRIES.values():
        registry.load()
    return [line for registry in REGISTRIES.values() for line in registry.problems]


def _columns(module) -> tuple:
    """A module's columns (its :class:`~coopsim.model.capabilities.Recordable` ones)."""
    return capability(module, Recordable, default=True).columns


def module_columns(stream_only: bool = False) -> list:
    """(module label, Column) of every registered module's columns, by module label: what the
    recording keeps per robot, or (``stream_only``) every column a state stream may carry."""
    return [(label, c) for label, m in MODULES.items() for c in _columns(m)
            if c.stream or not stream_only]


#: ``Snapshot.extra`` key of the module labels some robot of the world carries (a tuple, set
#: by the simulation on every layout change and by a replay from its recorded layout).
CARRIED = "carried"


def carried_modules(modules: Iterable[Iterable[str]]) -> tuple[str, ...]:
    """The labels of the modules some robot carries (``modules``: each robot's labels),
    sorted: what :data:`CARRIED` holds."""
    return tuple(sorted({label for labels in modules for label in labels}))


def stream_columns(carried: Iterable[str] | None = None) -> list:
    """(module label, Column) the state stream and ``/sim state`` carry for a world whose
    robots carry the modules ``carried`` (protocol 8: only those modules' streamed columns,
    in the order of :func:`module_columns`); None: every registered module's (protocol 7)."""
    columns = module_columns(stream_only=True)
    if carried is None:
        return columns
    carried = set(carried)
    return [(label, c) for label, c in columns if label in carried]


def snapshot_columns(snap) -> list:
    """:func:`stream_columns` of the world ``snap`` (a Snapshot) shows: the modules its
    ``extra[CARRIED]`` names (every registered module's when it names none)."""
    return stream_columns(snap.extra.get(CARRIED))


def timed_events(rules: Mapping[str, Any] | None) -> list[Mapping]:
    """The timed events in a run's rule fields (a snapshot's ``rules``, ``/sim state``'s):
    the entries of the field each rule declares as its ``Rule.timeline``, rules in their
    order. A rule not installed in this process (a remote run's plugin) is passed over."""
    out: list[Mapping] = []
    for key, fields in (rules or {}).items():
        try:
            field = RULES.get(str(key).split("#")[0]).timeline  # label#2: a second one
        except RegistryError:
            continue
        entries = fields.get(field) if field and isinstance(fields, Mapping) else None
        if isinstance(entries, list):
            out += [e for e in entries if isinstance(e, Mapping)]
    return out


def reference_type() -> str:
    """The label of the reference robot type (``RobotType.reference``, set on the class
    itself: a type built on it does not inherit it): the built-ins' first (by label), else
    another package's first.

    Raises:
        RegistryError: no registered type declares it.
    """
    found = sorted((origin.package != BUILTIN, label) for label, cls, origin
                   in ROBOT_TYPES.loaded() if vars(cls).get("reference"))
    if not found:
        raise RegistryError("no robot type declares itself the reference (RobotType.reference)")
    return found[0][1]


def default_engine() -> str:
    """The label of the default engine (``Engine.default``, set on the class itself): the one a
    scenario runs on when neither ``[SETTINGS] engine`` nor ``--engine`` names one. The engines
    that ``coopsim.defaults`` names (:data:`DEFAULTS`) are looked at first, so a run imports
    only its own engine (the scan by label imported MuJoCo to find pymunk).

    Raises:
        RegistryError: no loadable engine declares it.
    """
    return _first_engine(lambda cls: vars(cls).get("default"), "itself the default "
                                                               "(Engine.default)",
                         first=declared_defaults(ENGINES, "engine"))


def declared_defaults(registry: Registry, kind: str) -> list[str]:
    """The labels of ``registry`` whose class a :data:`DEFAULTS` entry named ``kind`` names
    (the entry's value is the class's entry-point target), the built-ins' first, then other
    packages' by name; nothing is imported. An entry naming no registered class is passed over."""
    by_target = {registry.origin(label).target: label for label in registry.labels()}
    entries = sorted(metadata.entry_points(group=DEFAULTS, name=kind),
                     key=lambda ep: (_dist(ep) != BUILTIN, _dist(ep)))
    return [by_target[ep.value] for ep in entries if ep.value in by_target]


def engine_with(feature: str) -> str:
    """The label of the first engine offering ``feature`` (one of ``Engine.features``; the
    batched learning worlds ask for ``batch``, the real-time benchmark for ``swarm``).

    Raises:
        RegistryError: no loadable engine offers it.
    """
    return _first_engine(lambda cls: feature in cls.features, f"the feature {feature!r}")


def _first_engine(wanted, what: str, first: Iterable[str] = ()) -> str:
    """The first engine whose class ``wanted`` accepts: those of ``first`` (labels), then the
    rest, built-ins first (by label). Engines load lazily: only those looked at until one is
    found are imported."""
    order = sorted(ENGINES.labels(), key=lambda label: (ENGINES.origin(label).package != BUILTIN,
                                                        label))
    for label in dict.fromkeys([*first, *order]):
        try:
            cls = ENGINES.get(label)
        except RegistryError:  # a broken engine plugin: reported in ENGINES.problems
            continue
        if wanted(cls):
            return label
    raise RegistryError(f"no engine declares {what}")


def motion_module(labels: Iterable[str]) -> str | None:
    """The first of the module ``labels`` (a robot's) that can be driven by an action (it
    declares :class:`~coopsim.model.capabilities.Learnable` ``action_fields``): the robot's
    motion module; None when none can."""
    return next((label for label in labels
                 if capability(MODULES.get(label), Learnable, default=True).action_fields), None)
