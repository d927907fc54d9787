"""Run control from ROS 2: a stock rclpy client (Kilted and Jazzy wheels, Fast DDS) calls
``/coopsim/pause``, ``/resume``, ``/step`` and ``/reset`` (std_srvs/Trigger), the Gazebo Classic
aliases (std_srvs/Empty) and sets ``step_count`` on ``/coopsim_control``; the run does what
``/sim`` would, and refuses what ``/sim`` refuses with its code and sentence."""

from __future__ import annotations

import pytest

from coopsim.client import Client
from coopsim.formats.files import load
from tests.nethelpers import SCENARIOS, live
from tests.ros2.rosnode import RosNode, domain, ros_distro  # noqa: F401 - a fixture

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")

TRIGGER, EMPTY = "std_srvs/srv/Trigger", "std_srvs/srv/Empty"


@pytest.fixture(scope="module")
def controlled(ros_distro):
    """A realtime demo run with --ros2 whose run-control node runs with the distribution's
    Python, and a probe node of the same distribution."""
    name, python = ros_distro
    dom = domain() + (1 if name == "jazzy" else 0)
    mp = pytest.MonkeyPatch()
    mp.setenv("COOPSIM_ROS_PYTHON", str(python))
    try:
        with live(load(str(SCENARIOS / "demo.scenario")), ros2=True, ros2_domain=dom,
                  duration=600.0) as run, RosNode(python, domain=dom) as node:
            assert run.ros2_control is not None, run.ros2_control_line
            yield run, node
    finally:
        mp.undo()


def call(node, service, kind=TRIGGER, **request):
    return node("call", service=service, type=kind, request=request)["response"]


def set_step_count(node, value) -> dict:
    kind = 2 if isinstance(value, int) else 4  # rcl_interfaces ParameterType: integer, string
    field = "integer_value" if kind == 2 else "string_value"
    out = call(node, "/coopsim_control/set_parameters", "rcl_interfaces/srv/SetParameters",
               parameters=[{"name": "step_count", "value": {"type": kind, field: value}}])
    return out["results"][0]


def test_the_services_show_in_the_graph_with_their_types(controlled):
    run, node = controlled
    graph = node("graph", wait_node="/coopsim_control")
    assert "/coopsim_control" in graph["nodes"]
    services = graph["services"]
    for name in ("/coopsim/pause", "/coopsim/resume", "/coopsim/reset", "/coopsim/step"):
        assert services.get(name) == [TRIGGER], (name, sorted(services))
    for name in ("/pause_physics", "/unpause_physics", "/reset_simulation"):
        assert services.get(name) == [EMPTY], (name, sorted(services))
    assert "ros2: run control as node /coopsim_control" in run.ros2_control_line


def test_pause_step_resume_as_sim_does(controlled):
    run, node = controlled
    out = call(node, "/coopsim/pause")
    assert out["success"] and out["message"].startswith("paused: step "), out
    assert run.stepper.paused
    with Client(run.network.endpoint) as client:  # /sim sees the same run paused
        assert client.sim().status()["paused"]
    before = run.stepper.snapshot.step
    out = call(node, "/coopsim/step")
    assert out["success"], out
    assert run.stepper.wait_step(before, 30) is not None
    assert run.stepper.snapshot.step == before + 1
    assert set_step_count(node, 25)["successful"]
    out = call(node, "/coopsim/step")
    assert out["success"] and f"step {before + 26}," in out["message"], out
    assert run.stepper.snapshot.step == before + 26
    assert set_step_count(node, 1)["successful"]
    out = call(node, "/coopsim/resume")
    assert out["success"] and "running" in out["message"], out
    assert not run.stepper.paused
    assert run.stepper.wait_step(before + 30, 30) is not None  # it goes on by itself


def test_refusals_are_sims_code_and_sentence(controlled):
    run, node = controlled
    call(node, "/coopsim/resume")
    out = call(node, "/coopsim/step")  # /sim refuses steps of a running run: error 6
    assert not out["success"]
    assert out["message"].startswith("error 6: step takes steps of a paused run"), out
    assert not run.stepper.paused  # and nothing changed
    for bad in (0, 1_000_001, "ten"):
        result = set_step_count(node, bad)
        assert not result["successful"] and result["reason"], (bad, result)
    with Client(run.network.endpoint) as client:
        figures = client.sim().state()["ros2_control"]
    assert figures["refused"] >= 1 and figures["last_refusal"].startswith("error 6")
    assert figures["step_count"] == 1


def test_reset_and_the_gazebo_aliases(controlled):
    run, node = controlled
    call(node, "/coopsim/resume")
    assert run.stepper.wait_step(run.stepper.snapshot.step + 20, 30) is not None
    assert call(node, "/pause_physics", EMPTY) == {}  # Empty: nothing to read
    assert run.stepper.paused
    out = call(node, "/coopsim/reset")
    assert out["success"] and out["message"].startswith("reset: step 0,"), out
    assert run.stepper.snapshot.step == 0 and run.stepper.paused  # reset keeps the pause
    call(node, "/unpause_physics", EMPTY)
    assert not run.stepper.paused
    call(node, "/reset_simulation", EMPTY)
    assert run.stepper.wait_step(0, 30) is not None


def test_the_control_node_leaves_no_shared_memory_behind(ros_distro, tmp_path):
    """Fast DDS keeps its transport's segments in /dev/shm; the run-control node, ended with
    the run, tears itself down so they go with it (it used to leave the process with
    ``os._exit``: 5-8 files a run stayed, some 50 KB-1 MB each, run after run)."""
    import pathlib

    name, python = ros_distro
    mp = pytest.MonkeyPatch()
    mp.setenv("COOPSIM_ROS_PYTHON", str(python))
    try:
        with live(load(str(SCENARIOS / "demo.scenario")), ros2=True,
                  ros2_domain=domain() + (3 if name == "jazzy" else 2), duration=600.0) as run:
            assert run.ros2_control is not None, run.ros2_control_line
            proc = run.ros2_control.proc
            maps = pathlib.Path(f"/proc/{proc.pid}/maps").read_text()
            mine = {line.split()[-1] for line in maps.splitlines()
                    if "/dev/shm/fastdds" in line}
    finally:
        mp.undo()
    assert proc.wait(30) == 0
    if not mine:
        pytest.skip("this Fast DDS mapped no shared memory (its SHM transport is off)")
    # unlinked before it exited; a port segment another live process maps (a ROS node of
    # another test on this machine listening on the same port) is that process's to remove
    left = {p for p in mine if pathlib.Path(p).exists() and not _mapped_by_a_live_process(p)}
    assert not left, sorted(left)


def _mapped_by_a_live_process(path: str) -> bool:
    """Whether a process alive now maps ``path`` (Fast DDS shares a port's segment among the
    processes listening on it and unlinks it with the last)."""
    import pathlib

    for maps in pathlib.Path("/proc").glob("[0-9]*/maps"):
        try:
            if path in maps.read_text():
                return True
        except OSError:  # the process ended meanwhile, or is not ours to read
            continue
    return False
