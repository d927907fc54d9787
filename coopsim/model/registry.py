"""Plugin registries: robot types, modules, drivers, engines and rules, found by entry points.

Every plugin -- the built-in ones too -- is a class registered under a string label in one of
five ``importlib.metadata`` entry-point groups (ARGoS's REGISTER_SENSOR, Gymnasium's registry)::

    [options.entry_points]          # setup.cfg of any installed package
    coopsim.modules =
        joints = coopsim_arm.modules:Joints

A registry reads its group on first use. A plugin that fails to import, names a label already
taken, or whose declaration is invalid is reported in one line naming the plugin and its package
(:attr:`Registry.problems`, shown by ``coopsim list`` and logged once) and skipped; everything else
loads. Engines load lazily, one at a time, so commands that never step (``coopsim check``) never
import a physics library. Classes can also be registered in code with :meth:`Registry.register`.
"""

from __future__ import annotations

import functools
import logging
import threading
from dataclasses import dataclass
from importlib import metadata
from typing import Callable, Generic, Iterator, TypeVar

from .errors import RegistryError

T = TypeVar("T")
log = logging.getLogger(__name__)
BUILTIN = "coopsim"  # the distribution whose plugins are the built-ins (they load first)


@dataclass(frozen=True)
class Origin:
    """Where a registered plugin came from: the distribution and the object path."""

    package: str
    version: str
    target: str

    def __str__(self) -> str:
        return f"{self.package} {self.version}".strip()


