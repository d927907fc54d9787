"""``coopsim run --ros2``: another process's DDS participant (tests/ros2/ddspeer.py, with ROS 2
types of its own) sees the robots' topics under ROS 2's DDS names, reads odometry and scans that
match the run, and drives a robot by publishing Twists; lockstep waits for them."""

from __future__ import annotations

import json
import math
import time
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")

from coopsim.client import Client  # noqa: E402
from coopsim.replay.player import recorded_steps  # noqa: E402
from coopsim.recording.reader import Recording  # noqa: E402
from coopsim.formats.files import load  # noqa: E402
from tests.nethelpers import SCENARIOS, live  # noqa: E402
from tests.rechelpers import run_cli  # noqa: E402
from tests.ros2.rosnode import domain  # noqa: E402

PEER = Path(__file__).with_name("ddspeer.py")
ROBOTS = ("robot1", "robot2", "robot3", "robot4")




class DdsPeer:
    def __init__(self, dom: int) -> None:
        self.proc = subprocess.Popen([sys.executable, str(PEER), str(dom)], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert json.loads(self.proc.stdout.readline()) == {"ready": True}

    def __call__(self, cmd: str, **args) -> dict:
        self.proc.stdin.write(json.dumps({"cmd": cmd, **args}) + "\n")
        self.proc.stdin.flush()
        out = json.loads(self.proc.stdout.readline())
        assert "error" not in out, out
        return out

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write('{"cmd": "quit"}\n')
            self.proc.stdin.close()
            self.proc.wait(30)


@pytest.fixture(scope="module")
def bridged(tmp_path_factory):
    """A lockstep demo run with --ros2 and a recording, and a DDS peer in another process."""
    dom = domain()
    record = tmp_path_factory.mktemp("ros2") / "run.mcap"
    peer = DdsPeer(dom)
    try:
        with live(load(str(SCENARIOS / "demo.scenario")), mode="lockstep", ros2=True, ros2_domain=dom,
                  record=str(record), duration=3600.0) as run:  # a resumed lockstep run
            # with nobody attached steps as fast as it can: each test that resumes it pauses it
            # again, so an hour of simulated time outlasts the module on any machine
            yield run, peer, record
    finally:
        peer.close()


@pytest.mark.slow
def test_the_topics_appear_under_ros2_dds_names(bridged):
    run, peer, _ = bridged
    expect = ["rt/clock", "rt/tf", "rt/tf_static", "rt/map"] + [
        f"rt/{r}/{t}" for r in ROBOTS for t in ("odom", "scan")]
    types = peer("topics", expect=expect, follow=list(ROBOTS))["types"]
    assert types["rt/robot1/odom"] == "nav_msgs::msg::dds_::Odometry_"
    assert types["rt/robot3/scan"] == "sensor_msgs::msg::dds_::LaserScan_"
    assert types["rt/tf"] == types["rt/tf_static"] == "tf2_msgs::msg::dds_::TFMessage_"
    assert types["rt/map"] == "nav_msgs::msg::dds_::OccupancyGrid_"
    assert types["rt/clock"] == "rosgraph_msgs::msg::dds_::Clock_"


@pytest.mark.slow
def test_twists_drive_the_robot_one_lockstep_step_each(bridged):
    run, peer, _ = bridged
    peer("topics", expect=["rt/robot1/odom"], follow=["robot1"])
    before = run.stepper.snapshot
    start = before.poses[before.index["robot1"]].copy()
    last = peer("drive", robot="robot1", linear=0.3, angular=0.5, steps=40)["last"]

    def counted():  # the Twists the bridge has read: applied, or superseded by a newer one
        with Client(run.network.endpoint) as client:
            ros = client.sim().state()["ros2"]["cmd_vel"]
        return ros["by_robot"].get("robot1", 0) + ros["dropped"] >= 40

    deadline = time.monotonic() + 60  # a bound, not a pace: the reader reads 1000 times a second
    while not counted():
        assert time.monotonic() < deadline, "the bridge did not read the 40 Twists"
        time.sleep(0.05)
    run.stepper.pause()
    with Client(run.network.endpoint) as client:
        state = client.sim().state()
    ros = state["ros2"]["cmd_vel"]
    # each robot's newest Twist is applied (docs/ros2.md, Floods): one sent before the last was
    # read is counted dropped, never lost
    assert ros["by_robot"]["robot1"] + ros["dropped"] >= 40 and ros["refused"] == 0
    assert ros["by_robot"]["robot1"] >= 30
    # the run waited for the Twists: robot1 turned left while moving forward
    robot = next(r for r in state["robots"] if r["name"] == "robot1")
    moved = math.hypot(robot["x"] - start[0], robot["y"] - start[1])
    assert 0.05 < moved < 0.3 * 0.01 * 400
    assert math.remainder(robot["yaw"] - start[2], 2 * math.pi) > 0.05
    assert last["forward"] > 0 and last["turn"] > 0


@pytest.mark.slow
def test_odometry_at_the_paused_step_is_the_sim_state_pose(bridged):
    run, peer, _ = bridged
    peer("topics", expect=["rt/robot2/odom"], follow=["robot2"])
    run.stepper.pause()
    with Client(run.network.endpoint) as client:
        state = client.sim().state()
    ns = round(state["time"] * 1e9)
    odom = peer("odom_at", robot="robot2", ns=ns)
    origin = next(t for t in peer("tf_static")["transforms"]
                  if t["parent"] == "map" and t["child"] == "robot2/odom")
    c, s = math.cos(origin["yaw"]), math.sin(origin["yaw"])
    x = origin["x"] + odom["x"] * c - odom["y"] * s
    y = origin["y"] + odom["x"] * s + odom["y"] * c
    robot = next(r for r in state["robots"] if r["name"] == "robot2")
    assert abs(x - robot["x"]) < 1e-9 and abs(y - robot["y"]) < 1e-9
    assert abs(math.remainder(origin["yaw"] + odom["yaw"] - robot["yaw"], 2 * math.pi)) < 1e-9
    assert (odom["frame"], odom["child"]) == ("robot2/odom", "robot2/base_link")


@pytest.mark.slow
def test_bad_twists_are_refused_and_counted(bridged):
    run, peer, _ = bridged
    run.stepper.resume()
    before = run.network.sim.more_state[-1]()["ros2"]["cmd_vel"]

    def refused_both() -> bool:
        """Send both bad twists again until two are counted: a best-effort Twist can be lost
        (at load 9 the two sent once were not counted within 60 s)."""
        peer("twist", robot="robot3", linear=float("nan"), angular=0.0)
        peer("twist", robot="robot3", linear=500.0, angular=0.0)  # beyond the wheels' sanity
        return (run.network.sim.more_state[-1]()["ros2"]["cmd_vel"]["refused"]
                >= before["refused"] + 2)

    from tests.nethelpers import wait_until
    wait_until(refused_both, timeout=300, every=0.5)
    run.stepper.pause()
    after = run.network.sim.more_state[-1]()["ros2"]["cmd_vel"]
    assert "robot3" in after["last_refusal"]
    assert run.stepper.error in ("", None)


@pytest.mark.slow
def test_a_robot_a_client_owns_refuses_twists_and_ros_owns_what_it_drives(bridged):
    run, peer, _ = bridged
    run.stepper.resume()
    with Client(run.network.endpoint) as client:
        bot = client.robot("robot4")
        bot.claim()
        before = run.network.sim.more_state[-1]()["ros2"]["cmd_vel"]["refused"]
        from tests.nethelpers import wait_until

        def refused() -> bool:  # sent again until counted (a best-effort Twist can be lost)
            peer("twist", robot="robot4", linear=0.1, angular=0.0)
            return run.network.sim.more_state[-1]()["ros2"]["cmd_vel"]["refused"] > before

        wait_until(refused, timeout=300, every=0.5)
        said = run.network.sim.more_state[-1]()["ros2"]["cmd_vel"]["last_refusal"]
        assert said.startswith("robot4:") and "owned" in said
        bot.release()
        peer("twist", robot="robot2", linear=0.05, angular=0.0)  # ROS now owns robot2
        wait_until(lambda: "ROS 2" in client.sim().state()["owners"].get("robot2", ""),
                   timeout=60)
    run.stepper.pause()


@pytest.mark.slow
def test_scans_and_odometry_match_the_recording(bridged):
    run, peer, record = bridged
    peer("topics", expect=["rt/robot1/odom", "rt/robot1/scan"], follow=["robot1"])
    run.stepper.resume()
    peer("drive", robot="robot1", linear=0.2, angular=0.0, steps=30)
    odoms = peer("odoms", robot="robot1")["odoms"]
    scans = peer("scans", robot="robot1")["scans"]
    origin = next(t for t in peer("tf_static")["transforms"] if t["child"] == "robot1/odom")
    run.stepper.stop()
    if run.recorder is not None:
        run.recorder.close()
    by_ns = {o["ns"]: o for o in odoms}
    scan_by_ns = {s["ns"]: s for s in scans}
    checked = scanned = 0
    with Recording(record) as rec:
        for frame, layout, snap in recorded_steps(rec):
            ns = round(frame.position * 1e9)
            pose = snap.poses[snap.index["robot1"]]
            if ns in by_ns:
                o = by_ns[ns]
                c, s = math.cos(origin["yaw"]), math.sin(origin["yaw"])
                x = origin["x"] + o["x"] * c - o["y"] * s
                assert abs(x - pose[0]) < 2e-3  # recordings keep poses to the millimetre
                checked += 1
            if ns in scan_by_ns:
                sonar = snap.reading("robot1", "sonar")
                got = np.array([np.inf if r is None else r for r in scan_by_ns[ns]["ranges"]])
                expect = np.where(sonar >= 2.0 - 1e-9, np.inf, sonar + 0.2)
                finite = np.isfinite(expect) & np.isfinite(got)
                assert np.allclose(got[finite], expect[finite], atol=2e-3)
                scanned += 1
    assert checked >= 20 and scanned >= 2


@pytest.mark.parametrize("args, words", [
    (("--ros2", "--ros2-domain", "300"), "0<=x<=232"),
    (("--ros2", "--bind", "0.0.0.0", "--keys", "nokeys"), ""),
])
@pytest.mark.slow
def test_bad_ros2_options_exit_2_with_a_sentence(args, words, tmp_path):
    done = run_cli("run", "--headless", "--duration", "0.1", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_beyond_loopback_needs_insecure(tmp_path):
    done = run_cli("run", "--headless", "--duration", "0.1", "--ros2", "--bind", "0.0.0.0",
                   "--insecure", "--no-controllers", "--port", "0", "--mode", "lockstep",
                   cwd=tmp_path, timeout=120)
    # with --insecure the run starts (DDS on every interface) and ends at its duration
    assert done.returncode == 0, done.stderr
    assert "ros2: DDS domain 0 (every interface)" in done.stderr


def test_sim_state_has_its_ros2_key_from_the_first_answer(monkeypatch):
    """The bridge starts before /sim answers: no client ever reads a state without ``ros2``
    (a state read while the DDS participant was still starting lacked it). Its own domain: one
    process joins a domain once, and the module's bridged run holds :func:`domain`."""
    from coopsim.app import run as run_module
    from tests.nethelpers import Peer, lookup
    answers, start = [], run_module.start_ros2
    holder: list = []

    def asked_while_starting(stepper, opts):
        network = holder[0].network
        if network is not None:  # /sim already answers: ask it now, as a quick client would
            sim = Peer(lookup(network.endpoint, "/sim"))
            answers.append(json.loads(sim.ok(23)[1]))
            sim.close()
        return start(stepper, opts)

    monkeypatch.setattr(run_module, "start_ros2", asked_while_starting)
    run = run_module.Run(load(str(SCENARIOS / "demo.scenario")),
                         run_module.RunOptions(port=0, controllers=False, ros2=True,
                                               ros2_domain=domain() + 1))
    holder.append(run)
    with run:
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        answers.append(json.loads(sim.ok(23)[1]))
        sim.close()
    assert all("ros2" in a for a in answers), [sorted(a) for a in answers]
