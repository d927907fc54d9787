"""The one decorator every compiled kernel of coopsim is made with, and how kernels get compiled.

numba is a dependency of coopsim and the simulator's only path: every kernel compiles. The
kernels' modules still import without numba (:func:`jit` is then the identity) for one
reason: the swarm library runs inside controllers, on machines that need no numba, and keeps
its numpy and Python code (:data:`COMPILED` is what it tests); nothing on the simulator side
tests it. The thread policy for the kernels is :mod:`coopsim.model.threads`.

**When kernels compile.** numba compiles a kernel on its first call for each signature and
keeps it on disk (``cache=True``: ``__pycache__`` beside the source, or ``NUMBA_CACHE_DIR``).
A module whose kernels a step needs registers a *loader* (:func:`warmer`: a function that calls
them once with a world's argument types, and the labels of the module kinds, drivers or engine
that call for it); :func:`load_pending` runs, in the calling thread, the loaders not yet run
that a world's labels call for. A simulation runs them when it is made and whenever its step
plan is built (the plan's composed calls compile then too), so a run steps compiled from its
first step, and a cold cache compiles only what the world uses. Loading from the cache takes milliseconds a kernel; compiling takes seconds, once
after an install or an update, and the process says so on one stderr line while it compiles
(:func:`notice`). ``coopsim warmup`` compiles everything ahead (:mod:`coopsim.app.warmup`).

**What a cached kernel is keyed by** (:class:`_KeyedCache`): numba's own key (the signature,
the CPU, the kernel's bytecode, its own file's time) plus the kernel's options and
:func:`sources_key`, a digest of the text of every file holding a kernel it calls or inlines,
found by following its globals (and those kernels' globals, and so on), and of the values of
the constants it reads from other modules (numba freezes them into the machine code). An edit
of a helper therefore recompiles every kernel that uses it; nothing is listed by hand.

Importing this module imports numba (when installed); nothing in the client does.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import sys
import threading
import types
from typing import Callable

import numpy as np

try:
    import numba
    from numba import prange
except ImportError:  # numba missing: only the swarm library (controllers) imports kernels then
    numba = None
    prange = range

#: True when kernels are compiled (numba imported); tested by the swarm library only.
COMPILED = numba is not None


def jit(parallel: bool = False, inline: bool = False, nogil: bool = True,
        counted: bool = True):
    """numba's ``njit``, cached on disk (``cache=True``: ``__pycache__`` or
    ``NUMBA_CACHE_DIR``; keyed as the module says), with numpy's division semantics (no
    Python division checks: the kernels check their divisors or know them non-zero); without
    numba the identity, so that the module defining the kernel imports.

    Args:
        parallel: Compile ``prange`` loops to run on numba's threads.
        inline: Inline in numba's IR at every call site. Per-item functions called from a loop
            need it: a call passing arrays increfs and decrefs each (atomic operations,
            contended by the threads, costlier than the work), and LLVM inlines only small
            functions.
            A big helper that several kernels use is rather a kernel of its own that they call,
            uncounted (``counted=False``): it compiles once a signature, where inlined it was
            compiled again in each caller (step_rows, fill_block), and its call costs no
            counts. Where the callee's work a call is short (a robot's sonar fan: fan_grids),
            the call's entry (its arrays' fields) costs more than the compile saves: inline.
        nogil: Release the GIL while the kernel runs (the default: another thread -- a reader
            encoding a snapshot, a solver -- runs meanwhile). Every kernel of coopsim is
            nopython code (no object mode, no Python objects inside): the arguments are
            unboxed before the GIL is released and the results boxed after it is taken back.
        counted: Keep numba's reference counting of arrays (its NRT). False for a hot kernel
            that allocates no array, returns none and calls no kernel returning one: an
            array handed to an inlined function that branches is counted up and down around
            each call (two atomic operations, which LLVM does not prune), and the kernel then
            spends more on the counts than on its work (the aerial ray cast: 6x). Only the
            counting goes (numba's ``_nrt=False``): no operation on a float changes, the same
            bits.

    Returns:
        A decorator for the kernel.
    """
    if numba is None:
        return lambda f: f
    make = numba.njit(cache=True, parallel=parallel, error_model="numpy", nogil=nogil,
                      inline="always" if inline else "never", _nrt=counted)
    options = ("nogil",) * nogil + ("uncounted",) * (not counted)

    def decorate(f):
        kernel = make(f)
        if type(getattr(kernel, "_cache", None)) is _FunctionCache:
            kernel._cache = _KeyedCache(f, options)
        return kernel

    return decorate


_DIGESTS: dict = {}  # file path -> sha256 of its bytes (read once a process)


def _file_digest(path: str) -> bytes:
    digest = _DIGESTS.get(path)
    if digest is None:
        try:
            with open(path, "rb") as fh:
                digest = hashlib.sha256(fh.read()).digest()
        except OSError:  # no file (a kernel made from a string): its bytecode keys it
            digest = b""
        _DIGESTS[path] = digest
    return digest


def _names(code: types.CodeType) -> set:
    """The global and attribute names ``code`` and the code nested in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _constant(value) -> bytes | None:
    """The bytes a frozen global ``value`` is keyed by, None for what numba does not freeze
    (modules and functions are followed, not keyed)."""
    if isinstance(value, tuple):  # numba freezes a tuple of constants too
        parts = [_constant(v) for v in value]
        return None if None in parts else b"(" + b",".join(parts) + b")"
    if isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return repr(value).encode()
    if isinstance(value, np.ndarray):
        return repr((value.dtype.str, value.shape)).encode() + value.tobytes()
    return None


def sources_key(func) -> str:
    """Digest of what the compiled ``func`` is made of beyond its own bytecode: the text of
    the file of ``func`` and of every kernel it reaches (a numba dispatcher among its globals,
    its closure's cells or the attributes it reads of a module among its globals, followed
    transitively), and the value of every constant it and they read; numba's and Python's
    versions. Why: numba keys a cached kernel by its own file's time and bytecode only, so an
    edit of a helper it inlines, or of a constant it imports, left it loading stale machine
    code. The files' places are not in the key: a copy of the package with its ``__pycache__``
    (its files' times kept) loads the same kernels."""
    digest = hashlib.sha256(f"{getattr(numba, '__version__', '')} {sys.version}".encode())
    todo, seen = [func], set()
    while todo:
        f = todo.pop()
        f = getattr(f, "py_func", f)
        code = getattr(f, "__code__", None)
        if code is None or id(f) in seen:
            continue
        seen.add(id(f))
        digest.update(_file_digest(code.co_filename))  # the text, not where it lies
        names = _names(code)
        values = [(n, f.__globals__[n]) for n in sorted(names) if n in f.__globals__]
        values += [(str(i), cell.cell_contents)
                   for i, cell in enumerate(f.__closure__ or ()) if _filled(cell)]
        for name, value in values:
            if isinstance(value, types.ModuleType):  # fk.rotors, jit.step: the attributes read
                values += [(f"{name}.{n}", getattr(value, n)) for n in sorted(names)
                           if not n.startswith("__") and hasattr(value, n)
                           and not isinstance(getattr(value, n), types.ModuleType)]
            elif hasattr(value, "py_func"):
                todo.append(value)
            elif isinstance(value, tuple):  # kernels handed over in a tuple: followed too
                todo += [v for v in value if hasattr(v, "py_func")]
                frozen = _constant(value)
                if frozen is not None:
                    digest.update(name.encode() + b"=" + frozen)
            else:
                frozen = _constant(value)
                if frozen is not None:
                    digest.update(name.encode() + b"=" + frozen)
    return digest.hexdigest()[:16]


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # an empty cell
        return False
    return True


if numba is not None:
    from numba.core.caching import FunctionCache as _FunctionCache

    class _KeyedCache(_FunctionCache):
        """numba's cache of one kernel, its index key extended by the kernel's options and
        :func:`sources_key` (a key it does not find: compiled afresh and saved beside), and a
        miss said on stderr (:func:`notice`) before numba compiles."""

        def __init__(self, py_func, options: tuple) -> None:
            super().__init__(py_func)
            self._options = options
            self._func = py_func
            self._sources: str | None = None  # sources_key, once a process

        def _index_key(self, sig, codegen):
            if self._sources is None:
                self._sources = sources_key(self._func)
            return (*super()._index_key(sig, codegen), self._options, self._sources)

        def load_overload(self, sig, target_context):
            data = super().load_overload(sig, target_context)
            if data is None:  # numba compiles next
                notice()
            return data
else:
    _FunctionCache = _KeyedCache = None


_NOTICED = threading.Event()
#: The line a process writes on stderr when it first compiles a kernel
NOTICE = ("coopsim: compiling the simulator's kernels (once after an install or an update; "
          "minutes on a busy machine; `coopsim warmup` does it ahead)\n")


def notice() -> None:
    """Say once a process, on stderr, that kernels compile (a cache miss: numba compiles
    next, for seconds)."""
    if not _NOTICED.is_set():
        _NOTICED.set()
        try:
            sys.stderr.write(NOTICE)
            sys.stderr.flush()
        except (OSError, ValueError):  # no stderr (a closed pipe): the compile goes on
            pass


def compiled_here() -> bool:
    """Whether this process compiled a kernel (a cache miss), as :func:`notice` said."""
    return _NOTICED.is_set()


class Warm:
    """A module's loader (:func:`warmer`): :attr:`ready` once :attr:`load` has run;
    :attr:`labels` what calls for it (None: every world)."""

    def __init__(self, load: Callable[[], None], labels: frozenset | None = None) -> None:
        self.load = load
        self.labels = labels
        self.ready = False


_WARMERS: list[Warm] = []
_LOCK = threading.RLock()


def warmer(load: Callable[[], None], labels: tuple | None = None) -> Warm:
    """Register ``load`` (no arguments: it calls some kernels once with a world's argument
    types, which compiles them or loads them from numba's cache), run by the next
    :func:`load_pending` for a world using one of ``labels`` (module kinds, driver or engine
    labels; None: for every world); returns its :class:`Warm`."""
    warm = Warm(load, None if labels is None else frozenset(labels))
    with _LOCK:
        _WARMERS.append(warm)
    return warm


def load_pending(uses=None) -> None:
    """Run, here, every registered loader not yet run that a world using ``uses`` calls for (an
    iterable of its module kinds', drivers' and engine's labels: a loader registered with
    labels runs when ``uses`` holds one of them); ``uses`` None: every loader (``coopsim
    warmup``). A simulation calls it when it is made and when its step plan is built, so a
    world loads, or compiles on a cold cache, only the kernels its kinds, drivers and engine
    use. A loader that raises propagates: a kernel that does not compile is a bug, not a path
    to fall back from."""
    if numba is None:
        return
    wanted = None if uses is None else frozenset(uses)

    def called(warm: Warm) -> bool:
        return not warm.ready and (wanted is None or warm.labels is None
                                   or not warm.labels.isdisjoint(wanted))

    if not any(called(w) for w in _WARMERS):
        return
    with _LOCK:
        for warm in list(_WARMERS):
            if called(warm):
                warm.load()
                warm.ready = True


def compile_for(kernel, args: tuple) -> None:
    """Compile (or load from the cache) ``kernel``'s version for ``args``' types, without
    calling it: what a call with ``args`` would compile first."""
    if numba is not None:
        kernel.compile(tuple(numba.typeof(a) for a in args))


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: A file holding kernels: it imports from this module, or decorates with a ``jit``
_KERNEL_FILE = re.compile(rb"compiled import|^\s*@[\w.]*jit\b|\bjit\(", re.M)


def kernel_modules() -> list[str]:
    """The coopsim modules that hold kernels, found by reading the package's files (what
    ``coopsim warmup`` imports before it runs their loaders)."""
    found = []
    for root, dirs, files in os.walk(_PACKAGE):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                with open(path, "rb") as fh:
                    if _KERNEL_FILE.search(fh.read()):
                        rel = os.path.relpath(path[:-3], os.path.dirname(_PACKAGE))
                        found.append(rel.replace(os.sep, ".").removesuffix(".__init__"))
    return found


def import_kernel_modules() -> list:
    """Import every module :func:`kernel_modules` finds (their loaders register); the
    modules. One that needs an optional extra not installed is left out."""
    modules = []
    for name in kernel_modules():
        try:
            modules.append(importlib.import_module(name))
        except ImportError as exc:  # e.g. coopsim.env without coopsim[learning]
            if getattr(exc, "name", None) and exc.name.split(".")[0] == "coopsim":
                raise
    return modules
