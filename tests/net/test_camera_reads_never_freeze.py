"""A camera read never freezes the world (design.md section 12).

In real time the hub lends its socket to its reading thread during long steps. A ``camera3d``
read served there queued its render to the stepper and waited for it holding the hub's serve
lock, while the stepper, its step done, waited for that lock: both waited out the 5 s call
timeout and the read got error 9. Here every step is lent (``lend_min`` 0, as a long step's
would be), four real ZeroMQ clients in threads read 160x120 images as fast as they can beside a
camera that publishes at 30 Hz, and the run is a real ``mujoco`` one: every read is answered
(never error 9) and the simulated time goes on while they read. The images' budgets (error
18, protocol 12) are checked on the same run.
"""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("mujoco")

from coopsim.model.specs import (FloorSpec, ObjectSpec, ParamSetting, RobotSpec,  # noqa: E402
                                 ScenarioSpec, Settings, WorldSpec)
from coopsim.plugins.modules.camera3d import Camera3d  # noqa: E402

from nethelpers import Peer, live, lookup, wait_until  # noqa: E402

WAIT = 60.0  # s a reply may take on a loaded machine (a bound on failure, never reached)
READERS, READS = 4, 12
BOX = ObjectSpec("crate", "box", (0.4, 0.6, 0.6), (2.0, 0.0, 1.0), 0.0, 0.0, (40, 200, 40))


def _world():
    published = tuple(ParamSetting("camera3d", k, v) for k, v in (("publish", 1), ("rate", 30)))
    robots = (RobotSpec("crazyflie", "cf", (0.0, 0.0, 0.5)),
              RobotSpec("crazyflie", "pub", (0.0, 1.0, 0.5), params=published))
    return ScenarioSpec(WorldSpec(FloorSpec(8.0, 8.0)), robots=robots, objects=(BOX,),
                        settings=Settings(dt=0.002, seed=3, engine="mujoco", mode="realtime"),
                        name="cams")


def _reader(endpoint: str, text: str, out: list, failed: list) -> None:
    """Read ``READS`` images into ``out``; what stops the thread goes into ``failed`` with its
    text (a thread's exception is otherwise only printed, and the test saw [0, 0, 0, 0])."""
    peer = Peer(endpoint)
    try:
        for _ in range(READS):
            reply = peer.ask(5000, text, timeout=WAIT)
            out.append((reply[0], reply[1] if reply[0] else "", reply[4][:1]))
    except BaseException as exc:  # noqa: BLE001 -- reported by the test, with its reads
        failed.append(f"reader {threading.current_thread().name} after {len(out)} reads: "
                      f"{type(exc).__name__}: {exc}")
    finally:
        peer.close()


@pytest.fixture(scope="module")
def run():
    with live(_world()) as run:
        hub = run.network.hub
        hub.reads.lend_min, hub.reads.quiet = 0.0, 3 * WAIT  # every step lent, as long ones
        # started before the readers (the start-up is not what is tested: under load the
        # first reads waited on it, at sim time 0)
        assert run.stepper.wait_step(0, 10 * WAIT) is not None, "the run never stepped"
        yield run


