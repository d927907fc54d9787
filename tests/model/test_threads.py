"""The thread policy (coopsim/model/threads.py): who chooses the count, and what a kernel call
sees. The bits for any count: tests/physics/test_thread_bits.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coopsim.app.run import Run, RunOptions
from coopsim.formats import files
from coopsim.model import compiled, threads

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _default(monkeypatch):
    monkeypatch.delenv("COOPSIM_THREADS", raising=False)
    yield
    threads.use(None)


def test_the_default_is_the_cores_the_process_may_use():
    pool = threads._pool()
    assert threads.use(None) == min(len(os.sched_getaffinity(0)), pool) == threads.count()


def test_a_chosen_count_wins_over_the_environment_and_is_checked(monkeypatch):
    monkeypatch.setenv("COOPSIM_THREADS", "1")
    assert threads.count() == 1
    if threads._pool() >= 2:
        assert threads.use(2) == 2
    for bad in (0, -1, 2.0, True, "2", 5000):
        with pytest.raises(ValueError, match="threads must be an integer from 1 to 1024"):
            threads.use(bad)


def test_the_scenarios_setting_and_the_option_choose_for_a_run(tmp_path):
    path = tmp_path / "t.scenario"
    path.write_text(f"[WORLD]\nfile {ROOT / 'worlds' / 'empty.world'}\n\n"
                    "[ROBOT_1]\ntype single\nname r1\nposition 0 0 0\n\n"
                    "[SETTINGS]\nmode lockstep\nthreads 1\n")
    scenario = files.load_scenario(str(path))
    assert scenario.settings.threads == 1
    with Run(scenario, RunOptions(network=False, controllers=False)) as run:
        assert run.settings.threads == 1 and threads.count() == 1
    if threads._pool() >= 2:
        with Run(scenario, RunOptions(network=False, controllers=False, threads=2)) as run:
            assert run.settings.threads == 2 and threads.count() == 2


@pytest.mark.skipif(not compiled.COMPILED, reason="numba's threads")
def test_a_kernel_call_sets_the_count_and_restores_it():
    import numba

    before = numba.get_num_threads()
    with threads.kernel_threads(10, 100, 64):  # too little work: one thread
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    threads.use(numba.config.NUMBA_NUM_THREADS)
    with threads.kernel_threads(100, 100, 64):
        assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    assert numba.get_num_threads() == before


@pytest.mark.skipif(not compiled.COMPILED, reason="numba's threads")
def test_a_kernel_on_the_threads_gives_the_serial_bits():
    from coopsim.raycast import jitcast

    rng = np.random.default_rng(1)
    n = threads.ROWS_MIN + 77
    pose, radius = rng.normal(0, 3, (n, 3)), rng.uniform(0.1, 0.5, n)
    one = np.empty((n, 3)), np.empty((n, 2))
    many = np.empty((n, 3)), np.empty((n, 2))
    jitcast.robot_shapes.serial(pose, radius, *one)
    threads.use(threads._pool())
    jitcast.robot_shapes(pose, radius, *many)
    assert len(jitcast.robot_shapes.parallel.signatures) >= 1  # by_rows: the parallel version
    assert all(a.tobytes() == b.tobytes() for a, b in zip(one, many))


@pytest.mark.slow
def test_bench_says_the_thread_count_and_the_load():
    done = subprocess.run([sys.executable, "-m", "coopsim", "bench", "step", "--robots", "3",
                           "--steps", "2", "--engine", "kinematic",
                           "--threads", "1"], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "threads: 1 (cores this process may use: " in done.stderr
    assert "load average" in done.stderr
    bad = subprocess.run([sys.executable, "-m", "coopsim", "bench", "step", "--threads", "0"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert bad.returncode == 2 and "--threads" in bad.stderr
