"""The 3D view (viewer/view3d.py) in the real window under Xvfb (Mesa's llvmpipe), attached to
live MuJoCo and aerial worlds over real sockets: what the projection says is where the pixels
are. Screenshots: test-artifacts/screenshots/view3d_*.png (docs/images/ holds the ones the docs
show)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.client import Client
from coopsim.model.specs import (FloorSpec, ObjectSpec, RobotSpec, ScenarioSpec, Settings,
                                 WorldSpec)

from nethelpers import live
from test_viewer import click, frame, pump, screenshot, viewer_for  # noqa: F401

pytest.importorskip("mujoco")

RED = (230, 30, 30)
GREEN = (40, 200, 60)


def _pixels(image) -> np.ndarray:
    """(H, W, 3) the screenshot's RGB, row 0 at the bottom (pyglet's y up)."""
    data = image.get_data("RGB", image.width * 3)
    return np.frombuffer(data, dtype=np.uint8).reshape(image.height, image.width, 3)


def _shown(viewer, robots: int):
    return lambda: (viewer.link.connected and viewer.link.frame is not None
                    and viewer.scene.layout is not None
                    and len(viewer.scene.robot_names) == robots)


def _stepped(viewer, step: int):
    return lambda: viewer.link.frame is not None and viewer.link.frame.step >= step


def _reddish(rgb: np.ndarray) -> np.ndarray:
    r, g, b = (rgb[..., k].astype(int) for k in range(3))
    return (r > 90) & (r > 2 * g) & (r > 2 * b)


@pytest.fixture(scope="module")
def crazyflie():
    """scenarios/crazyflie.scenario, paused at its start (lockstep: a test steps it)."""
    from coopsim.app.run import load_scenario_or_world
    from test_viewer import ROOT

    with live(load_scenario_or_world(ROOT / "scenarios" / "crazyflie.scenario"),
              paused=True) as run:
        yield run


@pytest.fixture(scope="module")
def box_and_flyer():
    """A red box on the floor and a still Crazyflie 1 m up (no driver), paused."""
    spec = ScenarioSpec(WorldSpec(FloorSpec(6.0, 4.0), objects=(
        ObjectSpec("BOX", "box", (0.3, 0.3, 0.3), (1.0, 0.5, 0.15), color=RED),)),
        robots=(RobotSpec("crazyflie", "cf", (-1.5, -1.0, 1.0), 0.0, GREEN),),
        settings=Settings(mode="lockstep", engine="mujoco"), name="box_and_flyer")
    with live(spec, paused=True) as run:
        yield run


@pytest.mark.slow
def test_crazyflie_opens_in_3d_flies_selects_follows_and_tab_switches(display, viewer_for,
                                                                      crazyflie):  # noqa: F811
    from pyglet.window import key, mouse

    viewer = viewer_for(crazyflie.network.endpoint, top=False)
    pump(viewer, _shown(viewer, 1), "the crazyflie")
    assert viewer.view3d.active  # a world on a 3D engine opens in the 3D view
    with Client(crazyflie.network.endpoint) as client:
        client.sim().step(50)  # its flight driver starts the rotors
    pump(viewer, _stepped(viewer, 50), "the first steps")
    cam = viewer.view3d.camera
    x, y = cam.to_screen(*viewer.link.frame.pose3d[0, :3])
    for event in ("on_mouse_motion", "on_mouse_press", "on_mouse_release"):
        viewer.dispatch_event(event, x, y, *((0, 0) if event == "on_mouse_motion" else
                                             (mouse.LEFT, 0)))
        frame(viewer)
    assert viewer.view3d.selected == "cf1"
    viewer.dispatch_event("on_key_press", key.C, 0)  # follow it: it is at the centre
    viewer.dispatch_event("on_mouse_scroll", x, y, 0, 14)  # and close
    pump(viewer, lambda: np.allclose(cam.target, viewer.link.frame.pose3d[0, :3]), "following")
    assert cam.to_screen(*cam.target) == pytest.approx((viewer.width / 2, viewer.height / 2))
    rgb = _pixels(screenshot(viewer, "view3d_crazyflie"))
    cx, cy = viewer.width // 2, viewer.height // 2
    orange = (rgb[cy - 40:cy + 40, cx - 40:cx + 40].astype(int) - (230, 120, 40))
    assert (np.abs(orange).max(axis=2) < 60).sum() > 30  # its hull, in its colour, there
    viewer.dispatch_event("on_key_press", key.TAB, 0)
    frame(viewer)
    assert not viewer.view3d.active and viewer.cam is viewer.camera  # the 2D top view
    viewer.dispatch_event("on_key_press", key.TAB, 0)
    frame(viewer)
    assert viewer.view3d.active
    step = viewer.link.frame.step  # the widgets work over the 3D view
    click(viewer, "controls.step")
    pump(viewer, _stepped(viewer, step + 1), "a step from the Step button")
    assert viewer.view3d.selected == "cf1"  # a click on a widget selects nothing


@pytest.mark.slow
def test_a_red_box_is_red_exactly_where_the_projection_puts_it(display, viewer_for,
                                                             box_and_flyer):  # noqa: F811
    viewer = viewer_for(box_and_flyer.network.endpoint, top=False)
    pump(viewer, _shown(viewer, 1), "the box world")
    cam = viewer.view3d.camera
    cam.target, cam.distance = np.array((1.0, 0.5, 0.15)), 2.5
    cam.yaw, cam.pitch = math.radians(-70), math.radians(30)
    red = _reddish(_pixels(screenshot(viewer, "view3d_red_box")))
    corners = np.array([(1.0 + sx * 0.15, 0.5 + sy * 0.15, 0.15 + sz * 0.15)
                        for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    xy, depth = cam.project(corners)
    assert (depth > 0).all()
    x0, y0 = (int(v) - 60 for v in xy.min(axis=0))  # around it (the side view shows it too)
    h, w = (int(np.ptp(xy[:, k])) + 120 for k in (1, 0))
    ys, xs = np.nonzero(red[y0:y0 + h, x0:x0 + w])
    xs, ys = xs + x0, ys + y0
    assert len(xs) > 500
    # the red pixels fill the projected corners' bounding box, to the pixel
    assert xs.min() == pytest.approx(xy[:, 0].min(), abs=2)
    assert xs.max() == pytest.approx(xy[:, 0].max(), abs=2)
    assert ys.min() == pytest.approx(xy[:, 1].min(), abs=2)
    assert ys.max() == pytest.approx(xy[:, 1].max(), abs=2)
    cx, cy = (int(round(v)) for v in cam.to_screen(1.0, 0.5, 0.15))
    assert red[cy, cx]
    ox, oy = (int(round(v)) for v in cam.to_screen(1.0, -0.3, 0.0))  # the floor beside it
    assert not red[oy, ox]


def _roll_axis_deg(rgb: np.ndarray) -> float:
    """The image angle (deg, counter-clockwise from the window's +x) of the long axis of the
    green pixels (the quadrotor's hull and arms) within 200 px of the window's centre (the side
    view shows it too, as a dot)."""
    h, w = rgb.shape[0] // 2, rgb.shape[1] // 2
    r, g, b = (rgb[h - 200:h + 200, w - 200:w + 200, k].astype(int) for k in range(3))
    ys, xs = np.nonzero((g > r + 30) & (g > b + 30))
    assert len(xs) > 100, "the quadrotor is not drawn"
    pts = np.column_stack((xs, ys)).astype(float)
    pts -= pts.mean(axis=0)
    vec = np.linalg.eigh(pts.T @ pts)[1][:, -1]
    angle = math.degrees(math.atan2(vec[1], vec[0]))
    return (angle + 90) % 180 - 90


@pytest.mark.slow
def test_a_quadrotor_rolled_30_degrees_is_drawn_rolled(display, viewer_for,
                                                      box_and_flyer):  # noqa: F811
    import mujoco

    viewer = viewer_for(box_and_flyer.network.endpoint, top=False)
    pump(viewer, _shown(viewer, 1), "the flyer")
    cam = viewer.view3d.camera
    cam.target, cam.distance = np.array((-1.5, -1.0, 1.0)), 0.45
    cam.yaw, cam.pitch = math.pi, 0.0  # from behind (-x), level: y runs to the left
    level = _roll_axis_deg(_pixels(screenshot(viewer, "view3d_level")))
    # roll it 30 degrees about its x axis in MuJoCo's own state (the run is paused), step once
    engine = box_and_flyer.stepper.sim.world.engine
    joint = int(np.flatnonzero(engine.model.jnt_type == mujoco.mjtJoint.mjJNT_FREE)[0])
    adr = int(engine.model.jnt_qposadr[joint])
    half = math.radians(30) / 2
    engine.data.qpos[adr + 3:adr + 7] = (math.cos(half), math.sin(half), 0.0, 0.0)
    mujoco.mj_forward(engine.model, engine.data)
    step = viewer.link.frame.step
    with Client(box_and_flyer.network.endpoint) as client:
        client.sim().step(1)
    pump(viewer, _stepped(viewer, step + 1), "the rolled pose")
    q = viewer.link.frame.pose3d[0, 3:]
    assert 2 * math.degrees(math.atan2(q[1], q[0])) == pytest.approx(30, abs=0.5)
    cam.target = viewer.link.frame.pose3d[0, :3].copy()
    rolled = _roll_axis_deg(_pixels(screenshot(viewer, "view3d_rolled")))
    assert level == pytest.approx(0, abs=3)
    # +y (left in this view) went up: the span turns clockwise on the screen
    assert rolled == pytest.approx(-30, abs=3)


@pytest.mark.slow
def test_arm_stack_shows_the_arm_its_links_and_the_cubes(display, viewer_for):  # noqa: F811
    from coopsim.app.run import load_scenario_or_world
    from test_viewer import ROOT

    with live(load_scenario_or_world(ROOT / "scenarios" / "arm_stack.scenario"),
              paused=True) as run:
        viewer = viewer_for(run.network.endpoint, top=False)
        pump(viewer, _shown(viewer, 1), "the arm")
        pump(viewer, lambda: "arm" in viewer.scene.arms.frames, "the arm's frames")
        cam = viewer.view3d.camera
        cam.target, cam.distance = np.array((0.2, 0.0, 0.6)), 1.6
        cam.yaw, cam.pitch = math.radians(-60), math.radians(25)
        rgb = _pixels(screenshot(viewer, "view3d_arm_stack"))
        p = viewer.scene.arms.frames["arm"][:, :3, 3]
        for a, b in zip(p[1:-2], p[2:-1]):  # the middle of each link is the links' orange
            x, y = (int(round(v)) for v in cam.to_screen(*((a + b) / 2)))
            r, g, bl = (int(v) for v in rgb[y, x])
            assert r > 110 and r > g + 30 > bl + 30, (x, y, (r, g, bl))
        cube = next(o for o in viewer.scene.layout["objects"] if o["name"] == "OBJECT_1")
        x, y = (int(round(v)) for v in cam.to_screen(cube["x"], cube["y"], cube["z"]))
        assert _reddish(rgb[y - 1:y + 2, x - 1:x + 2]).any()


@pytest.mark.slow
def test_a_thousand_crazyflies_are_drawn_at_their_heights(display, viewer_for):  # noqa: F811
    """A live aerial-engine world of 1,000 Crazyflies on a 0.5 m grid, 1 m up (paused): the
    view fits them all, each drawn in its colour where the projection puts it."""
    n, side = 1000, 32
    robots = tuple(RobotSpec("crazyflie", f"cf{k}", ((k % side - side / 2) * 0.5,
                                                     (k // side - side / 2) * 0.5, 1.0),
                             0.0, GREEN) for k in range(n))
    spec = ScenarioSpec(WorldSpec(FloorSpec(20.0, 20.0)), robots=robots,
                        settings=Settings(mode="lockstep", engine="aerial"), name="swarm")
    with live(spec, paused=True) as run:
        viewer = viewer_for(run.network.endpoint, top=False)
        pump(viewer, _shown(viewer, n), "the swarm")
        pump(viewer, lambda: viewer.view3d.pose7.shape == (n, 7), "their poses")
        rgb = _pixels(screenshot(viewer, "view3d_swarm"))
        drawn = viewer.view3d.drawn  # a few pixels each: one instance per body, a shadow
        assert len(drawn["quadfar"]) == len(drawn["disc"]) == n
        xy, depth = viewer.view3d.camera.project(viewer.view3d.pose7[:, :3])
        assert (depth > 0).all()
        inside = (xy[:, 0] > 0) & (xy[:, 0] < viewer.width) & (xy[:, 1] > 40) & \
            (xy[:, 1] < viewer.height - 80)
        assert inside.sum() > 0.95 * n  # fitted: (nearly) all in the window
        r, g, b = (rgb[..., k].astype(int) for k in range(3))
        green = (g > r + 30) & (g > b + 30)
        hits = [green[max(0, int(y) - 2):int(y) + 3, max(0, int(x) - 2):int(x) + 3].any()
                for x, y in xy[inside]]
        assert np.mean(hits) > 0.9


def test_a_worlds_meshes_stand_from_their_bottom_to_their_top_and_the_terrain_follows_its_grid():
    """No window: the triangles the 3D view uploads for the layout's ``scenery``."""
    from coopsim.viewer.view3d_scenery import static_meshes

    layout = {"zones": [{"polygon": [[0, 0], [1, 0], [1, 1]], "color": [0, 0, 255]}],
              "scenery": {"meshes": [{"name": "m", "outline": [[2, 2], [3, 2], [3, 3], [2, 3]],
                                      "bottom": 0.5, "top": 1.25, "color": [90, 90, 90]}],
                          "terrain": {"x": 0, "y": 0, "z": 0.1, "size": [4, 2, 1],
                                      "grid": [[0, 0, 0], [0, 1, 0]]}}}
    (zone, _), (terrain, _), (mesh, colour) = static_meshes(layout)
    assert zone[:, 2] == pytest.approx(0.001)  # on the floor
    assert terrain.shape == (2 * 2 * 3, 6)  # 2 x 3 heights: 2 cells of 2 triangles
    assert terrain[:, 2].min() == pytest.approx(0.1) and terrain[:, 2].max() == pytest.approx(1.1)
    assert mesh[:, 2].min() == pytest.approx(0.5) and mesh[:, 2].max() == pytest.approx(1.25)
    assert mesh[:, 0].min() == pytest.approx(2) and mesh[:, 0].max() == pytest.approx(3)
    assert colour == pytest.approx((90 / 255, 90 / 255, 90 / 255, 1.0))


@pytest.mark.slow
def test_the_crazyflies_blades_turn_at_its_rotors_streamed_speeds(display, viewer_for,
                                                                  crazyflie):  # noqa: F811
    """The stream carries each propeller's speed (``rotor_w1..4``, protocol 11): the blades
    turn by them over sim time (still while paused: the same pixels twice), alternate rotors
    the other way."""
    from coopsim.viewer.view3d_bodies import SPIN_SCALE

    viewer = viewer_for(crazyflie.network.endpoint, top=False)
    pump(viewer, _shown(viewer, 1), "the crazyflie")
    names = viewer.scene.layout["columns"]
    cols = [names.index(f"rotor_w{k}") for k in range(1, 5)]
    with Client(crazyflie.network.endpoint) as client:
        step = client.sim().status()["step"]
        client.sim().step(20)
        pump(viewer, _stepped(viewer, step + 20), "flying")
        frame(viewer)
        w = viewer.link.frame.columns[0, cols]
        assert (w > 100).all()  # rad/s: the propellers turn
        a0, t0 = viewer.view3d.spin.angle[0].copy(), viewer.view3d.spin.last
        viewer.view3d.camera.follow(viewer.link.frame.pose3d[0, :3])
        viewer.dispatch_event("on_mouse_scroll", viewer.width / 2, viewer.height / 2, 0, 14)
        still = [_pixels(screenshot(viewer, "view3d_blades")).copy() for _ in range(2)]
        assert np.array_equal(*still)  # paused: the blades stand
        client.sim().step(5)
        pump(viewer, _stepped(viewer, step + 25), "five more steps")
        frame(viewer)
    turned = (viewer.view3d.spin.angle[0] - a0) * (1, -1, 1, -1)
    expected = viewer.link.frame.columns[0, cols] * SPIN_SCALE * (viewer.view3d.spin.last - t0)
    assert turned == pytest.approx(expected, rel=0.25)
    assert (np.abs(_pixels(screenshot(viewer, "view3d_blades")).astype(int) - still[0]) > 40
            ).any()  # moved: the blades (and the drone) where they now are