@pytest.mark.slow
def test_four_readers_beside_a_published_camera_get_every_image_and_the_world_steps(run):
    endpoint = lookup(run.network.endpoint, "/cf/camera3d")
    start = run.stepper.snapshot.time
    results: list[list] = [[] for _ in range(READERS)]
    failed: list[str] = []
    threads = [threading.Thread(target=_reader, args=(endpoint, "rgb raw", out, failed))
               for out in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(READS * WAIT)  # a bound on failure: each read fails after WAIT s itself
    why = (failed, [t.name for t in threads if t.is_alive()], run.stepper.snapshot.time)
    assert not why[0] and not why[1], ("readers failed or hung; sim time now", why)
    errors = [(code, text) for out in results for code, text, _ in out if code]
    assert errors == [], errors  # never error 9 (the read and the stepper waiting on each other)
    assert [len(out) for out in results] == [READS] * READERS
    for out in results:  # each reader saw the world go on between its reads
        times = [data[0] for _, _, data in out]
        assert times == sorted(times) and times[-1] > times[0], times
    assert run.stepper.snapshot.time > start
    board = wait_until(lambda: run.stepper.snapshot.extra.get("camera3d"))
    assert "pub" in board.seen  # the published camera went on publishing


@pytest.mark.slow
def test_a_read_over_the_per_read_budget_is_refused_with_error_18(run):
    hub = run.network.hub
    peer = Peer(lookup(run.network.endpoint, "/cf/camera3d"))
    try:
        values = hub.ports["cf"].modules["camera3d"]
        size, what = Camera3d.read_bytes(values, "rgbd")
        hub.images.read_bytes = size - 1  # the budget one byte short of a 160x120 rgbd
        refused = peer.ask(5000, "rgbd raw", timeout=WAIT)
        assert refused[0] == 18 and "over budget" in refused[1], refused
        assert f"{what} is {size} bytes of pixels, a read may take at most {size - 1}" \
            in refused[1] and what == "a 160x120 rgbd image" and size == 160 * 120 * 7
        assert peer.ask(5000, "rgb raw", timeout=WAIT)[0] == 0  # 3 of its 7 bytes a pixel
    finally:
        hub.images.read_bytes = type(hub.images)().read_bytes
        peer.close()


@pytest.mark.slow
def test_reads_over_a_connections_budget_in_flight_are_refused_and_memory_freed(run):
    """A DEALER pipelining reads: the ones past its budget of bytes in flight get 18 at once;
    the others are answered; nothing stays counted in flight afterwards."""
    import zmq

    hub = run.network.hub
    size, _ = Camera3d.read_bytes(hub.ports["cf"].modules["camera3d"], "rgb")
    peer = Peer(lookup(run.network.endpoint, "/cf/camera3d"), kind=zmq.DEALER, delimiter=True)
    hub.images.client_bytes = 2 * size  # two 160x120 rgb images in flight at most
    try:
        import msgpack
        for _ in range(6):
            peer.send_frames([msgpack.packb([0, "rgb raw", 5000, [], []])])
        codes = sorted(peer.receive(timeout=WAIT)[0] for _ in range(6))
        assert 0 in codes and set(codes) <= {0, 18}, codes  # 18 for those found in flight
        wait_until(lambda: hub.images.in_flight() == 0 and not hub.images.pending)
    finally:
        hub.images.client_bytes = type(hub.images)().client_bytes
        peer.close()


@pytest.mark.slow
def test_a_large_reads_memory_is_given_back_once_answered(run):
    """A 2048 x 1536 RGB-D read (22 MB of pixels, within the budgets) is answered; then the
    render memory it needed (shared with the render process) is released, structurally: the
    engine maps none until the next image."""
    from coopsim.client import Client
    from coopsim.model.images import KEEP_BYTES

    engine = run.stepper.sim.world.engine
    with Client(run.network.endpoint, timeout=WAIT) as client:
        bot = client.robot("cf")
        bot.set_param("camera3d", "width", 2048)
        bot.set_param("camera3d", "height", 1536)
        try:
            image = bot.camera3d.read("rgbd")
            assert image.shape == (1536, 2048, 3) and image.depth.shape == (1536, 2048)
            wait_until(lambda: engine.render_memory() <= KEEP_BYTES, WAIT)
            small = bot.camera3d.read("rgb")  # and the next image renders as before
        finally:
            bot.set_param("camera3d", "width", 160)
            bot.set_param("camera3d", "height", 120)
        assert small.shape == (1536, 2048, 3)
        assert bot.camera3d.read("rgb").shape == (120, 160, 3)


def test_the_budgets_of_reads_in_flight_per_connection_and_in_all():
    from coopsim.net.imagereads import ImageReads
    from coopsim.model.errors import ProtocolError

    images = ImageReads(read_bytes=100, client_bytes=100, total_bytes=150)
    first = images.admit("a", 60)
    with pytest.raises(ProtocolError) as err:
        images.admit("a", 60)  # a's 120 bytes would be over its 100
    assert err.value.code == 18 and "this connection has 60 bytes" in err.value.text
    second = images.admit("b", 80)
    assert second != first
    with pytest.raises(ProtocolError) as err:
        images.admit("c", 20)  # 160 in all would be over 150
    assert err.value.code == 18 and "140 bytes of images are in flight" in err.value.text
    images.answered("a", 60, first)
    assert images.admit("c", 20) == first  # its slot is used again
    with pytest.raises(ProtocolError) as err:
        images.check(101, "an image")
    assert err.value.code == 18 and images.refused == 3


def test_every_read_the_lent_thread_may_serve_needs_nothing_of_the_world():
    """Every module's every command, as the reading thread classifies it: a read that needs
    the World (``read_world``: camera3d's) and every command that is no read are left to the
    stepper; snapshot reads and the generic read-only commands are served."""
    import msgpack

    from coopsim.model.plugins import MODULES
    from coopsim.net.hubreads import only_reads
    from coopsim.net.robotport import RobotPort

    for label in list(MODULES):
        port = RobotPort("r", {label: None}, stepper=None, endpoint="")
        for command in port.commands.values():
            payload = msgpack.packb([0, "", command.id, [], []])
            module = port.classes.get(command.module)
            snapshot_read = command.kind == "read" and not hasattr(module, "read_world")
            generic = command.name in ("hello", "modules", "commands")
            assert only_reads(port, payload) == (snapshot_read or generic), (label, command)
    camera = RobotPort("r", {"camera3d": None}, stepper=None, endpoint="")
    assert not only_reads(camera, msgpack.packb([0, "rgb", 5000, [], []]))
