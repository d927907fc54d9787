"""Writes the two shipped maps (run from anywhere: ``python worlds/maps/make_maps.py``).

* ``cave.png``: a 20 x 20 m cave (400 x 400 pixels at 0.05 m, Stage-style bitmap stretched over
  the floor of ``scenarios/cave.scenario``), grown by a seeded cellular automaton (the classic
  4-5 rule) with the middle and the border kept: the same file on every machine.
* ``office.pgm`` + ``office.yaml``: a 30 x 20 m office floor (600 x 400 pixels at 0.05 m, ROS
  map_server format, origin at the lower-left corner -15, -10): a corridor, rooms on both sides
  with doors, 0.15 m walls.

Only numpy is needed: PNG is written with zlib (filter 0 on every row), PGM as P5.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FREE, WALL = 254, 0


def write_png(path: Path, grey: np.ndarray) -> None:
    """An 8-bit greyscale PNG of ``grey`` (rows, cols) uint8, row 0 at the top."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows, cols = grey.shape
    raw = b"".join(b"\x00" + grey[r].tobytes() for r in range(rows))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", cols, rows, 8,
                                                                         0, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def write_pgm(path: Path, grey: np.ndarray) -> None:
    """A binary (P5) PGM of ``grey`` (rows, cols) uint8."""
    rows, cols = grey.shape
    path.write_bytes(f"P5\n# coopsim office map\n{cols} {rows}\n255\n".encode() + grey.tobytes())


def cave(size: int = 400, seed: int = 24) -> np.ndarray:
    """Rock (True) and floor (False) of a cave, by a cellular automaton on a coarse grid."""
    rng = np.random.default_rng(seed)
    n = size // 8  # 0.4 m cells, scaled up: smooth enough, cheap
    rock = rng.random((n, n)) < 0.45
    for _ in range(5):
        padded = np.pad(rock, 1, constant_values=True)
        around = sum(np.roll(np.roll(padded, dy, 0), dx, 1)
                     for dy in (-1, 0, 1) for dx in (-1, 0, 1))[1:-1, 1:-1]
        rock = around >= 5
        c = n // 2
        rock[c - 4:c + 4, c - 4:c + 4] = False  # the robots start in the middle
    rock[0, :] = rock[-1, :] = rock[:, 0] = rock[:, -1] = True
    return np.kron(rock, np.ones((8, 8), dtype=bool))


def office(cols: int = 600, rows: int = 400) -> np.ndarray:
    """Walls (True) of an office floor: 0.05 m pixels, 3-pixel (0.15 m) walls."""
    wall = np.zeros((rows, cols), dtype=bool)
    t = 3
    wall[:t, :] = wall[-t:, :] = wall[:, :t] = wall[:, -t:] = True
    mid_lo, mid_hi = rows // 2 - 30, rows // 2 + 30  # a 3 m corridor across the floor
    wall[mid_lo:mid_lo + t, :] = wall[mid_hi - t:mid_hi, :] = True
    for x in range(0, cols, 120):  # rooms 6 m wide on both sides
        wall[:mid_lo, x:x + t] = wall[mid_hi:, x:x + t] = True
    for x in range(60, cols, 120):  # a 1.2 m door into every room
        wall[mid_lo:mid_lo + t, x - 12:x + 12] = wall[mid_hi - t:mid_hi, x - 12:x + 12] = False
    for x in (150, 390):  # a desk in two rooms
        wall[60:90, x:x + 40] = wall[rows - 90:rows - 60, x:x + 40] = True
    return wall


def main() -> None:
    write_png(HERE / "cave.png", np.where(cave(), WALL, FREE).astype(np.uint8))
    write_pgm(HERE / "office.pgm", np.where(office(), WALL, FREE).astype(np.uint8))
    (HERE / "office.yaml").write_text(
        "# ROS map_server map of the office floor (written by make_maps.py)\n"
        "image: office.pgm\nresolution: 0.05\norigin: [-15.0, -10.0, 0.0]\nnegate: 0\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.196\n")


if __name__ == "__main__":
    main()
