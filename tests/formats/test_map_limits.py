"""Maps bounded by what they make: a map that would make more than
MAX_WALLS walls is refused at its ``map`` line with the count and the limit, fast and small
(counted block by block before any wall is built); the vectorised merge makes the rectangles
the row-by-row merge made; a map file or image that is a FIFO is refused, never opened for a
blocking read."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from coopsim.formats import maps
from helpers import unblock_fifo

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "worlds" / "maps"))
from make_maps import write_png  # noqa: E402 -- the shipped maps' own writer

MAX_WALLS = 20_000  # the limit docs/reliability.md states


def _scenario(folder: Path, map_name: str) -> Path:
    (folder / "w.world").write_text("[FLOOR]\nsize 40 40 0.1\n")
    path = folder / "s.scenario"
    path.write_text(f"[WORLD]\nfile w.world\nmap {map_name}\n"
                    "[ROBOT_1]\ntype single\nname r\nposition 0.05 0.05 0\n")
    return path


def _check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coopsim", "check", str(path)],
                          capture_output=True, text=True, cwd=path.parent)


@pytest.mark.slow
@pytest.mark.parametrize("side, walls", [(1000, 500_000), (4000, 8_000_000)])
def test_check_refuses_a_checkerboard_with_its_wall_count_exit_2(tmp_path, side, walls):
    """The issue's probe: a 4,000 x 4,000 checkerboard PNG of a few KB ran `check` over 60 s
    at 2.2 GB on main; a 1,000 x 1,000 one made 500,000 walls."""
    i = np.indices((side, side))
    write_png(tmp_path / "board.png", np.where((i[0] + i[1]) % 2 == 0, 0, 254).astype(np.uint8))
    done = _check(_scenario(tmp_path, "board.png"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"s.scenario:3: map makes {walls} walls, at most {MAX_WALLS} " in done.stderr
    assert "Traceback" not in done.stderr


def test_the_limit_is_on_walls_not_pixels(tmp_path):
    """A large map of few walls loads; one wall over the limit is refused."""
    occ = np.zeros((300, 2 * (MAX_WALLS + 1)), bool)
    occ[100:200, ::2] = True  # MAX_WALLS + 1 thin walls
    with pytest.raises(maps.MapError, match=f"map makes {MAX_WALLS + 1} walls, at most "):
        maps.walls(occ, 0.01, 0.01, 0.0, 0.0)
    occ[100:200, -2] = False
    assert len(maps.walls(occ, 0.01, 0.01, 0.0, 0.0)) == MAX_WALLS


@pytest.mark.parametrize("seed", range(6))
def test_counting_and_the_vectorised_merge_agree_with_the_row_merge(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        rows, cols = rng.integers(1, 40, 2)
        occ = rng.random((rows, cols)) < rng.random()
        if rng.random() < 0.5:  # repeated rows, as maps have
            occ = np.repeat(occ[:max(1, rows // 5)], 5, axis=0)
        rects = maps.rectangles(occ)
        assert rects == _row_merge(occ)
        monkeypatch.setattr(maps, "_BLOCK_PIXELS", int(rng.integers(1, 200)))
        assert maps.count_walls(occ) == len(rects)


def _row_merge(occ: np.ndarray) -> list:
    """The merge spelled out: each row's runs, stacked while the next row has the same."""
    out, open_ = [], {}
    for r in range(occ.shape[0] + 1):
        row = occ[r] if r < occ.shape[0] else np.zeros(occ.shape[1], bool)
        runs, c = set(), 0
        while c < len(row):
            if row[c]:
                end = c
                while end < len(row) and row[end]:
                    end += 1
                runs.add((c, end))
                c = end
            else:
                c += 1
        for key in [k for k in open_ if k not in runs]:
            out.append((key[0], open_[key], key[1] - key[0], r - open_.pop(key)))
        for key in runs:
            open_.setdefault(key, r)
    return sorted(out, key=lambda t: (t[1], t[0]))


@pytest.mark.slow
@pytest.mark.parametrize("named", ["the image of a map_server YAML", "the map line itself"])
def test_a_fifo_map_is_refused_at_once_exit_2(tmp_path, named):
    os.mkfifo(tmp_path / "pipe.pgm")
    if named == "the map line itself":
        path = _scenario(tmp_path, "pipe.pgm")
    else:
        (tmp_path / "m.yaml").write_text("image: pipe.pgm\nresolution: 0.05\n"
                                         "origin: [-5, -5, 0]\n")
        path = _scenario(tmp_path, "m.yaml")
    done = threading.Event()
    threading.Thread(target=unblock_fifo, args=(tmp_path / "pipe.pgm", done, 30.0),
                     daemon=True).start()
    try:
        result = _check(path)
    finally:
        done.set()
    assert result.returncode == 2
    assert "s.scenario:3: map " in result.stderr
    assert "cannot be read: not a regular file (a FIFO, device or socket)" in result.stderr

