"""The lidar and proximity modules over the wire: raw five-field requests through the robot
servers' real sockets, the Python client's attributes built from the registry, and bad
parameters refused with error 4 and the range."""

from __future__ import annotations

import pytest

from coopsim.client import Client, RemoteError

from helpers import box, robot, scenario
from nethelpers import Peer, live, lookup


def _world():
    return scenario(robots=[robot("tb", 0.0, 0.0, type="turtlebot3"),
                            robot("ep", 0.0, 2.0, type="epuck")],
                    objects=[box("wall", 1.5, 0.0, size=(1.0, 8.0))], mode="realtime")


@pytest.fixture()
def run():
    with live(_world(), paused=True) as run:
        yield run


def _step(run, n=1):
    sim = Peer(lookup(run.network.endpoint, "/sim"))
    try:
        sim.ok(4, params=[n])
    finally:
        sim.close()


def test_lidar_read_and_info_through_the_robot_server(run):
    _step(run)
    peer = Peer(lookup(run.network.endpoint, "/tb/lidar"))
    try:
        scan = peer.ok(2100)[4]
        assert len(scan) == 360
        assert scan[180] == pytest.approx(1.032, abs=1e-9)  # ahead: mounted 32 mm behind
        nearest, bearing, beams, angle_min, inc, time = peer.ok(2101)[4]
        assert beams == 360 and nearest == pytest.approx(1.032, abs=1e-9) and bearing == 0.0
        assert time > 0.0
        refused = peer.ask(13, "lidar.beams", data=[5000])
        assert refused[0] == 4 and "[1, 4096]" in refused[1]
        assert peer.ok(12, "lidar.beams")[4] == [360.0]  # nothing changed
        peer.ok(13, "lidar.beams", data=[720])
        _step(run)
        assert len(peer.ok(2100)[4]) == 720
        assert peer.ask(2200)[0] == 2  # a turtlebot3 has no proximity module
    finally:
        peer.close()


def test_the_python_client_reads_the_new_modules_by_name(run):
    _step(run)
    with Client(run.network.endpoint, timeout=5.0) as client:
        tb, ep = client.robot("tb"), client.robot("ep")
        assert {"lidar"} <= set(tb.modules()) and "proximity" in ep.modules()
        assert len(tb.lidar.read()) == 360
        assert len(ep.proximity.read()) == 8
        with pytest.raises(RemoteError) as caught:
            ep.set_param("proximity", "count", 9)
        assert "out of range" in str(caught.value)


def test_a_held_reading_says_the_step_it_was_taken_at(run):
    peer = Peer(lookup(run.network.endpoint, "/tb/lidar"))
    try:
        assert len(peer.ok(2100)[3]) == 1  # no rate: params [step] as before
        peer.ok(13, "lidar.rate", data=[5.0])  # dt 0.01 in these runs: every 20 steps
        assert peer.ask(13, "lidar.rate", data=[101.0])[0] == 4  # above 1/dt
        _step(run, 3)
        step, taken = peer.ok(2100)[3]
        assert taken <= step < taken + 20
        assert peer.ok(2101)[4][5] == pytest.approx(taken * 0.01)  # info's time: the same
    finally:
        peer.close()
