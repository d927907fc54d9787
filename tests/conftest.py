"""Shared test set-up: make tests/helpers.py importable; compile the kernels once; hand the
slowest test files to the xdist workers first."""

import contextlib
import fcntl
import hashlib
import os
import signal
import subprocess
import sys
import resource
import tempfile
import time
from pathlib import Path

import pytest

# A suite started in the background (`bash .ci/run &`, a job runner) gets SIGINT ignored, and
# every process it starts would keep ignoring it: the tests that stop a run or a sweep with
# Ctrl-C would then wait for nothing. Ctrl-C is Python's own here, as in a terminal.
signal.signal(signal.SIGINT, signal.default_int_handler)

sys.path.insert(0, str(Path(__file__).parent))

# The suite's bytecode is kept even where PYTHONDONTWRITEBYTECODE is set (this CI's machine
# sets it): otherwise every run rewrites the asserts of every test module and compiles it, and
# compiles coopsim's sources, anew: the fast tier's collection 10.7-16 s of CPU without the
# cached files, 4.6 s with them (load 12). Only this process writes them (__pycache__ is
# ignored by git); the processes the tests start keep the variable (.ci/run compiles coopsim
# for them).
sys.dont_write_bytecode = False

#: The test files that take longest, longest first (each file's setup + call + teardown
#: summed). They are handed to the xdist workers first, the rest after in collection order:
#: with `--dist loadfile` a file runs whole on one worker, and a long file started last keeps
#: one worker busy for minutes after the other has finished. A file missing here only loses its
#: place at the front. Ordered by the mean of each file's stretch in three fresh-clone CI runs
#: of the merges (c9e3282a, d985cb66, 7195ed62: 3,801-3,816 passed, pytest 899-1,397
#: s; `--durations=30` also prints the 30 slowest files: pytest_terminal_summary below), then
#: the files of the list before that none of those runs put among its 30 slowest (each under
#: about 17 s), in their old order. The two files of cold compiles first (measured one by one
#: at load 1-3): tests/model/test_compile.py (a copy of the package: a first run, then noisy
#: runs before and after an edited helper; 140 s of CPU) and tests/app/test_release.py (the
#: installed wheel's first run; 70 s).
SLOW_FIRST = (
    "tests/model/test_compile.py",
    "tests/app/test_release.py",
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


#: per test file, [wall seconds, CPU seconds, its children's CPU seconds] (setup + call +
#: teardown summed), gathered for the summary below
_FILE_SECONDS: dict[str, list[float]] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _cpu_phase(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _cpu_phase(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item):
    return (yield from _cpu_phase(item))


def _cpu_phase(item):
    """Keep the CPU seconds of this process (all its threads) that a test's phase took, and
    those of the processes it started and waited for in the phase, for its report."""
    start, children = time.process_time(), _children_cpu()
    try:
        return (yield)
    finally:
        item._phase_cpu = (time.process_time() - start, _children_cpu() - children)


def _children_cpu() -> float:
    """CPU seconds of this process's children that have ended and been waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """The phase's CPU seconds on its report as ``cpu`` (an xdist worker's reports carry it to
    the controller)."""
    report = yield
    report.cpu, report.children_cpu = item.__dict__.pop("_phase_cpu", (0.0, 0.0))
    return report


def pytest_runtest_logreport(report):
    """Sum each file's phases (in the controller of an xdist run: the workers' reports)."""
    path = report.nodeid.split("::", 1)[0]
    seconds = _FILE_SECONDS.setdefault(path, [0.0, 0.0, 0.0])
    seconds[0] += report.duration
    seconds[1] += getattr(report, "cpu", 0.0)
    seconds[2] += getattr(report, "children_cpu", 0.0)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """With ``--durations=N``, also the N slowest test files, each file's phases summed, by
    wall (what :data:`SLOW_FIRST` is ordered by: a file runs whole on one worker under
    ``--dist loadfile``, so its sum is the stretch it keeps that worker) and the N costliest by
    CPU of the pytest process (what the fast tier's budget counts, docs/testing.md)."""
    count = config.getoption("durations", None)
    if count is None or not _FILE_SECONDS or hasattr(config, "workerinput"):
        return
    for column, what in ((0, "slowest {} test files by wall (setup + call + teardown summed; "
                             "tests/conftest.py SLOW_FIRST)"),
                         (1, "costliest {} test files by CPU of this process (its threads, "
                             "not the processes it started)"),
                         (2, "costliest {} test files by CPU of the processes they started "
                             "(those that ended and were waited for)")):
        ranked = sorted(_FILE_SECONDS.items(), key=lambda kv: -kv[1][column])
        terminalreporter.write_sep("=", what.format(count or len(ranked)))
        for path, seconds in ranked[:count or None]:
            terminalreporter.write_line(f"{seconds[0]:9.2f}s wall {seconds[1]:8.2f}s CPU "
                                        f"{seconds[2]:8.2f}s children {path}")
    cpu = sum(seconds[1] for seconds in _FILE_SECONDS.values())
    children = sum(seconds[2] for seconds in _FILE_SECONDS.values())
    terminalreporter.write_line(f"the tests' CPU in the pytest process(es): {cpu:.1f} s, in "
                                f"the processes they started: {children:.1f} s (collection, "
                                "start-up and any kernel warm-up not included)")


def pytest_collection_modifyitems(session, config, items):
    """The files of :data:`SLOW_FIRST` first, slowest first; each file's tests in their order."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_collection_finish(session):
    """Compile every kernel once, before the first test, when a selected test is ``slow`` and
    the suite's stamp for these sources is missing: tests/kernelwarm.py's phases (every
    kernel a run uses and those only tests use, on both cores), then ``coopsim warmup``.

    Why: every process that steps a world (a test's in-process run, each ``python -m coopsim``
    child) compiles what its cache lacks; on a fresh checkout the slow tests' first minutes
    would compile the same kernels in a dozen processes at once on two cores. Here it is done
    once, by the first process that collected (the only one, or the first xdist worker: the
    other waits on the stamp's lock), before any test runs. The fast tier (``-m "not slow"``)
    starts no process and skips it: its tests compile, in its one process, only the kernels
    they call (the warm-up, every kernel at two thread counts, takes about 230 s of CPU).
    Tests about a cold cache (tests/model/test_compile.py) use a NUMBA_CACHE_DIR of their own
    and stay cold. A failed warm-up changes nothing: the runs then compile what they use themselves.
    """
    if session.config.option.collectonly or not any(
            item.get_closest_marker("slow") for item in session.items):
        return  # nothing runs, or nothing that starts a process
    stamp = _stamp()
    if stamp is None or stamp.exists():
        return
    with contextlib.suppress(OSError):
        stamp.parent.mkdir(parents=True, exist_ok=True)
    try:
        lock = open(stamp.with_suffix(".lock"), "w")
    except OSError:
        lock = None
    try:
        if lock is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker's warm-up: wait for its end
        if not stamp.exists():
            _warm(stamp)
    finally:
        if lock is not None:
            lock.close()  # releases the lock


def _warm(stamp: Path) -> None:
    """Compile every kernel: tests/kernelwarm.py's phases, each phase's parts as processes side
    by side (a core each: the warm-up is about 230 s of CPU cold, and both workers wait for
    it), then ``coopsim warmup`` (which then loads what they compiled, and compiles whatever
    they left out); write ``stamp`` when all succeeded."""
    from kernelwarm import PHASES

    path = str(Path(__file__).parent.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")
    env = {**os.environ, "PYTHONPATH": path}
    script = str(Path(__file__).parent / "kernelwarm.py")
    phases = [[[script, part] for part in parts] for parts in PHASES]
    for phase in [*phases, [["-m", "coopsim", "warmup"]]]:
        with contextlib.ExitStack() as stack:
            runs = []
            for args in phase:
                err = stack.enter_context(tempfile.TemporaryFile())
                proc = stack.enter_context(subprocess.Popen(
                    [sys.executable, *args], stdout=subprocess.DEVNULL, stderr=err, env=env))
                runs.append((args, proc, err))
            for args, proc, err in runs:
                if proc.wait() != 0:
                    err.seek(0)
                    lines = err.read().decode(errors="replace").strip().splitlines()
                    sys.stderr.write(f"conftest: {' '.join(args)} failed ({lines[-1:]}); the "
                                     "tests compile what they use themselves\n")
                    return
    with contextlib.suppress(OSError):
        stamp.write_text("numba's cache holds the suite's kernels for these sources\n")


def _stamp() -> Path | None:
    """Where the stamp of a warmed cache for the current kernel sources lies (the cache's
    folder: NUMBA_CACHE_DIR, else the package's __pycache__), or None without numba."""
    try:
        import numba

        import coopsim
        from coopsim.model import compiled
    except ImportError:
        return None
    package = Path(coopsim.__file__).parent
    digest = hashlib.sha256(f"{numba.__version__} {sys.version}".encode())
    for name in compiled.kernel_modules():
        path = package.parent / (name.replace(".", os.sep) + ".py")
        if not path.exists():
            path = path.with_suffix("") / "__init__.py"
        digest.update(name.encode() + hashlib.sha256(path.read_bytes()).digest())
    folder = os.environ.get("NUMBA_CACHE_DIR") or str(package / "__pycache__")
    return Path(folder) / f"suite-kernels-{digest.hexdigest()[:16]}.stamp"
