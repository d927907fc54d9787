"""Shared test set-up: make tests/helpers.py importable; fill numba's kernel cache once; hand
the slowest test files to the xdist workers first."""

import contextlib
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# A suite started in the background (`bash .ci/run &`, a job runner) gets SIGINT ignored, and
# every process it starts would keep ignoring it: the tests that stop a run or a sweep with
# Ctrl-C would then wait for nothing. Ctrl-C is Python's own here, as in a terminal.
signal.signal(signal.SIGINT, signal.default_int_handler)

sys.path.insert(0, str(Path(__file__).parent))

#: The test files that take longest, longest first (each file's setup + call + teardown
#: summed). They are handed to the xdist workers first, the rest after in collection order:
#: with `--dist loadfile` a file runs whole on one worker, and a long file started last keeps
#: one worker busy for minutes after the other has finished. A file missing here only loses its
#: place at the front. Ordered by the mean of each file's stretch in three fresh-clone CI runs
#: of round sixteen's merges (c9e3282a, d985cb66, 7195ed62: 3,801-3,816 passed, pytest 899-1,397
#: s; `--durations=30` also prints the 30 slowest files: pytest_terminal_summary below), then
#: the files of the list before that none of those runs put among its 30 slowest (each under
#: about 17 s), in their old order.
SLOW_FIRST = (
    "tests/experiments/test_sweep.py",
    "tests/bench/test_suite_smoke.py",
    "tests/viewer/test_viewer.py",
    "tests/viewer/test_viewer_robots.py",
    "tests/usecases/test_exercises.py",
    "tests/usecases/test_tutorial.py",
    "tests/examples/test_plugin_arm.py",
    "tests/app/test_cli.py",
    "tests/ros2/test_ros2_stock_sensors.py",
    "tests/net/test_curve_cli.py",
    "tests/ros2/test_ros2_example.py",
    "tests/viewer/test_viewer_first_use.py",
    "tests/conformance/test_conformance_clients.py",
    "tests/games/test_ctf_determinism.py",
    "tests/usecases/test_octave_transport.py",
    "tests/experiments/test_sweep_scheduler_and_checks.py",
    "tests/scenarios/test_arm_tasks.py",
    "tests/net/test_many_robots.py",
    "tests/app/test_release.py",
    "tests/net/test_fuzz.py",
    "tests/formats/test_bad_descriptions.py",
    "tests/physics/test_thread_bits.py",
    "tests/ros2/test_ros2_bad_input.py",
    "tests/games/test_ctf_forfeit.py",
    "tests/viewer/test_view3d_robots.py",
    "tests/clients/test_clients_curve.py",
    "tests/usecases/test_one_source.py",
    "tests/foxglove/test_plot.py",
    "tests/physics/test_aerial_engine.py",
    "tests/net/test_lockstep_behaviour.py",
    "tests/examples/test_learning_examples.py",
    "tests/ros2/test_ros2_stock_topics.py",
    "tests/robots/test_robot_table.py",
    "tests/ros2/test_ros2_bridge.py",
    "tests/net/test_curve_servers.py",
    "tests/client/test_client_patience.py",
    "tests/physics/test_mujoco_engine.py",
    "tests/plugins/test_textbook.py",
    "tests/clients/test_seeded_controllers.py",
    "tests/games/test_squad_crossing_eight_line.py",
    "tests/swarm/test_swarm_structure.py",
    "tests/viewer/test_viewer_hud_and_labels.py",
    "tests/games/test_ctf_game.py",
    "tests/foxglove/test_links_outlets.py",
    "tests/viewer/test_viewer_sensors.py",
    "tests/viewer/test_view3d.py",
)


def pytest_configure(config):
    """Keep the collection's order for xdist's file scheduling (see :data:`SLOW_FIRST`)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


#: seconds per test file (setup + call + teardown summed), gathered for the summary below
_FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    """Sum each file's phases (in the controller of an xdist run: the workers' reports)."""
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """With ``--durations=N``, also the N slowest test files, each file's phases summed: what
    :data:`SLOW_FIRST` is ordered by (a file runs whole on one worker under ``--dist
    loadfile``, so its sum is the stretch it keeps that worker)."""
    count = config.getoption("durations", None)
    if count is None or not _FILE_SECONDS or hasattr(config, "workerinput"):
        return
    ranked = sorted(_FILE_SECONDS.items(), key=lambda kv: -kv[1])
    terminalreporter.write_sep("=", f"slowest {count or len(ranked)} test files (setup + call "
                                    "+ teardown summed; tests/conftest.py SLOW_FIRST)")
    for path, seconds in ranked[:count or None]:
        terminalreporter.write_line(f"{seconds:9.2f}s {path}")


def pytest_collection_modifyitems(session, config, items):
    """The files of :data:`SLOW_FIRST` first, slowest first; each file's tests in their order."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


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
    if auto._policy() == "numpy":
        return
    # on the other core meanwhile (they share no kernel); only for xdist runs (the suite): a
    # run of one file on one process compiles only what it uses, as before
    warm = _start_warming_the_rest(cache) if session.config.getoption("numprocesses",
                                                                       None) else None
    if not cache.filled():
        _fill(cache, auto)
    if warm is not None:
        _finish_warming(*warm)


#: Kernel sources tests/kernelwarm.py compiles (coopsim's own cache fill does the others)
WARMED = ("physics/kinematic_kernels.py", "physics/kinematic_grid.py",
          "physics/kinematic_small.py", "physics/aerial_kernels.py", "swarm/kernels.py",
          "model/compiled.py", "physics/aerial_raykernel.py")


def _start_warming_the_rest(cache):
    """Start compiling the engines' and the swarm library's kernels (tests/kernelwarm.py)
    unless a stamp says they are compiled for these sources already; (process, stamp) or None.
    """
    import coopsim

    package = Path(coopsim.__file__).parent
    digest = hashlib.sha256(Path(cache.stamp_path()).name.encode())
    for name in WARMED:
        st = (package / name).stat()
        digest.update(f"{name} {st.st_size} {st.st_mtime_ns}".encode())
    stamp = Path(cache.stamp_path()).with_name(f"suite-kernels-{digest.hexdigest()[:16]}.stamp")
    if stamp.exists():
        return None
    path = str(package.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, str(Path(__file__).parent / "kernelwarm.py")],
                            stdout=subprocess.DEVNULL, stderr=tempfile.TemporaryFile(),
                            env={**os.environ, "PYTHONPATH": path})
    return proc, stamp


def _finish_warming(proc, stamp) -> None:
    """Wait for tests/kernelwarm.py; stamp its success, or say it failed (the tests then
    compile what they use themselves, as before)."""
    if proc.wait() == 0:
        with contextlib.suppress(OSError):
            stamp.write_text("numba's cache holds the suite's engine and swarm kernels\n")
    else:
        sys.stderr.write("conftest: compiling the engines' kernels failed; the tests compile "
                         "them themselves\n")


def _fill(cache, auto) -> None:
    """coopsim's own cache fill (coopsim.raycast.cache), waited for."""
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
