"""The ``camera3d`` module rendered by MuJoCo's real offscreen renderer (EGL, no display): a
coloured box at a known pose appears in its colour where the projection puts it and at its
distance to 1 cm; a rolled quadrotor's image rolls; the same seed gives the same noisy image;
absurd parameters and a camera on an engine without a renderer are refused, nothing rendered."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.formats.files import load_scenario  # noqa: E402
from coopsim.model.errors import FileFormatError, ParameterError, SimulationError  # noqa: E402
from coopsim.model.images import decode, intrinsics  # noqa: E402
from coopsim.model.specs import (FloorSpec, ObjectSpec, ParamSetting, RobotSpec,  # noqa: E402
                                 ScenarioSpec, Settings, WorldSpec)
from coopsim.plugins.modules.camera3d import Camera3d  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402

from helpers import step_by_hand  # noqa: E402

RED = (200, 30, 30)
# the box's near face 1.8 m ahead of the camera (centre x 2, length 0.4), 0.6 m across, its
# centre at the camera's height
BOX = ObjectSpec("crate", "box", (0.4, 0.6, 0.6), (2.0, 0.0, 1.0), 0.0, 0.0, RED)


def _sim(seed=1, engine="mujoco", params=(), z=1.0):
    cam = (("width", 80), ("height", 60), ("fov", 60)) + tuple(params)
    robot = RobotSpec("crazyflie", "cf", (0.0, 0.0, z),
                      params=tuple(ParamSetting("camera3d", k, v) for k, v in cam))
    spec = ScenarioSpec(WorldSpec(FloorSpec(8.0, 8.0)), robots=(robot,), objects=(BOX,),
                        settings=Settings(dt=0.002, seed=seed, engine=engine), name="cam")
    return Simulation(spec)


def _red(rgb):
    """Where ``rgb`` shows the red box (the walls and floor are grey)."""
    return rgb[..., 0].astype(int) - rgb[..., 1].astype(int) > 40


def _read(sim, text="rgbd raw"):
    values = sim.world.robots[0].modules["camera3d"]
    reply, params, data = Camera3d.read_world(Camera3d.commands[0], sim, "cf", values, text)
    return decode(reply, params[1], params[2]), params, data


@pytest.fixture(scope="module")
def sim():
    return _sim()


@pytest.mark.slow
def test_a_box_in_front_appears_in_its_colour_at_its_distance(sim):
    images, params, data = _read(sim)
    rgb, depth = images["rgb"], images["depth"]
    assert params[1:] == (80, 60) and rgb.shape == (60, 80, 3) and depth.shape == (60, 80)
    assert data[1:5] == pytest.approx(intrinsics(80, 60, 60.0))
    r, g, b = rgb[30, 40].astype(int)
    assert r - max(g, b) > 60 and abs(g - b) <= 2  # red (lit: the headlight whitens it)
    assert depth[30, 40] == pytest.approx(1.8, abs=0.01)
    # its edges where the pinhole puts them: 0.3 m off the axis at 1.8 m
    fx = data[1]
    red = _red(rgb)[30]
    half = red.sum() / 2.0
    assert half == pytest.approx(0.3 / 1.8 * fx, abs=1.0)
    # above the box (it is 0.6 m tall) the far wall is further than the box
    assert depth[2, 40] > 2.0


@pytest.mark.slow
def test_png_carries_the_same_pixels_and_millimetre_depth(sim):
    raw, _, _ = _read(sim, "rgbd raw")
    png, _, _ = _read(sim, "rgbd png")
    assert np.array_equal(raw["rgb"], png["rgb"])
    near = np.isfinite(raw["depth"]) & (raw["depth"] < 60.0)
    assert np.abs(raw["depth"][near] - png["depth"][near]).max() <= 0.0005 + 1e-6


@pytest.mark.slow
def test_a_rolled_quadrotor_sees_the_box_rolled():
    level = _sim(params=(("pitch", 0.0),))
    rolled = _sim(params=(("pitch", 0.0),))
    import mujoco

    engine = rolled.world.engine
    engine.state3d()  # compiled; the crazyflie's free joint is the model's only joint
    half = np.radians(30.0) / 2.0  # 30 degrees about the body's x (forward)
    engine.data.qpos[3:7] = (np.cos(half), np.sin(half), 0.0, 0.0)
    mujoco.mj_forward(engine.model, engine.data)
    engine._moved += 1  # the state it caches is read again
    assert engine.state3d()[0, 4] == pytest.approx(np.sin(half))
    flat = _read(level, "rgb")[0]["rgb"]
    tilted = _read(rolled, "rgb")[0]["rgb"]
    assert not np.array_equal(flat, tilted)

    def slope(rgb):  # of the floor's far edge, rows per column: the top of the darker grey
        # run (the floor, lit at a grazing angle: 89/255 against the walls' 135) that reaches
        # the image's bottom
        floor = (rgb.sum(axis=2) < 330) & (np.ptp(rgb.astype(int), axis=2) < 10)
        cols, edge = [], []
        for c in range(rgb.shape[1]):
            light = np.nonzero(~floor[:, c])[0]
            if len(light) and floor[-1, c]:
                cols.append(c)
                edge.append(light[-1] + 1)
        return np.polyfit(cols, edge, 1)[0]
    assert abs(slope(flat)) < 0.05
    # rolled by 30 degrees about its optical axis, the horizon in its image turns by 30
    assert np.degrees(np.arctan(abs(slope(tilted)))) == pytest.approx(30.0, abs=4.0)


@pytest.mark.slow
def test_the_same_seed_gives_the_same_noisy_image():
    noise = (("noise", 8.0), ("depth_noise", 0.01))
    one, two, other = _sim(1, params=noise), _sim(1, params=noise), _sim(2, params=noise)
    a, b, c = (_read(s)[0] for s in (one, two, other))
    assert np.array_equal(a["rgb"], b["rgb"]) and np.array_equal(a["depth"], b["depth"])
    assert not np.array_equal(a["rgb"], c["rgb"])
    assert np.array_equal(a["rgb"], _read(one)[0]["rgb"])  # read again: the same step


@pytest.mark.parametrize("name, value", [("width", 0), ("width", 100000), ("height", 100000),
                                         ("fov", 0.0), ("fov", 180.0), ("near", 0.0)])
def test_absurd_parameters_are_refused(sim, name, value):
    values = sim.world.robots[0].modules["camera3d"]
    before = values[name]
    with pytest.raises(ParameterError):
        values.set(name, value)
    assert values[name] == before


def test_a_scenario_line_with_an_absurd_resolution_names_its_line(tmp_path):
    path = tmp_path / "bad.scenario"
    world = Path(__file__).resolve().parents[2] / "worlds" / "flight.world"
    path.write_text(f"[WORLD]\nfile {world}\n\n[ROBOT_1]\ntype crazyflie\nname cf\n"
                    "position 0 0 1\nparam camera3d.width 100000\n\n[SETTINGS]\n"
                    "engine mujoco\n")
    with pytest.raises(FileFormatError) as err:
        load_scenario(path)
    assert "bad.scenario:8" in str(err.value) and "4096" in str(err.value)


def test_an_engine_without_a_renderer_refuses_with_error_4():
    sim = _sim(engine="aerial")
    with pytest.raises(ParameterError, match="engine mujoco"):
        _read(sim)


@pytest.mark.slow
def test_a_camera_nobody_reads_renders_nothing_and_a_published_one_renders_at_its_rate():
    quiet = _sim()
    step_by_hand(quiet, 20)
    assert quiet.world.engine._renderer is None  # no render process was ever started
    assert "camera3d" not in quiet.snapshot.extra
    assert "camera3d" not in [entry[0] for entry in quiet.plan().sensing]  # not even a call
    loud = _sim(params=(("publish", 1), ("rate", 100.0)))  # every 5th step at dt 0.002
    steps = []
    for _ in range(21):
        step_by_hand(loud, 1)
        board = loud.snapshot.extra.get("camera3d")
        steps.append(board.seen["cf"].step if board is not None else None)
    # rendered at once, then every 5th step, each published at the next (rendered meanwhile
    # in the render process): one period late, stamped with the step it shows
    assert steps == [None] * 4 + [0] * 5 + [5] * 5 + [10] * 5 + [15] * 2
    assert loud.snapshot.reading("cf", "camera3d")[0] == 15.0  # its latest image's step
    image = loud.snapshot.extra["camera3d"].seen["cf"]
    assert image.rgb.shape == (60, 80, 3) and image.depth.shape == (60, 80)
    assert not image.rgb.flags.writeable


def test_a_renderer_that_cannot_start_says_what_is_missing_in_one_sentence(monkeypatch):
    from coopsim.physics.mujoco.camera import context_class

    monkeypatch.setenv("MUJOCO_GL", "vulkan")
    with pytest.raises(SimulationError) as err:
        context_class()
    assert str(err.value).count(". ") == 0 and "egl, osmesa" in str(err.value)
