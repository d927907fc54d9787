"""A ``[WORLD]`` with a ROS map_server YAML and no world file takes its floor from the map's
extent (the smallest floor centred on the origin holding the whole map), as map_server users
expect; an image alone, or neither key, is a ``file:line`` error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coopsim.formats.files import load_scenario
from coopsim.model.errors import FileFormatError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "worlds" / "maps"))
from make_maps import write_pgm  # noqa: E402 -- the shipped maps' own writer


def _map_only(tmp_path, origin="[-1.0, -0.5, 0.0]", world="map m.yaml") -> Path:
    grey = np.full((20, 40), 254, np.uint8)  # 40 x 20 pixels of 0.05 m: 2 x 1 m
    grey[0, :] = 0
    write_pgm(tmp_path / "m.pgm", grey)
    (tmp_path / "m.yaml").write_text(f"image: m.pgm\nresolution: 0.05\norigin: {origin}\n")
    path = tmp_path / "s.scenario"
    path.write_text(f"[WORLD]\n{world}\n[ROBOT_1]\ntype single\nname r\nposition 0 0 0\n")
    return path


def test_a_map_centred_on_the_origin_is_the_floor(tmp_path):
    spec = load_scenario(_map_only(tmp_path))
    floor = spec.world.floor
    assert (floor.length, floor.width) == pytest.approx((2.0, 1.0))
    assert [w.name for w in spec.world.objects] == ["MAP_1"]  # the map's walls, as with a file


def test_a_map_off_centre_gets_the_smallest_centred_floor_holding_it(tmp_path):
    floor = load_scenario(_map_only(tmp_path, origin="[-0.5, -0.25, 0.0]")).world.floor
    assert (floor.length, floor.width) == pytest.approx((3.0, 1.5))  # x to 1.5, y to 0.75


def test_the_shipped_office_map_alone_is_its_worlds_floor(tmp_path):
    path = tmp_path / "office.scenario"
    path.write_text(f"[WORLD]\nmap {ROOT / 'worlds' / 'maps' / 'office.yaml'}\n"
                    "[ROBOT_1]\ntype single\nname r\nposition 0 0 0\n")
    alone, with_file = load_scenario(path), load_scenario(ROOT / "scenarios" / "office.scenario")
    assert alone.world.floor == with_file.world.floor
    assert alone.world.objects == with_file.world.objects


@pytest.mark.parametrize("world, line, reason", [
    ("map m.pgm", 2, "a map image alone has no size in metres"),
    ("# nothing", 1, "[WORLD] is missing the required key 'file' (a .world file; or 'map'"),
])
@pytest.mark.slow
def test_an_image_alone_or_an_empty_world_is_a_file_line_error(tmp_path, world, line, reason):
    path = _map_only(tmp_path, world=world)
    with pytest.raises(FileFormatError) as caught:
        load_scenario(path)
    assert caught.value.line == line and reason in str(caught.value)
    done = subprocess.run([sys.executable, "-m", "coopsim", "check", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and f"{path}:{line}:" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
