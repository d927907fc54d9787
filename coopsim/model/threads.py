"""The project's thread policy for compiled (numba) kernels, in one place.

* **How many threads** (:func:`count`): the count chosen for the process (:func:`use`: ``coopsim
  run --threads N``, ``[SETTINGS] threads``, ``coopsim bench --threads N``), else
  ``COOPSIM_THREADS=N`` from the environment, else the cores the process may use
  (``len(os.sched_getaffinity(0))``); never more than numba's pool (``NUMBA_NUM_THREADS``,
  which :func:`use` raises when numba is not imported yet). 1 runs every kernel on the calling
  thread.
* **Only where it pays** (:func:`kernel_threads`): a kernel shares its rows among the threads
  from a size its module gives (thousands of robots or rays); below it, waking the threads
  costs more than the work, and the kernel runs on the calling thread. Rows are handed out in
  fixed chunks, so that a thread the OS preempted (a busy machine) holds up one chunk at most.
* **Same bits for any count**: every parallel kernel computes each row from inputs no other row
  writes and writes only that row; the only reductions over rows are integer counts. So the
  thread count changes the speed, never a result (tests/physics/test_thread_bits.py).
* **Idle threads sleep** (:func:`configure`, called by ``coopsim/__init__.py`` before anything
  can import numba): ``OMP_WAIT_POLICY=PASSIVE`` unless the environment says otherwise
  (spinning idle threads took the cores the work needed: `git show round12-base:docs/performance.md`, *Threads*).

numba's thread count is per calling thread (a stepper thread starts with numba's default), so
kernels set it around each call (:func:`kernel_threads`) instead of once. Importing this module
never imports numba.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

_CHOSEN: list = [None]  # the count use() chose for the process, None: not chosen
MAX_THREADS = 1024  # a count above this is a typo, not a machine


def configure() -> None:
    """Set the environment defaults the OpenMP runtime reads when it loads (before numba's first
    parallel kernel): idle threads sleep instead of spinning. Values already set win."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def _pool() -> int:
    """Threads numba's pool has or will have (``NUMBA_NUM_THREADS``); 1 without numba."""
    numba = sys.modules.get("numba")
    if numba is not None:
        return int(numba.config.NUMBA_NUM_THREADS)
    value = os.environ.get("NUMBA_NUM_THREADS", "")
    if value.strip().isdigit() and int(value) > 0:
        return int(value)
    try:
        import multiprocessing

        return multiprocessing.cpu_count()  # numba's own default
    except NotImplementedError:
        return 1


def use(n: int | None) -> int:
    """Choose the process's kernel thread count (None: back to the default); returns the count
    the kernels will use. Before numba is imported, a count above numba's default pool raises
    the pool (``NUMBA_NUM_THREADS``): ``--threads 4`` gives 4 threads on 2 cores.

    Raises:
        ValueError: ``n`` is not an integer from 1 to :data:`MAX_THREADS`.
    """
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_THREADS:
            raise ValueError(f"threads must be an integer from 1 to {MAX_THREADS}, got {n!r}")
        if "numba" not in sys.modules and n > _pool():
            os.environ["NUMBA_NUM_THREADS"] = str(n)
    _CHOSEN[0] = n
    return count()


def count() -> int:
    """Threads the kernels may use: :func:`use`'s choice, else ``COOPSIM_THREADS``, else
    :func:`cores`; at most numba's pool (1 without numba)."""
    n = _CHOSEN[0]
    if n is None:
        value = os.environ.get("COOPSIM_THREADS", "")
        n = int(value) if value.strip().isdigit() and int(value) > 0 else cores()
    return max(1, min(n, _pool()))


def parallel(work: int, threshold: int) -> bool:
    """True when a kernel with ``work`` items (robots, rays) should use numba's threads: at least
    ``threshold`` of them and more than one thread to use."""
    return work >= threshold and count() > 1


@contextmanager
def kernel_threads(work: int, threshold: int, chunk: int, n: int | None = None):
    """Within: numba kernels called from this thread run on ``n`` threads (None: :func:`count`;
    at most numba's pool) taking ``chunk`` rows at a time if ``work`` >= ``threshold``, else on
    one. Both settings are the calling thread's own and restored after. Without numba,
    nothing."""
    numba = sys.modules.get("numba")
    if numba is None:
        yield
        return
    before = numba.get_num_threads()
    pool = count() if n is None else max(1, min(int(n), _pool()))
    want = pool if work >= threshold and pool > 1 else 1
    if want == before == 1:  # the usual small world: no call (each costs ~1 us)
        yield
        return
    numba.set_num_threads(want)
    old_chunk = numba.set_parallel_chunksize(chunk) if want > 1 else None
    try:
        yield
    finally:
        numba.set_num_threads(before)
        if old_chunk is not None:
            numba.set_parallel_chunksize(old_chunk)


ROWS_MIN = 8192  # rows from which a cheap per-row kernel (a module's) shares them out
ROWS_CHUNK = 1024  # rows a thread takes at a time in such a kernel


def by_rows(serial, parallel, threshold: int = ROWS_MIN, chunk: int = ROWS_CHUNK):
    """One function for a kernel compiled twice, serial and with ``prange``, over the rows of
    its first argument: the parallel one on the threads from ``threshold`` rows on (when
    :func:`parallel` says so), else the serial one (a parallel kernel costs a few us more a
    call even on one thread: too much for a small world's step). The two must compute each
    row alike (one inlined body): the same bits either way. ``serial`` and ``parallel`` are
    kept as attributes (their compiled versions: ``.serial.signatures``)."""

    def call(*args):
        n = len(args[0])
        if n < threshold or not parallel_ok(n, threshold):  # the size first: count() reads
            return serial(*args)  # the environment (~1 us, a small world's kernel's time)
        with kernel_threads(n, threshold, chunk):
            return parallel(*args)

    call.serial, call.parallel = serial, parallel
    call.__name__ = call.__qualname__ = getattr(serial, "__name__", "kernel")
    call.__doc__ = serial.__doc__
    return call


parallel_ok = parallel  # by_rows' name for it (its own argument shadows the function's)
