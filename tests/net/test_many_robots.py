"""Ten thousand robots, each with its own endpoint, under this machine's open-file limit; and
past the limit, a clear error instead of an abort."""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import textwrap

import pytest

from coopsim.client import Client
from coopsim.model.specs import FloorSpec, RobotSpec, ScenarioSpec, Settings, WorldSpec

from nethelpers import ROOT, live


def swarm(n: int, engine: str = "kinematic") -> ScenarioSpec:
    side = int(n ** 0.5) + 1
    robots = tuple(RobotSpec("single", f"r{i}", (-side / 2 + 0.5 + (i % side),
                                                 -side / 2 + 0.5 + (i // side), 0.0))
                   for i in range(n))
    return ScenarioSpec(WorldSpec(FloorSpec(side + 1.0, side + 1.0)), robots=robots,
                        settings=Settings(mode="lockstep", engine=engine), name="swarm")


@pytest.mark.slow
def test_ten_thousand_robots_each_answer_on_their_own_endpoint():
    with live(swarm(10_000), paused=True) as run, Client(run.network.endpoint) as client:
        endpoints = {port.endpoint for port in run.network.robots.values()}
        assert len(endpoints) == 10_000
        last = client.robot("r9999")
        x, y = last.gps.read()
        assert (x, y) == tuple(run.stepper.snapshot.poses[9999][:2])
        assert client.names("/r9999")["/r9999/sonar"] == last.endpoint
        fds = len(list(__import__("os").scandir("/proc/self/fd")))
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert fds < soft, (fds, soft)


LOW_LIMIT = textwrap.dedent("""
    import resource, sys
    sys.path.insert(0, "tests"); sys.path.insert(0, "tests/net")
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    from test_many_robots import swarm
    from coopsim.app.run import Run, RunOptions
    from coopsim.client import Client
    from coopsim.model.errors import CoopsimError
    try:
        with Run(swarm(400), RunOptions(port=0, controllers=False)):
            pass
    except CoopsimError as exc:
        print("refused:", exc)
    with Run(swarm(100), RunOptions(port=0, controllers=False)) as run:
        run.start()
        # The run has stepped first (its kernels loaded): what is tested is the open-file
        # limit, not the start-up.
        assert run.stepper.wait_step(0, 600) is not None
        with Client(run.network.endpoint, timeout=60) as c:  # a loaded machine: no 5 s bound
            sim = c.sim()
            added = 0
            try:
                for i in range(400):
                    sim.insert_robot(f"extra{i}", "single", (0.0, 0.0, 0.0))
                    added += 1
            except Exception as exc:
                print("insert refused:", type(exc).__name__, exc)
            print("added", added, "robots", len(sim.robots()),
                  "endpoints", len(run.network.robots))
            print("still answers", sim.status()["robots"])
""")


@pytest.mark.slow
def test_past_the_open_file_limit_robots_are_refused_clearly(tmp_path):
    done = subprocess.run([sys.executable, "-c", LOW_LIMIT], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr  # no abort, no traceback
    out = done.stdout
    assert "refused: cannot open an endpoint for robot" in out and "limit 256" in out, out
    assert "insert refused: RemoteError error 8: cannot open an endpoint" in out, out
    added, robots, endpoints = map(int, re.search(r"added (\d+) robots (\d+) endpoints (\d+)",
                                                  out).groups())
    assert robots == endpoints == 100 + added, out  # the refused robot left nothing behind
    assert "still answers" in out
