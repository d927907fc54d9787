"""The viewer on a run started with CurveZMQ keys: a real window under Xvfb shows it with a
client folder's keys, and a window without keys stays disconnected."""

from __future__ import annotations

import time

import pytest

from coopsim.formats.files import load
from coopsim.net.security import ClientKeys

from curvehelpers import lan, make_keys
from nethelpers import SCENARIOS, live
from test_viewer import connected, display, frame, pump, screenshot  # noqa: F401 -- fixture


@pytest.fixture(scope="module")
def curve_run(tmp_path_factory):
    keys = make_keys(tmp_path_factory.mktemp("keys"))
    with lan() as net, live(load(str(SCENARIOS / "demo.scenario")), bind=net.host,
                            keys=str(keys)) as run:
        yield run, ClientKeys.load(keys / "clients" / "alice")


def test_the_window_shows_a_curve_run_with_listed_keys(display, curve_run):
    from coopsim.viewer.app import Viewer

    run, alice = curve_run
    viewer = Viewer(run.network.endpoint, fps=10, keys=alice)
    try:
        pump(viewer, connected(viewer), "the run behind Curve")
        screenshot(viewer, "curve_run_with_keys")
        assert sorted(viewer.scene.robot_names) == ["robot1", "robot2", "robot3", "robot4"]
    finally:
        viewer.close()


def test_without_keys_the_window_stays_disconnected(display, curve_run):
    from coopsim.viewer.app import Viewer

    run, _ = curve_run
    viewer = Viewer(run.network.endpoint, fps=10)
    try:
        deadline = time.monotonic() + 3.0  # several probes' worth (each waits 0.5 s)
        while time.monotonic() < deadline:
            frame(viewer)
        assert not viewer.link.connected and viewer.link.frame is None
        assert "no reply" in viewer.link.error
    finally:
        viewer.close()
