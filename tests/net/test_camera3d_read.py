"""``camera3d`` reads over the wire: the five-field reply through a robot server's real socket
(header in params and data, the pixels base64 in the text, over the 64 KiB that bounds only
requests), the Python client's ``bot.camera3d.read()`` as a numpy array, bad words answered
with error 4, and a camera on an engine without a renderer answered with error 4."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.client import Client, RemoteError  # noqa: E402
from coopsim.model.images import decode  # noqa: E402
from coopsim.model.specs import (FloorSpec, ObjectSpec, ParamSetting, RobotSpec,  # noqa: E402
                                 ScenarioSpec, Settings, WorldSpec)

from nethelpers import Peer, live, lookup  # noqa: E402

BOX = ObjectSpec("crate", "box", (0.4, 0.6, 0.6), (2.0, 0.0, 1.0), 0.0, 0.0, (40, 200, 40))


def _world(engine="mujoco"):
    params = tuple(ParamSetting("camera3d", k, v) for k, v in (("width", 640), ("height", 480)))
    robot = RobotSpec("crazyflie", "cf", (0.0, 0.0, 1.0), params=params)
    return ScenarioSpec(WorldSpec(FloorSpec(8.0, 8.0)), robots=(robot,), objects=(BOX,),
                        settings=Settings(dt=0.002, seed=3, engine=engine, mode="lockstep"),
                        name="cam")


@pytest.fixture(scope="module")
def run():
    with live(_world(), paused=True) as run:
        yield run


def test_a_640x480_rgbd_read_through_the_robot_server(run):
    peer = Peer(lookup(run.network.endpoint, "/cf/camera3d"))
    try:
        error, text, command, params, data = peer.ok(5000, "rgbd raw")
        assert (error, command) == (0, 5000) and params[1:] == [640, 480]
        assert len(text) > 4 * 65536  # replies are not held to the requests' 64 KiB
        assert data[5:] == [0.01, 50.0]
        images = decode(text, 640, 480)
        r, g, b = images["rgb"][240, 320].astype(int)
        assert g - max(r, b) > 60  # the green box ahead
        assert images["depth"][240, 320] == pytest.approx(1.8, abs=0.01)
        refused = peer.ask(5000, "infrared")
        assert refused[0] == 4 and "[rgb|depth|rgbd] [raw|png]" in refused[1]
    finally:
        peer.close()


def test_the_python_client_returns_a_numpy_image(run):
    with Client(run.network.endpoint, timeout=10.0) as client:
        bot = client.robot("cf")
        image = bot.camera3d.read()
        assert isinstance(image, np.ndarray) and image.shape == (480, 640, 3)
        assert image.dtype == np.uint8 and image.depth is None and image.step == 0
        assert image.k[0] == pytest.approx(240.0 / np.tan(np.radians(30.0)))
        depth = bot.camera3d.read("depth png")
        assert depth.shape == (480, 640) and depth.rgb is None
        assert depth[240, 320] == pytest.approx(1.8, abs=0.01)
        with pytest.raises(RemoteError) as err:
            bot.camera3d.read("rgb jpeg")
        assert err.value.code == 4


def test_an_engine_without_a_renderer_answers_error_4():
    with live(_world("aerial"), paused=True) as run:
        peer = Peer(lookup(run.network.endpoint, "/cf/camera3d"))
        try:
            refused = peer.ask(5000)
            assert refused[0] == 4 and "engine mujoco" in refused[1]
        finally:
            peer.close()
