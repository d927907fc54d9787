"""numba, optional: the one decorator every compiled kernel of coopsim is made with.

numba is a dependency of coopsim, but the kernels' modules must import without it (the swarm
library runs in controllers on machines without numba; the ray casters and the kinematic engine
then serve their numpy paths). So the kernels are decorated with :func:`jit`, which is numba's
``njit`` when numba imports and the identity otherwise, and loop with :data:`prange`, which is
``range`` without numba. Callers test :data:`COMPILED` before calling a kernel that only pays
compiled. The thread policy for the kernels is :mod:`coopsim.model.threads`.

Kernels a step can do without until they are loaded (a module's small-world kernels) are
*warmed* off the stepper thread: :func:`warmer` registers a function that calls them once, and
the background warm-up of :mod:`coopsim.raycast.auto` runs every registered one after the ray
caster's kernels; :meth:`Warm.ready` then says the kernels are loaded and the caller switches
from its numpy path (which must give the same bits).

Importing this module imports numba (when installed); nothing in the client does.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import sys
import threading
from contextlib import contextmanager
from typing import Callable

try:
    import numba
    from numba import prange
except ImportError:  # numba missing: the numpy / Python paths serve
    numba = None
    prange = range

#: True when kernels are compiled (numba imported).
COMPILED = numba is not None


def jit(parallel: bool = False, inline: bool = False, nogil: bool = True,
        counted: bool = True):
    """numba's ``njit``, cached on disk (``cache=True``: ``__pycache__`` or
    ``NUMBA_CACHE_DIR``; see :func:`source_stamp` for what a cached kernel is keyed by), with
    numpy's division semantics (no Python division checks: the kernels check their divisors or
    know them non-zero); without numba the identity, so that the module defining the kernel
    imports.

    Args:
        parallel: Compile ``prange`` loops to run on numba's threads.
        inline: Inline in numba's IR at every call site. Per-item functions called from a loop
            need it: a call passing arrays increfs and decrefs each (atomic operations,
            contended by the threads, costlier than the work), and LLVM inlines only small
            functions.
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
        if _KeyedCache is not None and type(getattr(kernel, "_cache", None)) is _FunctionCache:
            kernel._cache = _KeyedCache(f, options)
        return kernel

    return decorate


#: Files (relative to the coopsim package) holding kernels that kernels of other files inline
#: or call: a cached kernel is keyed by their sizes and times too (:func:`source_stamp`).
KERNEL_SOURCES = ("model/compiled.py", "model/ikkernel.py", "physics/kinematic_kernels.py",
                  "physics/kinematic_grid.py", "physics/kinematic_small.py",
                  "physics/aerial_kernels.py",
                  "raycast/jitcast.py", "raycast/jitfan.py", "raycast/jitgrid.py",
                  "raycast/jitwalk.py", "raycast/numpycast.py", "plugins/modules/kernels.py",
                  "env/batchcast.py", "env/copykernels.py",
                  # the fused step's tick (plugins/modules/flyfused.py) calls these
                  "model/quaternion_kernels.py", "physics/aerial_raykernel.py",
                  "plugins/modules/flying.py", "swarm/flight_kernels.py")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STAMP: list = []  # source_stamp's value, computed once a process


def source_stamp(names: tuple = KERNEL_SOURCES) -> str:
    """Digest of the size and modification time of ``names`` (files of the coopsim package;
    missing ones skipped) and of numba's and Python's versions.

    Why: numba keys a cached kernel by its own file's time and bytecode only, not by the
    files whose functions it inlines or calls (the copies backend's step inlines
    ``physics/kinematic_kernels.py``) nor by its options (``nogil``): after an edit there, it
    loaded the stale machine code. :func:`jit` adds this digest and the options to the key."""
    if names is KERNEL_SOURCES and _STAMP:
        return _STAMP[0]
    digest = hashlib.sha256(f"{getattr(numba, '__version__', '')} {sys.version}".encode())
    for name in names:
        try:
            st = os.stat(os.path.join(_PACKAGE, name))
        except OSError:
            continue
        digest.update(f"{name} {st.st_size} {st.st_mtime_ns}".encode())
    value = digest.hexdigest()[:16]
    if names is KERNEL_SOURCES:
        _STAMP.append(value)
    return value


