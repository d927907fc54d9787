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
        assert peer.ok(2102)[4] == []  # a 2D world's lidar has no point cloud
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


def test_a_3d_lidar_serves_its_point_cloud_and_refuses_too_many_rays():
    """On mujoco: ``read`` 2100 gives channels x beams, ``points`` 2102 the cloud (x, y, z per
    return, lidar frame); a scan over 131,072 rays is error 4; 2D worlds answer [] (above)."""
    from dataclasses import replace

    spec = scenario(robots=[robot("tb", 0.0, 0.0, type="turtlebot3",
                                  params=[("lidar", "channels", 4), ("lidar", "beams", 30),
                                          ("lidar", "x", 0.0)])],
                    floor=(4.0, 3.0), mode="realtime")
    spec = replace(spec, settings=replace(spec.settings, engine="mujoco"))
    with live(spec, paused=True) as run:
        _step(run)
        peer = Peer(lookup(run.network.endpoint, "/tb/lidar"))
        try:
            assert len(peer.ok(2100)[4]) == 4 * 30
            flat = peer.ok(2102)[4]
            assert len(flat) == 3 * 4 * 30  # a closed room: every ray returns
            xs, ys, zs = flat[0::3], flat[1::3], flat[2::3]
            walls = [abs(abs(x) - 2.0) < 0.01 or abs(abs(y) - 1.5) < 0.01
                     for x, y in zip(xs, ys)]
            assert all(walls[60:])  # the two upper channels (+5, +15 degrees): the walls
            floor = [z for z, w in zip(zs, walls) if not w]  # the lower ones: floor or walls
            assert floor and max(floor) - min(floor) < 1e-6 and floor[0] < 0
            peer.ok(13, "lidar.beams", data=[4096])  # 16,384 rays a scan: fine
            refused = peer.ask(13, "lidar.channels", data=[64])  # 262,144: refused
            assert refused[0] == 4 and "131072" in refused[1]
            assert peer.ok(12, "lidar.channels")[4] == [4.0]  # nothing changed
        finally:
            peer.close()