class Registry(Generic[T]):
    """Label -> class for one plugin kind, filled from an entry-point group.

    Args:
        kind: What it holds, for messages ("robot type", "module").
        group: The entry-point group (``coopsim.modules``), or "" for a code-only registry.
        lazy: Import each entry point only when its label is asked for (engines).
        check: Called with (label, class, registry) before a class is admitted; raises
            ValueError or TypeError saying what is wrong with the declaration.
    """

    def __init__(self, kind: str, group: str = "", lazy: bool = False,
                 check: Callable | None = None) -> None:
        self.kind, self.group, self.lazy = kind, group, lazy
        self._check = check
        self._items: dict[str, T] = {}
        self._origins: dict[str, Origin] = {}
        self._pending: dict[str, metadata.EntryPoint] = {}
        self.problems: list[str] = []
        self._failed: dict[str, str] = {}  # label -> why its plugin was skipped
        self._loaded = not group
        self._ready = not group  # set once load() has finished: lookups then skip the lock
        self._lock = threading.RLock()

    # -- filling --------------------------------------------------------------------------------

    def register(self, label: str, origin: Origin | None = None) -> Callable[[T], T]:
        """Class decorator: register the decorated class under ``label``.

        Raises:
            RegistryError: the label is taken or the declaration is invalid.
        """

        def _add(item: T) -> T:
            with self._lock:
                self._admit(label, item, origin or Origin("(code)", "", _qualname(item)))
            return item

        return _add

    def put(self, label: str, item: T) -> None:
        """Register ``item`` under ``label`` in this process, in place of one registered with
        :meth:`put` before (a robot type derived at load time from a file that changed).

        Raises:
            RegistryError: the label is taken by another kind of registration, or the
                declaration is invalid.
        """
        with self._lock:
            if self._origins.get(label, Origin("", "", "")).package == "(imported)":
                del self._items[label], self._origins[label]
            self._admit(label, item, Origin("(imported)", "", _qualname(item)))

    def _admit(self, label: str, item: T, origin: Origin) -> None:
        if label in self._items or label in self._pending:
            first = self._origins.get(label) or _ep_origin(self._pending[label])
            raise RegistryError(f"{self.kind} {label!r} is registered twice (first by {first})")
        try:
            if getattr(item, "label", label) != label:
                raise ValueError(f"its label attribute is {item.label!r}")
            if self._check is not None:
                self._check(label, item, self)
        except (ValueError, TypeError) as exc:
            raise RegistryError(f"{self.kind} {label!r}: invalid declaration: {exc}") from None
        self._items[label] = item
        self._origins[label] = origin

    def load(self) -> None:
        """Read the entry-point group (once); built-ins first, then other packages by name."""
        if self._ready:  # building a world asks ~17 times per robot: no lock once loaded
            return
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            try:
                self._read_group()
            finally:
                self._ready = True

    def _read_group(self) -> None:
        """The entry points of the group, admitted (or kept pending when lazy)."""
        eps = sorted(metadata.entry_points(group=self.group),
                     key=lambda ep: (_dist(ep) != BUILTIN, _dist(ep), ep.name))
        for ep in eps:
            if ep.name in self._items or ep.name in self._pending:
                self._report(ep, f"duplicate label: {self.kind} {ep.name!r} is already "
                                 f"registered by {self.origin(ep.name)}")
            elif self.lazy:
                self._pending[ep.name] = ep
            else:
                self._load_one(ep)
        if not any(_dist(ep) == BUILTIN for ep in eps) and self.group:
            self.problems.append(f"no built-in {self.kind}s found: coopsim is not "
                                 "installed (pip install -e .)")

    def _load_one(self, ep: metadata.EntryPoint) -> None:
        try:
            item = ep.load()
        except Exception as exc:  # noqa: BLE001 -- a broken plugin must not stop the others
            self._report(ep, f"cannot import {ep.value}: {type(exc).__name__}: {exc}")
            return
        try:
            self._admit(ep.name, item, _ep_origin(ep))
        except RegistryError as exc:
            self._report(ep, str(exc))

    def _report(self, ep: metadata.EntryPoint, reason: str) -> None:
        line = f"plugin {self.group}:{ep.name} from {_ep_origin(ep)}: {reason}; skipped"
        self.problems.append(line)
        self._failed.setdefault(ep.name, line)
        log.warning("%s", line)

    # -- looking up -----------------------------------------------------------------------------

    def get(self, label: str) -> T:
        """Return the class under ``label`` (importing it now if it is lazy).

        Raises:
            RegistryError: nothing (loadable) is registered under that label.
        """
        self.load()
        item = self._items.get(label)
        if item is not None:  # admitted items are never replaced: no lock needed to read one
            return item
        with self._lock:
            if label in self._pending:
                self._load_one(self._pending.pop(label))
            try:
                return self._items[label]
            except KeyError:
                known = ", ".join(self.labels()) or "none"
                raise RegistryError(f"unknown {self.kind} {label!r} (known: {known})") from None

    def origin(self, label: str) -> Origin:
        """Where ``label`` came from."""
        self.load()
        if label in self._pending:
            return _ep_origin(self._pending[label])
        return self._origins[label]

    def failure(self, label: str) -> str:
        """Why the plugin registered under ``label`` did not load (its line of
        :attr:`problems`), or "" when it loaded or nothing claimed the label."""
        self.load()
        return "" if label in self else self._failed.get(label, "")

    def loaded(self) -> list[tuple[str, T, Origin]]:
        """(label, class, origin) of every plugin imported so far (lazy ones not asked for
        are left out)."""
        self.load()
        with self._lock:
            return [(label, item, self._origins[label]) for label, item in self._items.items()]

    def labels(self) -> list[str]:
        """Every label, loaded or not, sorted."""
        self.load()
        return sorted({*self._items, *self._pending})

    def __contains__(self, label: object) -> bool:
        self.load()
        return label in self._items or label in self._pending

    def __iter__(self) -> Iterator[str]:
        return iter(self.labels())

    def items(self) -> list[tuple[str, T]]:
        """(label, class) pairs sorted by label, importing lazy ones (skipping broken ones)."""
        for label in self.labels():
            if label in self._pending:
                try:
                    self.get(label)
                except RegistryError:
                    pass
        return sorted(self._items.items())


def _dist(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return _name_version(dist)[0] if dist is not None else ""


@functools.lru_cache(maxsize=None)
def _name_version(dist: metadata.Distribution) -> tuple[str, str]:
    """A distribution's name and version, its METADATA parsed once per distribution object (the
    entry points of one group share theirs). Why: each ``dist.metadata`` parses the file again,
    and sorting and admitting the six groups' plugins asked ~260 times a process (0.06 s)."""
    meta = dist.metadata
    return meta["Name"], meta["Version"]


def _ep_origin(ep: metadata.EntryPoint) -> Origin:
    dist = getattr(ep, "dist", None)
    return Origin(_dist(ep) or "(unknown package)", _name_version(dist)[1] if dist else "",
                  ep.value)


def _qualname(item) -> str:
    return f"{getattr(item, '__module__', '?')}:{getattr(item, '__qualname__', item)}"
