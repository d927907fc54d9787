"""The project's thread policy for compiled (numba) kernels, in one place.

Measured on 2 cores shared with other processes (docs/performance.md, *Threads*): numba's
OpenMP layer with 2 threads made a kinematic step 2-40 times slower than 1 thread (median 43 ms
against 1 ms at 10,000 robots), because a parallel loop waits at its end for a thread the
kernel scheduler has preempted, and idle OpenMP threads spin for the cores the work needs. So:

* **Threads only with 3 or more of them** (``NUMBA_NUM_THREADS``, default the CPU count), and
  only above a size the caller gives (:func:`parallel`): a 2-core machine runs every kernel on
  the calling thread. ``COOPSIM_THREADS=N`` overrides the count the policy sees (1 turns the
  threads off everywhere; a benchmark sets it to force them).
* **Idle threads sleep** (:func:`configure`, called by ``coopsim/__init__.py`` before anything
  can import numba): ``OMP_WAIT_POLICY=PASSIVE`` unless the environment says otherwise.

Importing this module never imports numba.
"""

from __future__ import annotations

import os

MIN_THREADS = 3  # fewer threads than this: kernels run on the calling thread


def configure() -> None:
    """Set the environment defaults the OpenMP runtime reads when it loads (before numba's first
    parallel kernel): idle threads sleep instead of spinning. Values already set win."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def thread_count() -> int:
    """Threads the policy may use: ``COOPSIM_THREADS`` if set, else numba's configured count
    (1 without numba)."""
    value = os.environ.get("COOPSIM_THREADS", "")
    if value.strip().isdigit() and int(value) > 0:
        return int(value)
    try:
        import numba
    except ImportError:
        return 1
    return int(numba.config.NUMBA_NUM_THREADS)


def parallel(work: int, threshold: int) -> bool:
    """True when a kernel with ``work`` items (robots, rays) should use numba's threads: at least
    ``threshold`` of them and at least :data:`MIN_THREADS` threads."""
    return work >= threshold and thread_count() >= MIN_THREADS
