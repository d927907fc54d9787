"""Robot arms in the real viewer under Xvfb: a live MuJoCo world with a 6-DoF arm on a pedestal
(tests/armhelpers.py) served over real sockets, drawn from the layout's ``arm`` (protocol 6)
and the state stream: its links from above (orange bands from joint to joint, dark joint
dots, the gripper's fingers) and from the side (panel, key V), the cubes at their height.
Screenshots: test-artifacts/screenshots/arm_*.png."""

from __future__ import annotations

import numpy as np
import pytest

from armhelpers import arm_scenario, six_dof
from nethelpers import live
from test_viewer import close, pixel, pump, screenshot, viewer_for  # noqa: F401

pytest.importorskip("mujoco")

ORANGE = (235, 140, 40)


def _shown(viewer):
    return lambda: (viewer.link.connected and viewer.link.frame is not None
                    and viewer.scene.layout is not None and viewer.scene.arms is not None
                    and viewer.scene.arms.frames and viewer.side.rect is not None)


def _count(image, points, colour, tol=40) -> int:
    return sum(close(pixel(image, x, y), colour, tol) for x, y in points)


def test_an_arm_is_drawn_from_above_and_from_the_side(display, viewer_for):  # noqa: F811
    with live(arm_scenario(), paused=True) as run:
        viewer = viewer_for(run.network.endpoint)
        pump(viewer, _shown(viewer), "the arm")
        image = screenshot(viewer, "arm_top_and_side")
        scene, cam = viewer.scene, viewer.camera
    frames = scene.arms.frames["arm1"]
    arm = six_dof()
    # the frames are the arm's at its start angles on the pedestal at the origin
    from coopsim.model.arm import frames as chain
    np.testing.assert_allclose(frames, chain(arm, arm.start), atol=1e-9)
    # from above: orange along the forearm (joint 4 to joint 5, 0.3 m along x at 0.56 m up)
    a, b = frames[4, :2, 3], frames[5, :2, 3]
    along = [cam.to_screen(*(a + (b - a) * t)) for t in np.linspace(0.2, 0.8, 7)]
    assert _count(image, along, ORANGE) >= 6
    beside = [cam.to_screen(x, 0.3) for x in np.linspace(a[0], b[0], 7)]  # the floor beside it
    assert _count(image, beside, ORANGE) == 0
    # from the side (x-z): orange pixels up to the arm's height above the floor line
    x0, y0, x1, y1 = viewer.side.rect
    panel = [(x, viewer.height - y) for y in range(int(y0) + 20, int(y1))
             for x in range(int(x0), int(x1))]
    ys = [y for x, y in panel if close(pixel(image, x, y), ORANGE, 40)]
    assert len(ys) > 30, "the arm is not in the side view"
    floor_y = viewer.height - (y1 - 8.0)
    top = max(ys) - floor_y  # px above the floor of the arm's highest orange pixel
    highest = frames[1:-1, 2, 3].max() + arm.links[3].radius  # the forearm's upper edge
    assert top == pytest.approx(highest * viewer.side.scale, abs=4.0)
