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

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


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


def _irb_world(mode: str = "realtime"):
    import dataclasses

    from coopsim.model.specs import ObjectSpec

    from helpers import robot, scenario
    spec = scenario([robot("irb", 0.0, 0.0, type="irb120")],
                    [ObjectSpec("cube", "box", (0.05, 0.05, 0.05), (0.35, -0.25, 0.3), 0.0, 0.1)],
                    floor=(2.0, 2.0), dt=0.002, mode=mode)
    return dataclasses.replace(spec, settings=dataclasses.replace(spec.settings,
                                                                  engine="mujoco"))


GOAL = (1.2, 0.5, -0.3, 0.0, 0.9, 0.0)  # rad: turned left, leaning forward


def test_a_live_irb120_moved_over_the_network_is_drawn_at_its_angles(display,  # noqa: F811
                                                                     viewer_for):
    from coopsim.client import Client
    from coopsim.model.armstate import arm_world_frames, layout_arms

    with live(_irb_world(), paused=False) as run:
        with Client(run.network.endpoint) as client:
            client.robot("irb").joints.set_positions(*GOAL, 1.0)
        viewer = viewer_for(run.network.endpoint)

        def there():
            f = viewer.scene.arms.frames.get("irb") if viewer.scene.arms else None
            cols = viewer.link.layout.get("columns", []) if viewer.link.layout else []
            return (_shown(viewer)() and f is not None and "arm_q1" in cols
                    and abs(viewer.scene.arms.angles(viewer.link.frame.columns, 0)[0]
                            - GOAL[0]) < 1e-3)
        pump(viewer, there, "the arm at its goal")
        image = screenshot(viewer, "arm_irb120_live")
        frames, cam = viewer.scene.arms.frames["irb"], viewer.camera
        arm = layout_arms(viewer.link.layout)["irb"]
        pose = viewer.link.frame.pose3d[0]
    np.testing.assert_allclose(frames, arm_world_frames(arm, pose, GOAL), atol=2e-3)
    # the upper arm leans out along the turned direction: orange from above along it
    a, b = frames[3, :2, 3], frames[5, :2, 3]
    along = [cam.to_screen(*(a + (b - a) * t)) for t in np.linspace(0.2, 0.8, 7)]
    assert _count(image, along, ORANGE) >= 6
    mirror = [cam.to_screen(x, -y) for x, y in (a + (b - a) * t for t in (0.3, 0.5, 0.7))]
    assert _count(image, mirror, ORANGE) == 0  # nothing where the unturned arm would be


def _on_its_way(base: list) -> int:
    """The recorded step halfway between the first where the base joint (``base``: its angle
    at each recorded step, rad) left 0 and the first where it reached ``GOAL`` (or the last):
    where the arm is on its way whenever the controller attached (a lockstep run steps
    without waiting while none is, as many steps as the machine takes to attach it)."""
    moved = next((i for i, q in enumerate(base) if abs(q) > 1e-6), len(base) - 1)
    there = next((i for i, q in enumerate(base) if q >= GOAL[0] - 1e-3), len(base) - 1)
    return (moved + there) // 2


def test_a_replay_draws_the_arm_as_it_moved(display, viewer_for, tmp_path):  # noqa: F811
    from coopsim.client import Client
    from coopsim.model.armstate import arm_world_frames, joint_angles, layout_arms
    from coopsim.recording.reader import Recording
    from coopsim.replay.player import recorded_steps
    from coopsim.replay.servers import Replay

    path = tmp_path / "arm.mcap"
    with live(_irb_world("lockstep"), record=str(path)) as run:
        with Client(run.network.endpoint) as client:
            bot = client.robot("irb")
            for _ in bot.loop(steps=300):
                bot.joints.set_positions(*GOAL, 1.0)
            bot.detach()
    with Recording(path) as rec:
        steps = list(recorded_steps(rec))
    mid = _on_its_way([joint_angles(snap)[0, 0] for _, _, snap in steps])
    want = joint_angles(steps[mid][2])[0, :6]
    assert 0.05 < want[0] < GOAL[0] - 0.05
    with Replay(str(path), port=0, paused=True) as replay:
        replay.player.seek(steps[mid][0].position)
        viewer = viewer_for(replay.endpoint)
        pump(viewer, lambda: _shown(viewer)() and viewer.link.frame.step == steps[mid][0].step
             and abs(viewer.scene.arms.angles(viewer.link.frame.columns, 0)[0] - want[0])
             < 1e-3, "the replay at the seeked step")
        screenshot(viewer, "arm_irb120_replay")
        frames = viewer.scene.arms.frames["irb"]
        arm = layout_arms(viewer.link.layout)["irb"]
        pose = viewer.link.frame.pose3d[0]
        cube = viewer.scene.objects_xyz[0]
    np.testing.assert_allclose(frames, arm_world_frames(arm, pose, want), atol=2e-4)
    assert cube[2] < 0.3 - 0.01  # the cube falls: drawn at its recorded height
