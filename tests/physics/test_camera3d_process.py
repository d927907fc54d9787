"""``camera3d`` rendered in the run's render process (coopsim/physics/mujoco/renderproc.py):
a camera does not see its own robot while another robot's camera does; an in-process driver's
``bot.camera3d.read()`` gives the image as numpy; a render process that dies is said in one
sentence, the run goes on and the next image starts a new one, also from a process whose
PyOpenGL is bound to GLX (a viewer's); published images are the same bits for the same seed."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.model.errors import SimulationError  # noqa: E402
from coopsim.client.images import ImageReading  # noqa: E402
from coopsim.model.images import intrinsics  # noqa: E402
from coopsim.model.specs import (FloorSpec, ObjectSpec, ParamSetting, RobotSpec,  # noqa: E402
                                 ScenarioSpec, Settings, WorldSpec)
from coopsim.sim.drivers import LocalRobot  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402

from helpers import step_by_hand  # noqa: E402

# the box's near face 2 m ahead of cf's camera (mounted 0.2 m behind cf's centre)
BOX = ObjectSpec("crate", "box", (0.4, 0.6, 0.6), (2.0, 0.0, 1.0), 0.0, 0.0, (200, 30, 30))

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _cam(**extra):
    values = {"width": 40, "height": 30, "fov": 40, **extra}
    return tuple(ParamSetting("camera3d", k, v) for k, v in values.items())


@pytest.fixture(scope="module")
def sim():
    """cf with its camera behind its own body, looking through it at the box; peer 1 m
    behind cf, its camera looking at cf; a third publishing at 100 Hz (dt 0.002)."""
    robots = (RobotSpec("crazyflie", "cf", (0.0, 0.0, 1.0), params=_cam(x=-0.2)),
              RobotSpec("crazyflie", "peer", (-1.0, 0.0, 1.0), params=_cam()),
              RobotSpec("crazyflie", "pub", (0.0, 2.0, 1.0),
                        params=_cam(publish=1, rate=100.0)))
    spec = ScenarioSpec(WorldSpec(FloorSpec(8.0, 8.0)), robots=robots, objects=(BOX,),
                        settings=Settings(dt=0.002, seed=1, engine="mujoco"), name="cam")
    return Simulation(spec)


def _depth(sim, robot):
    return LocalRobot(sim, robot).camera3d.read("depth")


def test_a_camera_does_not_see_its_own_robot_but_another_robots_camera_does(sim):
    mine = _depth(sim, "cf")
    # through its own body (0.2 m ahead, 0.09 m across) to the box's face 2 m ahead
    assert mine[15, 20] == pytest.approx(2.0, abs=0.01)
    theirs = _depth(sim, "peer")
    # cf's body 1 m ahead of peer's camera, nearer than the box behind it (3 m)
    assert 0.9 < theirs[15, 20] < 1.0


def test_an_in_process_drivers_read_gives_the_image_as_numpy(sim):
    image = LocalRobot(sim, "cf").camera3d.read("rgbd")
    assert isinstance(image, ImageReading) and image.shape == (30, 40, 3)  # the client's class
    assert image.dtype == np.uint8 and np.array_equal(image, image.rgb)
    r, g, b = image[15, 20].astype(int)
    assert r - max(g, b) > 60  # the red box, through its own body
    assert image.depth.shape == (30, 40) and image.depth.dtype == np.float32
    assert image.step == sim.snapshot.step and image.time == sim.snapshot.time
    assert image.k == pytest.approx(intrinsics(40, 30, 40.0))
    assert (image.near, image.far) == (0.01, 50.0)
    only = LocalRobot(sim, "cf").camera3d.read("depth")
    assert only.rgb is None and np.array_equal(only, image.depth)


def test_a_render_process_that_dies_is_said_and_the_next_image_starts_a_new_one(
        sim, caplog, monkeypatch):
    renderer = sim.world.engine._renderer
    _depth(sim, "cf")
    renderer._proc.kill()
    renderer._proc.wait()
    with pytest.raises(SimulationError) as err:
        _depth(sim, "cf")
    assert "render process died (killed by signal 9)" in str(err.value)
    assert str(err.value).count(". ") == 0
    # the new process is started from a process whose PyOpenGL is GLX (a pyglet viewer's):
    # the run's process never renders, so it does not matter
    monkeypatch.setenv("PYOPENGL_PLATFORM", "glx")
    assert _depth(sim, "cf")[15, 20] == pytest.approx(2.0, abs=0.01)  # a new process
    step_by_hand(sim, 1)  # the published camera queues an image
    renderer._proc.kill()
    step_by_hand(sim, 12)  # its next due steps: the run goes on, saying why once
    assert "render process died" in caplog.text
    assert sim.snapshot.extra["camera3d"].seen["pub"].step > 1  # published again since


def test_published_images_are_bit_identical_for_the_same_seed():
    def run(seed):
        robot = RobotSpec("crazyflie", "pub", (0.0, 0.0, 1.0),
                          params=_cam(publish=1, rate=100.0, noise=8.0, depth_noise=0.01))
        spec = ScenarioSpec(WorldSpec(FloorSpec(8.0, 8.0)), robots=(robot,), objects=(BOX,),
                            settings=Settings(dt=0.002, seed=seed, engine="mujoco"), name="c")
        sim = Simulation(spec)
        shots = []
        for _ in range(11):  # rendered beside the steps, published one period later
            step_by_hand(sim, 1)
            board = sim.snapshot.extra.get("camera3d")
            shots.append(board.seen["pub"] if board is not None else None)
        return [s for s in shots if s is not None]
    one, two, other = run(1), run(1), run(2)
    assert [s.step for s in one] == [0] * 5 + [5] * 2
    for a, b in zip(one, two):
        assert np.array_equal(a.rgb, b.rgb) and np.array_equal(a.depth, b.depth)
    assert not np.array_equal(one[-1].rgb, other[-1].rgb)


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended and been reaped (no zombie left)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "X"
    except FileNotFoundError:
        return True


def _publishing(engine: str = "mujoco", seed: int = 1) -> ScenarioSpec:
    robot = RobotSpec("crazyflie", "pub", (0.0, 0.0, 1.0), params=_cam(publish=1, rate=100.0))
    return ScenarioSpec(WorldSpec(FloorSpec(8.0, 8.0)), robots=(robot,), objects=(BOX,),
                        settings=Settings(dt=0.002, seed=seed, engine=engine), name="c")


def test_close_ends_the_render_process_at_once_and_a_later_image_starts_a_new_one():
    sim = Simulation(_publishing())
    step_by_hand(sim, 6)
    first = sim.world.engine.render_pid()
    assert first is not None and not _gone(first)
    sim.close()  # returns once the process is reaped: nothing waits for the collector
    assert _gone(first) and sim.world.engine.render_pid() is None
    sim.close()  # twice is harmless
    assert _depth(sim, "pub").shape == (30, 40)  # the run goes on: a new process renders
    second = sim.world.engine.render_pid()
    assert second not in (None, first) and not _gone(second)
    sim.close()
    assert _gone(second)


def test_a_gymnasium_envs_close_ends_its_render_process():
    """A closed environment kept by its caller (a notebook's) holds no render process."""
    from coopsim.env import flight
    from coopsim.env.gym import CoopsimEnv

    flight.make().close()  # registers the adapter a learner drives a Crazyflie's rotors by
    env = CoopsimEnv(_publishing(), robot="pub", observe=("mocap",))
    env.reset(seed=0)
    for _ in range(6):
        env.step(env.action_space.sample())
    pid = env.episode.sim.world.engine.render_pid()
    assert pid is not None and not _gone(pid)
    env.close()
    assert _gone(pid)
