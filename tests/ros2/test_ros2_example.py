"""examples/ros2/ run as a ROS 2 user runs them (docs/ros2.md, *A controller in ROS 2*): the wall
follower, a plain rclpy node on ``/tb3/scan`` -> ``/tb3/cmd_vel`` with ``use_sim_time``, drives
the TurtleBot3 of examples/ros2/wall_follow.scenario along the office's walls; the joint reader
prints the irb120's ``/arm/joint_states`` as coopsim has the joints. Both distributions."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from coopsim.formats.files import load
from tests.nethelpers import SCENARIOS, live, wait_until
from tests.ros2.rosnode import ROOT, domain, ros_distro, run_script, spawn, stop  # noqa: F401

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")

EXAMPLES = ROOT / "examples" / "ros2"


def test_the_wall_follower_drives_the_turtlebot_along_the_walls(ros_distro):
    name, python = ros_distro
    dom = domain() + (11 if name == "jazzy" else 10)
    scenario = load(str(EXAMPLES / "wall_follow.scenario"))
    with live(scenario, ros2=True, ros2_domain=dom, duration=3600.0) as run:
        snap = run.stepper.snapshot
        start = snap.poses[snap.index["tb3"]].copy()
        node = spawn(python, EXAMPLES / "wall_follower.py",
                     ["--ros-args", "-r", "__ns:=/tb3", "-p", "use_sim_time:=true"], domain=dom)
        path = [start[:2].copy()]

        def travelled() -> float:
            s = run.stepper.snapshot
            here = s.poses[s.index["tb3"], :2].copy()
            if np.hypot(*(here - path[-1])) > 0.05:
                path.append(here)
            return float(sum(np.hypot(*(b - a)) for a, b in zip(path, path[1:])))
        try:
            wait_until(lambda: travelled() > 2.0 or node.poll() is not None, timeout=300)
        finally:
            out, err = stop(node)
        figures = run.ros2.state()["ros2"]["cmd_vel"]
    assert travelled() > 2.0, (figures, err[-2000:])
    assert figures["by_robot"]["tb3"] > 20 and figures["refused"] == 0, figures["last_refusal"]
    assert "ahead" in err  # its log line: it read scans on the sim clock and commanded


def test_the_joint_reader_prints_the_arms_joints(ros_distro):
    name, python = ros_distro
    dom = domain() + (13 if name == "jazzy" else 12)
    with live(load(str(SCENARIOS / "arm_reach.scenario")), ros2=True, ros2_domain=dom,
              duration=3600.0) as run:
        code, lines, err = run_script(
            python, EXAMPLES / "joint_reader.py",
            ["--count", "5", "--ros-args", "-r", "__ns:=/arm", "-p", "use_sim_time:=true"],
            domain=dom)
        from coopsim.ros2.arms import joint_angles
        held = joint_angles(run.stepper.snapshot)[run.stepper.snapshot.index["arm"], :6]
    assert code == 0, err[-2000:]
    assert len(lines) == 5, lines
    for line in lines:
        assert line["name"] == [f"joint_{i}" for i in range(1, 7)]
        assert np.allclose(line["position"], held, atol=1e-3), (line, held)
        assert len(line["velocity"]) == len(line["effort"]) == 6
        assert line["t"] > 0 and math.isfinite(line["now"])
    assert json.dumps(lines)  # plain JSON a person can pipe on
