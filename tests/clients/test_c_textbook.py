"""The C twins of the textbook behaviours (clients/c: braitenberg, wall_follow, line_follow,
kilobot_swarm), built with -Werror and run against real lockstep runs of their robots: each
drives its robot as its Python driver does."""

from __future__ import annotations

import math
import os
import subprocess

import pytest


from coopsim.app.run import Run, RunOptions
from coopsim.formats.files import load_scenario

from clienthelpers import ROOT
from test_clients import c_build  # noqa: F401 -- the module-scoped build fixture

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _run_c(scenario: str, program, robot: str, steps: int, drop_driver: bool = True):
    """Run ``program`` for ``steps`` lockstep steps against ``scenario`` (its driver lines
    removed: the C program drives); return the final snapshot."""
    spec = load_scenario(ROOT / "scenarios" / scenario)
    spec = spec.__class__(**{**spec.__dict__, "robots": tuple(
        r.__class__(**{**r.__dict__, "drivers": ()}) for r in spec.robots)}) \
        if drop_driver else spec
    settings = spec.settings.__class__(**{**spec.settings.__dict__, "mode": "lockstep"})
    spec = spec.__class__(**{**spec.__dict__, "settings": settings})
    with Run(spec, RunOptions(port=0, controllers=False)) as run:
        run.start()
        env = dict(os.environ, COOPSIM_NAMESERVER=run.network.endpoint)
        proc = subprocess.run([str(program), robot, str(steps)], env=env, capture_output=True,
                              text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr
        return run.stepper.snapshot


def test_c_wall_follow_follows_the_corridor(c_build):  # noqa: F811
    snap = _run_c("turtlebot3_wall_follow.scenario", c_build / "wall_follow", "tb3", 600)
    x, y, _ = snap.poses[0]
    assert x > -10.5 + 1.0 and -1.4 < y < -0.6  # along the corridor, off the wall
    assert not snap.reading("tb3", "bumper").any()


def test_c_line_follow_goes_along_the_edge(c_build):  # noqa: F811
    snap = _run_c("thymio_line.scenario", c_build / "line_follow", "thymio", 600)
    x, y, _ = snap.poses[0]
    assert min(abs(abs(x) - 0.3), abs(abs(y) - 0.25)) < 0.1 and math.hypot(x, y + 0.32) > 0.2


def test_c_braitenberg_keeps_the_epucks_moving(c_build):  # noqa: F811
    start = load_scenario(ROOT / "scenarios" / "epuck_braitenberg.scenario").robots[0].position
    snap = _run_c("epuck_braitenberg.scenario", c_build / "braitenberg", "epuck1", 400)
    x, y, _ = snap.poses[snap.index["epuck1"]]
    assert math.hypot(x - start[0], y - start[1]) > 0.1


def test_c_kilobot_messages_and_walks(c_build):  # noqa: F811
    snap = _run_c("kilobot_aggregation.scenario", c_build / "kilobot_swarm", "kb1", 200)
    x, y, _ = snap.poses[snap.index["kb1"]]
    start = load_scenario(ROOT / "scenarios" / "kilobot_aggregation.scenario").robots[0].position
    assert math.hypot(x - start[0], y - start[1]) > 0.005  # 1 cm/s, 10 s: it walked alone
    assert snap.reading("kb1", "leds")[0] == 200 * 65536  # its LED shows it walking: red
