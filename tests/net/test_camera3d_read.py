"""``camera3d`` reads over the wire: the five-field reply through a robot server's real socket
(header in params and data, the pixels base64 in the text, over the 64 KiB that bounds only
requests), the Python client's ``bot.camera3d.read()`` as a numpy array, bad words answered
with error 4, and a camera on an engine without a renderer answered with error 4. Protocol 11:
the word ``frame`` puts the pixels raw in a second ZeroMQ frame, read by raw REQ and DEALER
sockets as docs/protocol.md says, by the Python client without a copy, by the C client
(clients/c/camera.c), and back as base64 through the JSON gateway."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import msgpack
import numpy as np
import pytest
import zmq

pytest.importorskip("mujoco")

from coopsim.client import Client, RemoteError  # noqa: E402
from coopsim.model.images import decode  # noqa: E402
from coopsim.net import protocol as p  # noqa: E402
from coopsim.net.gateway import Gateway  # noqa: E402
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


@pytest.mark.slow
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


@pytest.mark.slow
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


RGB, DEPTH = 640 * 480 * 3, 640 * 480 * 4  # bytes of a 640 x 480 rgb8 and 32FC1 image


def _raw(endpoint: str, kind: int, text: str) -> list[bytes]:
    """The frames of the reply to a camera read sent by a bare pyzmq ``kind`` socket."""
    sock = zmq.Context.instance().socket(kind)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    try:
        lead = [b""] if kind == zmq.DEALER else []  # a DEALER sends REQ's empty delimiter
        sock.send_multipart(lead + [msgpack.packb([0, text, 5000, [], []])])
        assert sock.poll(30_000), "no reply"
        frames = sock.recv_multipart()
        assert frames[:len(lead)] == lead
        return frames[len(lead):]
    finally:
        sock.close(0)


@pytest.mark.slow
def test_a_frame_read_carries_the_pixels_raw_in_a_second_zeromq_frame(run):
    """docs/protocol.md, *Camera images*, byte by byte, with nothing but pyzmq and msgpack."""
    endpoint = lookup(run.network.endpoint, "/cf/camera3d")
    inline, = _raw(endpoint, zmq.REQ, "rgbd raw")  # without the word: one frame, as before
    error, text, command, params, data = msgpack.unpackb(inline)
    images = decode(text, 640, 480)
    for kind in (zmq.REQ, zmq.DEALER):
        head, pixels = _raw(endpoint, kind, "rgbd raw frame")
        framed = msgpack.unpackb(head)
        assert framed[0:3:2] == [0, 5000] and framed[3:] == [params, data]
        assert framed[1] == f"rgb8 raw frame 0 {RGB}\n32FC1 raw frame {RGB} {DEPTH}"
        assert len(pixels) == RGB + DEPTH > p.MAX_FRAME_BYTES  # the cap is the server's inbound
        rgb = np.frombuffer(pixels, np.uint8, RGB).reshape(480, 640, 3)
        depth = np.frombuffer(pixels, "<f4", offset=RGB).reshape(480, 640)
        assert np.array_equal(rgb, images["rgb"]) and np.array_equal(depth, images["depth"])
    head, png = _raw(endpoint, zmq.REQ, "depth png frame")
    assert msgpack.unpackb(head)[1] == f"16UC1 png frame 0 {len(png)}"
    assert png.startswith(b"\x89PNG")
    refused = _raw(endpoint, zmq.REQ, "frame rgb")  # the word comes last
    assert len(refused) == 1 and msgpack.unpackb(refused[0])[0] == 4


def _owner(array: np.ndarray):
    """What holds an array's bytes: the end of its chain of bases."""
    while isinstance(array, np.ndarray):
        array = array.base
    return array


@pytest.mark.slow
def test_the_python_client_takes_the_frame_without_a_copy(run):
    with Client(run.network.endpoint, timeout=10.0) as client:
        bot = client.robot("cf")
        assert bot.image_frames  # the server speaks protocol 11
        framed = bot.camera3d.read("rgbd")
        for image in (framed.rgb, framed.depth):  # views of ZeroMQ's received frame
            assert isinstance(_owner(image), memoryview)
        bot.image_frames = False  # base64 in the text, as from a server of protocol 10
        inline = bot.camera3d.read("rgbd")
        assert isinstance(_owner(inline.rgb), bytes)  # decoded from base64
        assert np.array_equal(framed, inline) and np.array_equal(framed.depth, inline.depth)
        assert (framed.k, framed.near, framed.step) == (inline.k, inline.near, inline.step)
        assert client._socket(bot.endpoint).getsockopt(zmq.MAXMSGSIZE) == -1  # no cap


@pytest.mark.slow
def test_the_json_gateway_answers_a_frame_read_with_base64(run):
    gateway = Gateway(run.network.endpoint, timeout=30.0).start()
    try:
        with socket.create_connection(gateway.address, timeout=30.0) as sock:
            sock.sendall(json.dumps(["/cf/camera3d", 0, "rgb raw frame", 5000, [], []]).encode()
                         + b"\n")
            error, text, command, params, _ = json.loads(sock.makefile("rb").readline())
    finally:
        gateway.close()
    assert (error, command, params[1:]) == (0, 5000, [640, 480])
    assert text.startswith("rgb8 raw ") and " frame " not in text
    r, g, b = decode(text, 640, 480)["rgb"][240, 320].astype(int)
    assert g - max(r, b) > 60  # the green box ahead


@pytest.mark.slow
def test_the_c_client_reads_the_frame(run, tmp_path):
    """Another language: clients/c keeps a reply's second frame (coopsim_msg.frame)."""
    source = Path(__file__).resolve().parents[2] / "clients" / "c"
    if not (shutil.which("cc") and shutil.which("make")):
        pytest.skip("no cc / make")
    for f in source.iterdir():
        if f.suffix in (".c", ".h") or f.name == "Makefile":
            shutil.copy(f, tmp_path)
    built = subprocess.run(["make", "camera", "CFLAGS=-O2 -Werror"], cwd=tmp_path,
                           capture_output=True, text=True)
    if built.returncode and "zmq.h" in built.stderr + built.stdout:
        pytest.skip("libzmq3-dev / libmsgpuck-dev headers not installed")
    assert built.returncode == 0, built.stderr
    env = dict(os.environ, COOPSIM_NAMESERVER=run.network.endpoint)
    proc = subprocess.run([tmp_path / "camera", "cf"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    step, w, h, size, r, g, b, depth = proc.stdout.split()
    assert (w, h, int(size)) == ("640", "480", RGB + DEPTH)
    assert int(g) - max(int(r), int(b)) > 60 and float(depth) == pytest.approx(1.8, abs=0.01)


def test_an_engine_without_a_renderer_answers_error_4():
    with live(_world("aerial"), paused=True) as run:
        peer = Peer(lookup(run.network.endpoint, "/cf/camera3d"))
        try:
            refused = peer.ask(5000)
            assert refused[0] == 4 and "engine mujoco" in refused[1]
        finally:
            peer.close()
