"""``/sim`` 27 ``mesh`` reads a mesh file by the rules of every file the server reads: a robot's
mesh swapped for a FIFO after the load is refused at once (it held all of
``/sim``, status too, until a writer came), and a 1 GiB sparse file in a world mesh's place is
refused unread (it was read whole: RSS +2 GB). Real files, a real FIFO, a live run over real
sockets."""

from __future__ import annotations

import os

import pytest

from coopsim.model.scenerydoc import MESH_FILE_BYTES, read_mesh_file

from nethelpers import ROOT, live
from scenery_helpers import scenario_text, write_stl, write_world

WAIT = 30.0  # s: a bound on failure (today's FIFO blocked until a writer came)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from coopsim.formats.files import load

    folder = tmp_path_factory.mktemp("meshfiles")
    write_world(folder)
    urdf = (ROOT / "tests" / "data" / "descriptions" / "tiny_arm.urdf").read_text()
    write_stl(folder / "fore.stl", (-0.02, -0.02, 0.0), (0.02, 0.02, 0.2))
    (folder / "arm.urdf").write_text(urdf.replace(
        '<box size="0.04 0.04 0.2"/>', '<mesh filename="fore.stl"/>'))
    (folder / "s.scenario").write_text(scenario_text(
        "[ROBOT_1]\ndescription arm.urdf\nname m1\nposition -3 -3 0\n"))
    with live(load(folder / "s.scenario"), paused=True) as running:
        yield running, folder


def test_a_mesh_swapped_for_a_fifo_is_refused_at_once_and_sim_keeps_answering(run):
    from coopsim.client.connection import Client
    from coopsim.model.errors import CoopsimError

    running, folder = run
    (folder / "fore.stl").unlink()
    os.mkfifo(folder / "fore.stl")
    with Client(running.network.endpoint, timeout=WAIT) as client:
        sim = client.sim()
        with pytest.raises(CoopsimError) as err:
            sim.call(27, "m1 fore.stl")
        assert err.value.code == 8 and "not a regular file" in str(err.value)
        assert sim.status()["robots"] == 1


def test_a_sparse_gigabyte_in_a_mesh_s_place_is_refused_unread(run):
    from coopsim.client.connection import Client
    from coopsim.model.errors import CoopsimError

    running, folder = run
    wall = folder / "wall.stl"
    with open(wall, "r+b") as fh:
        fh.truncate(1 << 30)  # a hole: no block of it is written
    with Client(running.network.endpoint, timeout=WAIT) as client:
        sim = client.sim()
        with pytest.raises(CoopsimError) as err:
            sim.call(27, "MESH_1")
        assert err.value.code == 8 and f"over {MESH_FILE_BYTES}" in str(err.value)
        assert sim.status()["robots"] == 1


def test_the_reader_refuses_before_reading(tmp_path):
    """Structurally: the size is checked on the open file, before one byte is read."""
    big = tmp_path / "big.stl"
    with open(big, "wb") as fh:
        fh.truncate(MESH_FILE_BYTES + 1)
    with pytest.raises(OSError, match="too large"):
        read_mesh_file(str(big))
    with pytest.raises(OSError, match="not a regular file"):
        read_mesh_file(str(tmp_path))
    small = tmp_path / "small.stl"
    small.write_bytes(b"solid x\nendsolid x\n")
    assert read_mesh_file(str(small)) == b"solid x\nendsolid x\n"


def test_the_bound_is_the_loads_bound():
    from coopsim.description.meshes import MAX_MESH_BYTES

    assert MESH_FILE_BYTES == MAX_MESH_BYTES
