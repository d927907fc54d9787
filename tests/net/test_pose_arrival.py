"""The pose channel counts poses by their arrival.

A steady 200 Hz stream got error 15 (``pose flood``) under load: the channel's thread, kept
off the CPU, found its poses queued and took them in one burst, and the flood limit counted
them by when it read them. Here the thread is held (the external robots' lock, which it takes
for each pose) while a real DEALER sends 60 poses at 200 Hz, so it reads them late, in one go:
none is refused. A true flood (the same 60 sent back to back with the thread free) still is.
"""

from __future__ import annotations

import time

import msgpack
import pytest
import zmq

from coopsim.formats.files import parse_scenario

from nethelpers import ROOT, Peer, live, lookup, wait_until

SCENARIO = f"""
[WORLD]
file {ROOT / "worlds" / "empty.world"}

[ROBOT_1]
type single
name real
position -2 0 0
external stale 5 max_speed 2 max_rate 200

[ROBOT_2]
type single
name flood
position 2 0 0
external stale 5 max_speed 2 max_rate 200

[ROBOT_3]
type single
name own
position 0 2 0
external stale 5 max_speed 2 max_rate 200
"""
POSES = 60  # three times the burst a 200 Hz robot is let through (0.1 s: 21 poses)


def _pose(robot: str, x: float) -> bytes:
    return msgpack.packb([0, robot, 20, [1], [x, 0.0, 0.0]])  # [1]: answered if refused


def _refusals(peer: Peer, wait: float) -> list:
    """The refusals the channel answered within ``wait`` s."""
    out, end = [], time.monotonic() + wait
    while peer.sock.poll(max(1, int((end - time.monotonic()) * 1000))):
        out.append(msgpack.unpackb(peer.sock.recv_multipart()[-1], raw=False))
        if time.monotonic() > end:
            break
    return out


@pytest.mark.slow
def test_a_200_hz_burst_read_late_is_not_a_flood_and_a_true_flood_is():
    with live(parse_scenario(SCENARIO, "arrival.scenario")) as run:
        channel = run.network.poses
        external = run.stepper.sim.external
        peer = Peer(lookup(run.network.endpoint, "/external"), zmq.DEALER, delimiter=True)
        try:
            start = channel.received
            with external.lock:  # the channel's thread stops at its first pose, held
                for _ in range(POSES):
                    peer.send_frames([_pose("real", -2.0)])
                    time.sleep(0.005)  # 200 Hz
            wait_until(lambda: channel.received - start >= POSES, 60.0)
            assert _refusals(peer, 0.5) == []
            assert external.tracks["real"].refused == {}
            flood = channel.received
            for _ in range(POSES):  # back to back: a flood, however late it is read
                peer.send_frames([_pose("flood", 2.0)])
            refused = _refusals(peer, 5.0)
            assert refused and {r[0] for r in refused} == {15}, refused[:3]
            assert channel.received - flood < POSES
        finally:
            peer.close()


def test_a_200_hz_burst_read_late_on_the_robots_own_endpoint_is_not_a_flood_either():
    """The same through the robot's own endpoint (protocol 10's way, served by the stepper's
    thread, held here by the same lock): every pose answered 0, none 15."""
    with live(parse_scenario(SCENARIO, "arrival.scenario")) as run:
        external = run.stepper.sim.external
        peer = Peer(lookup(run.network.endpoint, "/own"), zmq.DEALER, delimiter=True)
        try:
            with external.lock:  # the stepper stops at its step or at the first pose
                for _ in range(POSES):
                    peer.send_frames([msgpack.packb([0, "", 20, [], [0.0, 2.0, 0.0]])])
                    time.sleep(0.005)  # 200 Hz
            codes = [peer.receive(timeout=60.0)[0] for _ in range(POSES)]
            assert codes == [0] * POSES, codes
            assert external.tracks["own"].refused == {}
        finally:
            peer.close()


def test_arrivals_are_spread_since_the_socket_was_last_empty_within_the_bound():
    from coopsim.sim.external import SPREAD, arrivals

    assert arrivals(10.0, 10.1, 1) == [10.1]
    assert arrivals(10.0, 10.1, 4) == pytest.approx([10.025, 10.05, 10.075, 10.1])
    late = arrivals(0.0, 100.0, 2)  # idle a long time: spread over SPREAD s at most
    assert late == pytest.approx([100.0 - SPREAD / 2, 100.0])
