"""The viewer's link to a run started with CurveZMQ keys (connection level: the window's own
process keeps one X connection, so a second Xvfb per test module cannot be had; the link is all
the window talks through). With a client folder's keys it connects, gets the layout and state
frames; without keys it stays disconnected; it follows a plain replay without keys and comes
back to the run with them, as the window does when it opens a recording."""

from __future__ import annotations

import time

import pytest

from coopsim.formats.files import load
from coopsim.net.security import ClientKeys
from coopsim.replay.servers import Replay
from coopsim.viewer.connection import Link

from curvehelpers import keys, net  # noqa: F401 -- fixtures
from nethelpers import ROOT, SCENARIOS, live

WAIT = 60.0  # s of this process's CPU (the run is hosted here): a loaded machine slows the wait
HANG = 600.0  # s of wall: nothing used CPU meanwhile (a hang)

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture(scope="module")
def run(net, keys):
    with live(load(str(SCENARIOS / "demo.scenario")), bind=net.host, keys=str(keys)) as running:
        yield running


def wait_for(condition, what: str) -> None:
    cpu, wall = time.process_time() + WAIT, time.monotonic() + HANG
    while not condition():
        assert time.process_time() < cpu and time.monotonic() < wall, \
            f"timed out waiting for {what}"
        time.sleep(0.05)


def shows(link: Link, robots: int):
    return lambda: (link.connected and link.frame is not None and link.layout is not None
                    and len(link.frame.robots) == robots)


def test_the_link_shows_a_curve_run_with_listed_keys(run, keys):
    link = Link(run.network.endpoint, ClientKeys.load(keys / "clients" / "alice")).start()
    try:
        wait_for(shows(link, 4), "the run's state frames")
        assert [r["name"] for r in link.layout["robots"]] == ["robot1", "robot2", "robot3",
                                                               "robot4"]
        reply = link.submit("/sim", 1)  # a /sim request too
        wait_for(reply.done, "a /sim reply")
        assert reply.result().params[4] == 4
    finally:
        link.close()


def test_without_keys_the_link_stays_disconnected(run):
    link = Link(run.network.endpoint).start()
    try:
        time.sleep(3.0)  # several connection attempts' worth (each waits 0.5 s)
        assert not link.connected and link.frame is None
        assert "no reply" in link.error or "no connection" in link.error
    finally:
        link.close()


def test_the_link_follows_a_plain_replay_and_comes_back_with_keys(run, keys):
    alice = ClientKeys.load(keys / "clients" / "alice")
    link = Link(run.network.endpoint, alice).start()
    with Replay(str(ROOT / "recordings" / "sample.mcap"), port=0, paused=True) as replay:
        try:
            wait_for(shows(link, 4), "the run")
            link.switch(replay.endpoint)  # the window's replay child: loopback, no Curve
            wait_for(lambda: link.connected and link.playback is not None, "the replay")
            link.switch(run.network.endpoint, alice)
            wait_for(lambda: shows(link, 4)() and link.playback is None, "the run again")
        finally:
            link.close()
