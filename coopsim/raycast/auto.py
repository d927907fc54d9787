"""The sensing phase's ray caster: numpy at once, the compiled one as soon as it is loaded.

Why: numba compiles the caster's kernels on first use (~11 s on an idle core, ~35 s on a busy
one, once per checkout: ``cache=True`` keeps them in ``__pycache__``), and even loading them
from that cache costs about 1 s. A run must not wait for either before its first step, nor
hold numba's compiler (which keeps the GIL for seconds and cannot be interrupted: a run could
not end while it worked). So a background thread (:func:`start_warmup`, once per process) has a
process of its own compile the kernels into numba's cache when the cache is not stamped as
filled (:mod:`coopsim.raycast.cache`), then loads them from it by casting a few rays, and
:class:`AutoCaster` serves with the numpy :class:`RayCaster` until they
are ready, then with :class:`JitRayCaster`. The two give the same distances (same formulas, same
ray directions: :func:`coopsim.raycast.jitcast.fan_directions`; tests/swarmscale), so which one
served a step does not change the run.

``COOPSIM_JIT`` chooses: ``auto`` (default, as above), ``numpy`` (never compile), ``wait`` (load
the kernels before the first cast: benchmarks). Without numba it is always numpy.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import logging
import os
import sys
import threading
import time

import numpy as np

from ..model import compiled
from . import cache, jitcast
from .numpycast import RayCaster

log = logging.getLogger(__name__)

_ready = threading.Event()
_lock = threading.Lock()
_thread: threading.Thread | None = None
_took = [0.0]  # s the warm-up took (docs/performance.md)
_stop = threading.Event()  # set at exit: stop waiting for the compiling process
_quiet = threading.Event()  # set on a refused command: no exit notice (refused())
_child: list = []  # the compiling process, when one was started
#: Set in the compiling process's environment: it compiles in its own warm-up thread
CHILD_ENV = "COOPSIM_JIT_COMPILING"


def policy() -> str:
    """How compiled kernels serve this process: ``COOPSIM_JIT`` (``auto``: numpy until they
    load in the background; ``wait``: wait for them; ``numpy``: never), ``numpy`` without
    numba."""
    mode = os.environ.get("COOPSIM_JIT", "auto").strip().lower() or "auto"
    return mode if mode in ("auto", "numpy", "wait") and jitcast.numba is not None else "numpy"


_policy = policy  # the name tests/conftest.py knew it by


def _warm() -> None:
    """Have the kernels compiled into numba's on-disk cache by a process of its own (unless the
    cache is stamped as filled already), then load them from the cache here (about 1 s), handing
    the GIL over often meanwhile (:func:`coopsim.model.compiled.polite`). Without a filled cache
    (the compiling process failed, or the run ended first) sensing stays on numpy."""
    if not os.environ.get(CHILD_ENV) and not cache.filled() and not _compile_elsewhere():
        return
    with compiled.polite():
        _load_all()


def _compile_elsewhere() -> bool:
    """Start the compiling process (:func:`coopsim.raycast.cache.fill`) and wait for it (or for
    :func:`stop`); True once it filled the cache. Why a process: numba's compiler holds the GIL
    for tens of seconds and LLVM cannot be interrupted, so a run that compiled in a thread
    stepped late meanwhile and could not end (SIGTERM ignored, a 120 s wait at exit)."""
    proc = cache.start_filling(CHILD_ENV)
    _child.append(proc)
    while proc.poll() is None:
        if _stop.wait(0.1):
            return False
    if proc.returncode != 0:
        log.warning("compiling the kernels failed (process %d, exit %s%s); sensing stays on "
                    "numpy", proc.pid, proc.returncode, cache.failure(proc))
        return False
    return True


def _load_all() -> None:
    start = time.perf_counter()
    try:
        caster = jitcast.JitRayCaster()
        caster.set_static(np.array([[3.0, 0.0, 0.5]]), np.array([[-5.0, -5.0, 5.0, -5.0]]))
        caster.cast(np.zeros((2, 2)), np.array([[1.0, 0.0], [0.0, 1.0]]), 2.0,
                    np.array([[0.0, 1.0, 0.2]]), None, np.array([1, 2]), np.array([1]))
        for n in (1, 2):  # a robot's pose row is contiguous, several robots' a strided view
            jitcast.robot_shapes(np.zeros((n, 6))[:, :3], np.ones(n), np.empty((n, 3)),
                                 np.empty((n, 2)))
        for n in (1, 200):  # all pairs, then the grid
            poses = np.column_stack((np.linspace(-4, 4, n), np.zeros(n), np.zeros(n)))
            circles = np.column_stack((poses[:, :2], np.full(n, 0.2)))
            jitcast.sonar_distances(caster, poses, np.full(n, 0.2), np.linspace(-1.5, 1.5, 11),
                                    np.full(n, 2.0), np.arange(1, n + 1), circles,
                                    np.arange(1, n + 1), None, None)
        fan = np.column_stack((np.cos([-0.5, 0.5]), np.sin([-0.5, 0.5])))
        caster.fan_robots(np.zeros((1, 6)), np.full(1, 0.2), np.ones(1, np.int64), fan,
                          np.full(1, 2.0), jitcast.checked_shapes(np.zeros((1, 3)), None,
                                                                  np.ones(1), None),
                          np.empty((1, 2)))  # a ground pass's fan (sim/sensing.fan_robots)
    except Exception:  # noqa: BLE001 -- a failed compile leaves sensing on numpy, said once
        log.exception("the compiled ray caster failed to load; sensing stays on numpy")
        return
    compiled.warm_all()  # the modules' small-world kernels (coopsim.model.compiled.warmer)
    _took[0] = time.perf_counter() - start
    _ready.set()
    log.info("the compiled ray caster is ready (loaded in %.2f s)", _took[0])


def start_warmup() -> None:
    """Start loading the compiled kernels in a background thread (once per process; nothing
    when the policy is ``numpy``)."""
    global _thread
    if policy() == "numpy":
        return
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_warm, name="coopsim-jit-warmup", daemon=True)
            _thread.start()
            atexit.register(_finish_warmup)


EXIT_WAIT = 120.0  # s the process waits at exit for kernels still loading, at most
PROGRESS_EVERY = 10.0  # s between the lines a waiting caller prints while kernels compile


def stop() -> None:
    """Stop waiting for the compiling process (at exit): that process goes on filling the
    cache for later runs, this one stays on numpy."""
    _stop.set()


def refused() -> None:
    """The command ends on a user error (exit 2): its one error line stays the only line, so
    the exit notice about a compiling process is not printed (the process still fills the
    cache)."""
    _quiet.set()


def _finish_warmup() -> None:
    """At exit: stop waiting for the compiling process and let a load from the cache finish
    (numba's LLVM working while the interpreter tears down crashed the process with SIGSEGV;
    a load takes about 1 s). A Ctrl-C or SIGTERM meanwhile does not interrupt it (no
    traceback); a compiling process still at work is named, as it goes on alone."""
    stop()
    while _thread is not None and _thread.is_alive():
        try:
            _thread.join(EXIT_WAIT)
            break
        except KeyboardInterrupt:  # SIGTERM arrives as one (coopsim.app.cli)
            continue
    for proc in _child:
        if proc.poll() is None and not _quiet.is_set():
            sys.stderr.write(f"coopsim: the compiled kernels are still being built (process "
                             f"{proc.pid}) for the next runs; this run used numpy\n")


def ready() -> bool:
    """True once the compiled kernels are loaded."""
    return _ready.is_set()


def wait_ready(timeout: float | None = None) -> bool:
    """Start the warm-up if needed and wait for it, saying on stderr every
    :data:`PROGRESS_EVERY` s that kernels are compiling (a first run after an install); False
    without numba, on timeout or error."""
    start_warmup()
    if _thread is None:
        return False
    end = None if timeout is None else time.monotonic() + timeout
    while _thread.is_alive():
        left = PROGRESS_EVERY if end is None else min(PROGRESS_EVERY, end - time.monotonic())
        if left <= 0:
            break
        _thread.join(left)
        compiling = [p for p in _child if p.poll() is None]
        if _thread.is_alive() and compiling:
            sys.stderr.write(f"coopsim: waiting for the kernels to compile (process "
                             f"{compiling[0].pid}; once after an install, about 10-40 s)\n")
    compiled.wait_late(timeout)
    return ready()


def fill_cache() -> None:
    """In the compiling process (:mod:`coopsim.raycast.cache`): load, so compile, every kernel
    a run or an environment loads, then write the cache's stamp; exit 1 when a kernel failed.

    The modules holding kernels are found by their file names in
    :data:`coopsim.raycast.cache.KERNEL_FILES` (data, not imports: those of the layers above,
    a module's kernels and the batched environments', are loaded in this process only); each
    one's own ``wait_ready`` is waited for after this layer's warm-up. One process compiles
    into a folder at a time (:func:`coopsim.raycast.cache.one_filler`); one that waited finds
    the stamp and ends."""
    with cache.one_filler():
        if not cache.filled():
            _fill()


def _fill() -> None:
    """:func:`fill_cache`'s work, under the cache folder's lock."""
    modules = []
    for name in cache.KERNEL_FILES:
        if name.startswith("env/") and importlib.util.find_spec("gymnasium") is None:
            continue  # the batched environments' kernel needs coopsim[learning]
        modules.append(importlib.import_module("coopsim." + name[:-3].replace("/", ".")))
    ok = wait_ready()  # the warmers the imports registered are loaded with this layer's
    for module in modules:
        own = getattr(module, "wait_ready", None)
        if ok and own is not None and own is not wait_ready:
            ok = own()
    if not ok:
        sys.exit(1)
    cache.stamp()


def warmup_seconds() -> float:
    """How long the warm-up took (0 until it is done), s."""
    return _took[0]


class AutoCaster:
    """A :class:`RayCaster` until the compiled kernels are ready, a :class:`JitRayCaster` after
    (same API, same distances).

    Args:
        cell_size: Side of the numpy caster's grid cells, m (the compiled one takes
            :data:`coopsim.raycast.jitcast.CELL_SIZE`: each is fastest at its own).
    """

    def __init__(self, cell_size: float = 2.0) -> None:
        self.numpy = RayCaster(cell_size)
        self.jit: jitcast.JitRayCaster | None = None
        self._static: tuple = (None, None, None, None)
        if policy() == "wait":
            wait_ready()
        else:
            start_warmup()

    @property
    def active(self):
        """The caster serving now."""
        if self.jit is None and _ready.is_set():
            self.jit = jitcast.JitRayCaster()
            self.jit.set_static(*self._static)
        return self.jit if self.jit is not None else self.numpy

    def set_static(self, circles=None, segments=None, circle_group=None,
                   segment_group=None) -> None:
        """See :meth:`RayCaster.set_static`."""
        self._static = (circles, segments, circle_group, segment_group)
        self.numpy.set_static(*self._static)
        if self.jit is not None:
            self.jit.set_static(*self._static)

    def cast(self, *args, **kwargs) -> np.ndarray:
        """See :meth:`RayCaster.cast`."""
        return self.active.cast(*args, **kwargs)
