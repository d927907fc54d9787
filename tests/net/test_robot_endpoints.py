"""Tests of the robot servers: every module command, the parameter commands and their errors,
through real sockets, for REQ and DEALER clients alike."""

from __future__ import annotations

import math
import threading

import pytest
import zmq

from coopsim.net import protocol as p

from helpers import box, robot, scenario, target
from nethelpers import Peer, live, lookup

KINDS = [(zmq.REQ, False), (zmq.DEALER, False), (zmq.DEALER, True)]
MODULES = ["motors", "sonar", "target", "odometry", "gps", "compass", "bumper"]


def _world():
    """r1 in the open facing +x; r2 touching a box ahead; a team2; a red and a green target."""
    return scenario(robots=[robot("r1", -2.0, 0.0), robot("r2", 2.0, 2.0),
                            robot("t", 0.0, -3.0, type="team2")],
                    objects=[box("crate", 2.35, 2.0, size=(0.4, 0.4))],
                    targets=[target("red", 3.0, 0.0), target("green", -3.0, 3.0)],
                    mode="realtime")


@pytest.fixture()
def run():
    """A paused run: nothing moves unless a test steps it through /sim."""
    with live(_world(), paused=True) as run:
        yield run


@pytest.fixture(params=KINDS, ids=["req", "dealer", "dealer+delimiter"])
def each_r1(request, run):
    """r1's server through a REQ, a DEALER and a DEALER adding the delimiter, in turn."""
    kind, delimiter = request.param
    peer = Peer(lookup(run.network.endpoint, "/r1/motors"), kind, delimiter)
    yield peer
    peer.close()


@pytest.fixture()
def r1(run):
    peer = Peer(lookup(run.network.endpoint, "/r1/motors"))
    yield peer
    peer.close()


def _peer(run, name: str) -> Peer:
    return Peer(lookup(run.network.endpoint, name))


def _step(sim: Peer, n: int = 1) -> int:
    return sim.ok(4, params=[n])[3][0]


# --- generic commands -----------------------------------------------------------------------------

def test_hello(each_r1):
    assert each_r1.ok(0, params=[p.PROTOCOL_VERSION]) == [0, "/r1", 0, [p.PROTOCOL_VERSION], []]
    assert each_r1.ask(0, params=[1])[0] == p.VERSION_MISMATCH


def test_every_module_name_resolves_to_the_robots_one_socket(run):
    endpoints = {lookup(run.network.endpoint, f"/r1/{m}") for m in MODULES}
    assert endpoints == {lookup(run.network.endpoint, "/r1")}
    assert lookup(run.network.endpoint, "/r1") != lookup(run.network.endpoint, "/r2")


def test_modules(each_r1, run):
    assert each_r1.ok(1) == [0, ",".join(MODULES), 1, [7], []]
    leader = _peer(run, "/t_leader")
    assert leader.ok(1)[1].split(",") == MODULES + ["support"]


def test_commands_lists_what_the_robot_serves_with_ids_arities_and_kinds(each_r1, run):
    error, text, command, params, data = each_r1.ok(3)
    lines = [" ".join(line.split()[:9]) for line in text.splitlines()]  # the doc is tested apart
    assert (error, command, params) == (0, 3, [len(lines)])
    assert "100 set_speeds motors 0 0 2 2 - motion" in lines
    assert "200 read sonar 0 0 0 0 - read" in lines
    assert "301 read_color target 0 0 0 0 req read" in lines
    assert "401 reset odometry 0 0 0 0 - action" in lines
    assert "13 param_set - 0 0 0 1 req -" in lines
    assert not any(" support " in line for line in lines)  # r1 carries no support
    assert each_r1.ok(3, "sonar")[1].startswith("200 read sonar 0 0 0 0 - read ")
    leader = _peer(run, "/t_leader")
    assert leader.ok(3, "support")[1].startswith("800 read support 0 0 0 0 - read ")
    error, text, *_ = each_r1.ask(3, "wings")
    assert error == p.UNKNOWN_NAME and "no module 'wings'" in text


def test_unknown_command(each_r1):
    for command in (7, 99, 104, 900, -5):  # 6 is protocol 13's exchange
        error, text, cmd, *_ = each_r1.ask(command)
        assert (error, cmd) == (p.UNKNOWN_COMMAND, command) and str(command) in text


def test_a_missing_module_is_an_unknown_command(r1):
    error, text, *_ = r1.ask(800)
    assert error == p.UNKNOWN_COMMAND and "no support module" in text


def test_detach_when_not_attached(r1):
    assert r1.ok(2)[1:4] == ["was not attached", 2, [0]]


