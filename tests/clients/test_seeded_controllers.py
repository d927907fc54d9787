"""Same scenario + seed = same run with network controllers too: the
controllers a run launches get the run's seed and each its robot's own stream
(``$COOPSIM_SEED``, ``$COOPSIM_ROBOT_SEED``); ``run_controller`` without a seed uses it, or
asks the run for its seed when started by hand; the demo played twice in lockstep by its real
controller processes exports byte-identical CSVs."""

from __future__ import annotations

import sys
import zlib

import pytest

from coopsim.client import Client
from coopsim.client.host import run_seed
from coopsim.model.driver import robot_seed

from helpers import robot, scenario
from nethelpers import SCENARIOS, live
from rechelpers import run_cli

PRINT_SEEDS = ("import os; print(os.environ['COOPSIM_ROBOT'], os.environ.get('COOPSIM_SEED'), "
               "os.environ.get('COOPSIM_ROBOT_SEED'))")


def test_the_robot_seed_is_the_documented_crc32():
    assert robot_seed(7, "robot1") == zlib.crc32(b"7/robot1")
    assert robot_seed(7, "robot1") != robot_seed(7, "robot2") != robot_seed(8, "robot2")


@pytest.mark.slow
def test_launched_controllers_get_the_runs_seed_and_their_robots_stream(tmp_path):
    spec = scenario(robots=[robot("r1", -2.0, 0.0), robot("r2", 2.0, 0.0)], mode="realtime",
                    seed=11)
    argv = f"{sys.executable} -c \"{PRINT_SEEDS}\""
    with live(spec, controller=(("r1", argv), ("r2", argv)), controllers=True,
              log_dir=str(tmp_path), seed=7) as run:
        for name in ("r1", "r2"):
            run.controllers.procs[name].wait(60)
    for name in ("r1", "r2"):
        line = (tmp_path / f"{name}.log").read_text().split()
        assert line == [name, "7", str(robot_seed(7, name))], line


def test_a_controller_without_a_seed_takes_the_runs(monkeypatch):
    monkeypatch.delenv("COOPSIM_SEED", raising=False)
    monkeypatch.delenv("COOPSIM_ROBOT_SEED", raising=False)
    spec = scenario(robots=[robot("r1")], mode="realtime", seed=5)
    with live(spec) as run, Client(run.network.endpoint) as client:
        assert run_seed("r1", client) == robot_seed(5, "r1")  # started by hand: asks /sim
    monkeypatch.setenv("COOPSIM_SEED", "9")
    assert run_seed("r1") == robot_seed(9, "r1")
    monkeypatch.setenv("COOPSIM_ROBOT_SEED", "1234")  # the launcher's own, first
    assert run_seed("r1") == 1234


@pytest.mark.slow
def test_the_demo_twice_in_lockstep_exports_byte_identical_csvs(tmp_path):
    csvs = []
    for i in (1, 2):
        record, csv = tmp_path / f"run{i}.mcap", tmp_path / f"run{i}.csv"
        done = run_cli("run", str(SCENARIOS / "demo.scenario"), "--headless", "--mode",
                       "lockstep", "--seed", "7", "--duration", "10", "--port", "0",
                       "--record", str(record), cwd=tmp_path, timeout=600)
        assert done.returncode == 0, done.stderr
        done = run_cli("export", str(record), "--csv", str(csv), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        csvs.append(csv.read_bytes())
    assert len(csvs[0]) > 1000 and csvs[0] == csvs[1]
