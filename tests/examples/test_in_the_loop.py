"""The worked examples of examples/in-the-loop with real processes and sockets: a stand-in
"real" robot (its own process, its own dynamics, its pose streamed over ZeroMQ) stops in front of a
wall that exists only in the simulation reading coopsim's sonar, PASS by the external rule (4a);
an external leader with three simulated followers in formation (4b)."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from coopsim.formats.files import load
from coopsim.model.plugins import RULES
from coopsim.plugins.rules.external import External

from helpers import finishes
from nethelpers import ROOT, live

EXAMPLES = ROOT / "examples" / "in-the-loop"

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture(scope="module", autouse=True)
def external_rule():
    """The rule by its entry point once coopsim is installed again; put in by hand before."""
    if "external" not in RULES:
        RULES.put("external", External)


def _stand_in(script: str, endpoint: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(EXAMPLES / script), "--nameserver", endpoint,
                             *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=EXAMPLES)


def test_4a_the_real_robot_stops_before_the_virtual_wall_and_the_rule_passes():
    scenario = load(EXAMPLES / "virtual_wall.scenario")
    with live(scenario) as run:
        proc = _stand_in("real_robot.py", run.network.endpoint, "--seconds", "40")
        try:
            assert finishes(run.stepper), "the run never ended"
        finally:
            snap = run.stepper.snapshot
            state = run.stepper.sim.external.state()
    try:  # the run's servers are closed: the stand-in's next request gets no reply, it ends
        out = proc.communicate(timeout=30)[0]
    finally:
        proc.kill()
    assert run.stepper.finished.startswith("rule: PASS:") or "PASS:" in run.stepper.finished, \
        (run.stepper.finished, out)
    x = snap.poses[snap.index["real"], 0]
    assert -0.3 < x < 0.4, x  # in front of the wall's face (x = 0.4 m), never through it
    assert "stopped at x =" in out
    robot = state["robots"]["real"]
    assert robot["status"] == "live" and robot["received"] > 50 and not robot["refused"]
    assert state["latency"]["to_snapshot"]["count"] > 50
    assert state["latency"]["to_reading"]["count"] > 50


def test_4b_three_simulated_followers_keep_a_column_behind_an_external_leader():
    scenario = load(EXAMPLES / "leader_formation.scenario")
    with live(scenario) as run:
        proc = _stand_in("leader.py", run.network.endpoint, "--speed", "0.5", "--clock", "sim")
        try:
            run.stepper.wait_step(500, 60.0)  # 5 s: a third of the circle
            snap = run.stepper.snapshot
        finally:
            proc.kill()
            proc.wait()
    pose = {name: snap.poses[snap.index[name], :2] for name in ("leader", "f1", "f2", "f3")}
    r = math.hypot(*pose["leader"])
    assert abs(r - 1.5) < 0.05 and pose["leader"][1] > 1.0  # on its circle, well round it
    for ahead, behind in (("leader", "f1"), ("f1", "f2"), ("f2", "f3")):
        gap = math.dist(pose[ahead], pose[behind])
        # the column held (the leader on the run's clock: a busy machine stepping the run
        # slower than real time does not let it run ahead of its followers)
        assert 0.4 < gap < 1.6, (ahead, behind, gap)
    assert not run.stepper.finished  # the stream never went stale
