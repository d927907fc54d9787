"""``/sim load`` of maps: a map that would make too many walls is
refused with its count and the limit, a map image that is a FIFO is refused without blocking,
and /sim goes on answering while a large legal map loads."""

from __future__ import annotations

import os
import sys
import threading

import msgpack
import numpy as np
import pytest
import zmq


from coopsim.net import protocol as p

from nethelpers import ROOT, Peer, live, lookup
from helpers import robot, scenario, unblock_fifo

sys.path.insert(0, str(ROOT / "worlds" / "maps"))
from make_maps import write_png  # noqa: E402 -- the shipped maps' own writer

LOAD = 22
MAX_WALLS = 20_000  # the limit docs/reliability.md states (coopsim.formats.maps.MAX_WALLS)


def _checkerboard(path, side: int, cell: int) -> None:
    """A PNG of side x side pixels, black and white squares of cell x cell pixels: (side /
    cell)^2 / 2 walls."""
    i = np.indices((side, side)) // cell
    write_png(path, np.where((i[0] + i[1]) % 2 == 0, 0, 254).astype(np.uint8))


def _scenario_with_map(folder, name: str, map_name: str):
    (folder / "w.world").write_text("[FLOOR]\nsize 20 20 0.1\n")
    path = folder / name
    path.write_text(f"[WORLD]\nfile w.world\nmap {map_name}\n"
                    "[ROBOT_1]\ntype single\nname a\nposition 0.25 0.25 0\n")
    return path


@pytest.fixture()
def data(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    return folder


@pytest.fixture()
def sim(data):
    with live(scenario(robots=[robot("r1")]), paused=True, data_dirs=(str(data),)) as run:
        peer = Peer(lookup(run.network.endpoint, "/sim"))
        yield peer
        peer.close()


def test_a_map_making_too_many_walls_is_refused_with_its_count(sim, data):
    _checkerboard(data / "board.png", 1000, 1)  # 500,000 walls: seconds and 400 MB on main
    path = _scenario_with_map(data, "board.scenario", "board.png")
    error, text, command, *_ = sim.ask(LOAD, str(path))
    assert (error, command) == (p.FAILED, LOAD), text
    assert text == f"{path}:3: map makes 500000 walls, at most {MAX_WALLS} (merge its " \
                   "occupied pixels into larger areas, or lower its resolution)"
    assert sim.ok(23)[0] == 0  # the run is as it was, and /sim answers


def test_a_map_image_that_is_a_fifo_is_refused_at_once(sim, data):
    os.mkfifo(data / "pipe.pgm")
    (data / "pipe.yaml").write_text("image: pipe.pgm\nresolution: 0.05\norigin: [-5, -5, 0]\n")
    path = _scenario_with_map(data, "pipe.scenario", "pipe.yaml")
    done = threading.Event()
    threading.Thread(target=unblock_fifo, args=(data / "pipe.pgm", done, 20.0),
                     daemon=True).start()
    try:
        error, text, command, *_ = sim.ask(LOAD, str(path))
    finally:
        done.set()
    assert (error, command) == (p.FAILED, LOAD), text
    assert text.endswith("cannot be read: not a regular file (a FIFO, device or socket)")
    assert text.startswith(f"{path}:3: map image ")



def test_sim_answers_while_a_large_legal_map_loads(sim, data):
    """The load is asked on a socket of its own; /sim's status and state answer on another
    before the load's reply comes (on main the /sim thread read and built the map itself, so
    nothing was answered until the load was done)."""
    _checkerboard(data / "big.png", 400, 4)  # 5,000 walls: seconds to build
    path = _scenario_with_map(data, "big.scenario", "big.png")
    loader = Peer(sim.endpoint, zmq.DEALER, delimiter=True)
    try:
        loader.send_frames([msgpack.packb([0, str(path), LOAD, [], []])])
        assert sim.ok(1)[0] == 0  # status
        assert sim.ok(23)[0] == 0  # state
        assert not loader.sock.poll(0), "the load answered before /sim did: it blocked /sim"
        assert loader.ask(LOAD, str(path))[:3] == [p.NOT_ALLOWED, "another load is under way: "
                                                   "wait for its reply", LOAD]
        reply = loader.receive()  # the first load's, when its world is in place
        assert reply[0] == 0 and reply[2] == LOAD, reply
    finally:
        loader.close()
    objects = sim.ok(11)[3][0]
    assert objects == 5000
