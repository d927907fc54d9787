"""Shared test set-up: make tests/helpers.py importable; fill numba's kernel cache once."""

import signal
import sys
import time
from pathlib import Path

# A suite started in the background (`bash .ci/run &`, a job runner) gets SIGINT ignored, and
# every process it starts would keep ignoring it: the tests that stop a run or a sweep with
# Ctrl-C would then wait for nothing. Ctrl-C is Python's own here, as in a terminal.
signal.signal(signal.SIGINT, signal.default_int_handler)

sys.path.insert(0, str(Path(__file__).parent))


def pytest_sessionstart(session):
    """Fill numba's on-disk kernel cache once, before any test, when its stamp is missing.

    Why: every process that starts a run (a test's in-process run, each ``python -m coopsim``
    child) finds the cache unstamped until a filling process has finished, and starts a filling
    process of its own (coopsim.raycast.cache): on a fresh checkout the suite's first minutes
    compiled the same kernels in a dozen processes at once on two cores. Here it is done once,
    in the controller (not in each xdist worker), before the workers start. Tests about a cold
    cache (tests/app/test_first_run.py) use a NUMBA_CACHE_DIR of their own and stay cold. A
    failed fill changes nothing: the runs then start their own filling processes as before.
    """
    if hasattr(session.config, "workerinput") or session.config.option.collectonly:
        return  # an xdist worker (the controller filled it), or nothing runs
    try:
        from coopsim.raycast import auto, cache
    except ImportError:
        return
    if auto._policy() == "numpy" or cache.filled():
        return
    proc = cache.start_filling(auto.CHILD_ENV)
    while proc.poll() is None:
        if cache.filled():  # another process (an earlier session's run) filled it meanwhile
            proc.kill()  # ours then only repeats that work (numba writes each file whole)
            proc.wait()
            return
        time.sleep(0.5)
    if proc.returncode != 0:
        sys.stderr.write(f"conftest: filling numba's kernel cache failed{cache.failure(proc)}; "
                         "the runs fill it themselves\n")