if numba is not None:
    from numba.core.caching import FunctionCache as _FunctionCache

    class _KeyedCache(_FunctionCache):
        """numba's cache of one kernel, its index key extended by the kernel's options and
        :func:`source_stamp` (a key it does not find: compiled afresh and saved beside)."""

        def __init__(self, py_func, options: tuple) -> None:
            super().__init__(py_func)
            self._options = options

        def _index_key(self, sig, codegen):
            return (*super()._index_key(sig, codegen), self._options, source_stamp())
else:
    _FunctionCache = _KeyedCache = None


log = logging.getLogger(__name__)


class Warm:
    """Kernels loaded in the background: :attr:`ready` once :attr:`load` has run (never
    without numba, or when it raised: the caller's numpy path then serves for good)."""

    def __init__(self, load: Callable[[], None]) -> None:
        self.load = load
        self.ready = False


_WARMERS: list[Warm] = []
_LOCK = threading.Lock()
_LATE: list[threading.Thread] = []  # warm-ups of warmers registered after the first one ran
_STARTED = threading.Event()


def warmer(load: Callable[[], None]) -> Warm:
    """Register ``load`` (no arguments: it calls some kernels once, which compiles them or
    loads them from numba's cache) for the background warm-up; returns its :class:`Warm`.
    Registered after the warm-up ran (a plugin imported late), it is loaded in a thread of
    its own at once."""
    warm = Warm(load)
    with _LOCK:
        _WARMERS.append(warm)
        if _STARTED.is_set() and numba is not None:
            thread = threading.Thread(target=_warm_late, name="coopsim-jit-late", daemon=True)
            _LATE.append(thread)
            thread.start()
    return warm


@atexit.register
def _finish() -> None:
    """At exit: let a late warm-up finish (numba compiling while the interpreter tears down
    crashed the process; see coopsim.raycast.auto)."""
    for thread in _LATE:
        while thread.is_alive():
            try:
                thread.join(120.0)
                break
            except KeyboardInterrupt:  # SIGTERM at exit: no traceback, the load is short
                continue


#: s between GIL hand-overs while kernels compile in the background (Python's default: 5 ms)
POLITE_SWITCH = 1e-4
_POLITE_LOCK = threading.Lock()
_POLITE: list = [0, 0.005]  # warm-ups under way, the switch interval to restore after them


@contextmanager
def polite():
    """Within: the interpreter hands the GIL between threads every :data:`POLITE_SWITCH` s.

    Why: numba's compiler is Python code that holds the GIL. A realtime stepper thread gives
    the GIL away at every sleep and socket call and then waits up to the switch interval to
    get it back, several times a step: with the default 5 ms, the first run after an install
    (the kernels compiling for some 11-37 s) ran the demo at 0.56-0.58x real time with about
    340 of its 2,000 steps late; with 0.1 ms, at 0.87x with 33-39 late (benchmarks/results/history.md).
    The setting is the process's: the one found when the first of overlapping warm-ups began
    is restored when the last ends.
    """
    with _POLITE_LOCK:
        if not _POLITE[0]:
            _POLITE[1] = sys.getswitchinterval()
            sys.setswitchinterval(min(_POLITE[1], POLITE_SWITCH))
        _POLITE[0] += 1
    try:
        yield
    finally:
        with _POLITE_LOCK:
            _POLITE[0] -= 1
            if not _POLITE[0]:
                sys.setswitchinterval(_POLITE[1])


def wait_late(timeout: float | None = None) -> None:
    """Wait for the warm-ups of warmers registered late (``COOPSIM_JIT=wait``: benchmarks)."""
    for thread in list(_LATE):
        thread.join(timeout)


def _warm_late() -> None:
    with polite():
        warm_all()


def warm_all() -> None:
    """Run every registered warmer not yet run (the warm-up thread of
    :mod:`coopsim.raycast.auto`); one that fails is logged and its kernels stay unused."""
    _STARTED.set()
    if numba is None:
        return
    for warm in list(_WARMERS):
        with _LOCK:  # two warm-ups never load the same kernels at once
            if warm.ready or warm.load is None:
                continue
            load, warm.load = warm.load, None
        try:
            load()
        except Exception:  # noqa: BLE001 -- a failed compile: the numpy path serves, said once
            log.exception("compiled kernels failed to load (%s); numpy serves",
                          getattr(load, "__qualname__", load))
            continue
        warm.ready = True
