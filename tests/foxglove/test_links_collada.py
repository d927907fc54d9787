"""A robot of COLLADA meshes in Foxglove's still scene: the Unitree Z1 of example-robot-data
(nine ``.dae`` visuals, 244,000 triangles as its files hold them), loaded in a live MuJoCo
world, has every link's mesh drawn as a TriangleListPrimitive of its file's triangles, none as
its bounds' box, within the scene's triangle budget (a mesh over 20,000 triangles is decimated
as ``/sim`` 27 serves it to the 3D view)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nethelpers import live

pytest.importorskip("mujoco")
pytest.importorskip("collada")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "robots"))
import robot_motion as rm  # noqa: E402

ROBOTS = rm.robots_folder()
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")]
CUBES, TRIANGLES = 8, 12  # foxglove.SceneEntity's fields


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return value, at


def _fields(data: bytes) -> list[tuple[int, bytes]]:
    """(field number, bytes) of each length-delimited field of one protobuf message (the
    others skipped): what the entity holds, read as Foxglove reads it."""
    out, at = [], 0
    while at < len(data):
        key, at = _varint(data, at)
        kind = key & 7
        if kind == 0:
            _, at = _varint(data, at)
        elif kind == 1:
            at += 8
        elif kind == 5:
            at += 4
        else:
            assert kind == 2, kind
            size, at = _varint(data, at)
            out.append((key >> 3, bytes(data[at:at + size])))
            at += size
    return out


def test_the_z1s_collada_links_are_their_triangles_in_foxglove(tmp_path):
    from coopsim.client import Client
    from coopsim.foxglove.links import link_entities
    from coopsim.formats.files import load

    (tmp_path / "w.world").write_text("[FLOOR]\nsize 4 4 0.1\n")
    (tmp_path / "s.scenario").write_text("\n".join([
        "[WORLD]", "file w.world", "[SETTINGS]", "engine mujoco", "dt 0.005",
        "mode lockstep", "seed 1", "[ROBOT_1]", "name z1",
        f"description {ROBOTS / 'z1_description/urdf/z1.urdf'}",
        f"search {ROBOTS.parent}", "base fixed", "position 0 0 0"]) + "\n")
    with live(load(str(tmp_path / "s.scenario")), paused=True) as run:
        with Client(run.network.endpoint, timeout=60.0) as client:
            layout = client.sim().state()
        entities = {}
        for entity in link_entities(layout):
            fields = _fields(bytes(entity.data))
            ident = next(v.decode() for k, v in fields if k == 3)
            entities[ident] = [k for k, _ in fields]
    robot = next(r for r in layout["robots"] if r["name"] == "z1")
    meshes = {link["name"]: [v["file"] for v in link["visuals"] if v["kind"] == "mesh"]
              for link in robot["links"]["links"]}
    assert sum(len(files) for files in meshes.values()) == 9
    assert all(f.endswith(".dae") for files in meshes.values() for f in files)
    for link, files in meshes.items():
        kinds = entities[f"link/z1/{link}"]
        assert kinds.count(TRIANGLES) == len(files), (link, files, kinds)
        assert CUBES not in kinds, f"{link}: a mesh drawn as its bounds' box"