# --- parameters -----------------------------------------------------------------------------------

def test_param_list(r1):
    error, text, _, _, data = r1.ok(10, "sonar")
    assert text.splitlines() == ["max_range", "noise", "lost", "rate"]
    assert data == [2.0, 0.0, 0.0, 0.0]


def test_param_info(r1):
    _, text, _, _, data = r1.ok(11, "motors.max_speed")
    kind, unit, description = text.split("\n")
    assert (kind, unit) == ("float", "m/s") and "speed" in description
    assert data == [0.6, 0.0, 5.0, 0.6]


def test_param_set_and_get_accept_integers(each_r1):
    assert each_r1.ok(13, "sonar.max_range", data=[1])[4] == [1.0]
    assert each_r1.ok(12, "sonar.max_range") == [0, "sonar.max_range", 12, [], [1.0]]
    assert each_r1.ok(13, "sonar.max_range", data=[1.5])[4] == [1.5]


def test_param_errors(each_r1):
    cases = [((13, "sonar.max_range", (), (99.0,)), p.OUT_OF_RANGE),
             ((13, "sonar.max_range", (), (math.nan,)), p.OUT_OF_RANGE),
             ((13, "sonar.max_range", (), ()), p.WRONG_ARITY),
             ((13, "sonar.max_range", (), (1.0, 2.0)), p.WRONG_ARITY),
             ((12, "", (), ()), p.WRONG_ARITY),
             ((12, "sonar", (), ()), p.WRONG_ARITY),
             ((12, "sonar.nope", (), ()), p.UNKNOWN_NAME),
             ((11, "sonar.nope", (), ()), p.UNKNOWN_NAME),
             ((13, "sonar.nope", (), (1.0,)), p.UNKNOWN_NAME),
             ((12, "laser.range", (), ()), p.UNKNOWN_NAME),
             ((10, "laser", (), ()), p.UNKNOWN_NAME),
             ((10, "support", (), ()), p.UNKNOWN_NAME)]
    for request, code in cases:
        error, text, *_ = each_r1.ask(*request)
        assert error == code and text, (request, error, text)
    assert each_r1.ok(12, "sonar.max_range")[4] == [2.0], "a refused change changes nothing"


def test_a_parameter_set_on_the_network_acts_on_the_next_step(run, sim):
    r1 = _peer(run, "/r1")
    assert max(r1.ok(200)[4]) == 2.0
    r1.ok(13, "sonar.max_range", data=[0.5])
    _step(sim)
    assert r1.ok(200)[4] == pytest.approx([0.5] * 11)


# --- motors ---------------------------------------------------------------------------------------

def test_set_speeds_in_realtime_answers_at_once_with_step_and_time(each_r1, sim):
    status = sim.ok(1)
    reply = each_r1.ok(100, data=[0, -0])  # integers as floats
    assert reply[1:] == ["realtime", 100, [status[3][0]], [status[4][0]]]
    each_r1.ok(100, data=[1, 0])
    each_r1.ok(13, "motors.max_speed", data=[2])
    _step(sim)
    assert each_r1.ok(103)[4][:2] == [1.0, 0.0]


def test_set_power_is_a_share_of_max_speed(r1, sim):
    r1.ok(101, data=[50, -100])
    _step(sim)
    assert r1.ok(103)[4][:2] == pytest.approx([0.3, -0.6])


def test_stop(r1, sim):
    r1.ok(100, data=[0.4, 0.4])
    _step(sim)
    assert r1.ok(102)[1] == "realtime"
    _step(sim)
    assert r1.ok(103)[4][:2] == [0.0, 0.0]


def test_latest_command_wins(r1, sim):
    for left in (0.1, 0.2, 0.3):
        r1.ok(100, data=[left, 0.0])
    _step(sim)
    assert r1.ok(103)[4][:2] == [0.3, 0.0]


@pytest.mark.parametrize("command, data, code", [
    (100, [101.0, 0.0], p.OUT_OF_RANGE), (100, [0.0, -1e9], p.OUT_OF_RANGE),
    (100, [math.inf, 0.0], p.OUT_OF_RANGE), (100, [0.0, math.nan], p.OUT_OF_RANGE),
    (101, [100.5, 0.0], p.OUT_OF_RANGE), (101, [0.0, -101], p.OUT_OF_RANGE),
    (100, [1.0], p.WRONG_ARITY), (100, [], p.WRONG_ARITY), (101, [1, 2, 3], p.WRONG_ARITY),
    (102, [0.0], p.WRONG_ARITY), (103, [1.0], p.WRONG_ARITY), (200, [1.0], p.WRONG_ARITY),
])
def test_motor_errors(r1, command, data, code):
    error, text, cmd, params, reply_data = r1.ask(command, data=data)
    assert (error, cmd, params, reply_data) == (code, command, [], []) and text


def test_a_refused_motor_command_changes_nothing(r1, sim):
    r1.ok(100, data=[0.2, 0.2])
    r1.ask(100, data=[500.0, 0.0])
    _step(sim)
    assert r1.ok(103)[4][:2] == [0.2, 0.2]


def test_speeds_over_max_speed_saturate(r1, sim):
    r1.ok(100, data=[3.0, 3.0])
    _step(sim, 50)
    left_cmd, right_cmd, left, right = r1.ok(103)[4]
    assert (left_cmd, right_cmd) == (0.6, 0.6), "what the motors drove, at most max_speed"
    assert 0.3 < left <= 0.6 + 1e-6 and 0.3 < right <= 0.6 + 1e-6


# --- sensors --------------------------------------------------------------------------------------

def test_reads_answer_from_the_last_completed_step(r1, sim):
    for _ in range(2):
        step = sim.ok(1)[3][0]
        for command in (103, 200, 300, 400, 500, 600, 700):
            assert r1.ok(command)[3] == [step], command
        _step(sim)


def test_sonar(each_r1):
    error, text, command, params, data = each_r1.ok(200)
    assert len(data) == 11 and data == [2.0] * 11  # nothing within range of r1


def test_target(each_r1):
    _, text, _, _, data = each_r1.ok(300)
    assert text == "red,green" and len(data) == 4
    assert data[:2] == pytest.approx([5.0, 0.0])
    assert each_r1.ok(301, "green")[4] == pytest.approx([math.hypot(1, 3), math.atan2(3, -1)])
    assert each_r1.ok(301, "red")[1] == "red"


def test_target_errors(r1):
    error, text, *_ = r1.ask(301, "blue")
    assert error == p.UNKNOWN_NAME and "red, green" in text
    assert r1.ask(301)[0] == p.WRONG_ARITY


def test_gps_and_compass_agree_with_the_sim(r1, sim):
    r1.ok(100, data=[0.3, 0.5])
    _step(sim, 30)
    names = sim.ok(10)[1].splitlines()
    pose = sim.ok(10)[4][3 * names.index("r1"):3 * names.index("r1") + 3]
    assert r1.ok(500)[4] == pose[:2]
    assert r1.ok(600)[4] == [pose[2]]


def test_odometry_and_its_reset(r1, sim):
    assert r1.ok(400)[4] == [0.0] * 5
    r1.ok(100, data=[0.5, 0.5])
    _step(sim, 40)
    x, y, yaw, left, right = r1.ok(400)[4]
    assert x > 0.05 and abs(y) < 1e-3 and left == pytest.approx(right)
    assert r1.ok(401)[1] == "odometry reset"
    assert r1.ok(400)[4] == [0.0] * 5, "a read right after the reset shows it"
    r1.ok(102)
    _step(sim)
    assert r1.ok(400)[4][0] < x


def test_bumper(run, sim):
    r1, r2 = _peer(run, "/r1"), _peer(run, "/r2")
    _step(sim)
    assert r1.ok(700)[4] == [0.0, 0.0]
    assert r2.ok(700)[4] == [1.0, 0.0], "r2 touches the crate ahead of it"


def test_support_of_a_team_robot(run, sim):
    _step(sim)
    for name in ("/t_leader", "/t_helper"):
        data = _peer(run, name).ok(800)[4]
        assert len(data) == 2 and all(math.isfinite(v) for v in data), (name, data)


# --- threads --------------------------------------------------------------------------------------

def test_robot_threads_never_touch_pymunk():
    touched: set[str] = set()

    def watch(frame, event, arg):
        if "pymunk" in frame.f_code.co_filename:
            touched.add(threading.current_thread().name)

    threading.setprofile(watch)  # applies to the threads started from now on
    try:
        with live(_world(), start=False) as run:
            run.stepper.pause()
            run.start()
            r1, sim = _peer(run, "/r1"), _peer(run, "/sim")
            for command, text, data in [
                    (100, "", [0.3, 0.3]), (13, "sonar.noise", [0.01]), (401, "", []),
                    (200, "", []), (400, "", []), (101, "", [10, 10]), (102, "", []),
                    (12, "motors.efficiency", [])]:
                r1.ok(command, text, data=data)
            _step(sim, 3)
    finally:
        threading.setprofile(None)
    assert "coopsim-stepper" in touched, "the watch works: the stepper touches pymunk"
    assert not {name for name in touched if name.startswith("coopsim/")}, touched
