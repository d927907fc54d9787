"""Terrain: a TurtleBot3 drives across a 512 x 512 height field on the
mujoco engine, in real time.

The world: a 20 x 20 m floor holding a 16 x 16 m ``[TERRAIN]`` of rolling hills up to 1 m
(a grey PGM written at setup, ``side`` pixels square), a TurtleBot3 at its west edge driving
east at its top speed (0.22 m/s, both wheels) with its 360-beam lidar, at the usual 0.02 s
steps. Figures: the whole tick (ms) and x real time from it, and the full crossing (16 m,
73 s of sim time) timed in lockstep, as x real time: the goal is >= 1.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .common import Case, build, count, sizes, threads, tick_ms, unit, x_real_time

DT = 0.02  # s, the scenario's step
SPEED = 0.22  # m/s, the TurtleBot3's top speed
CROSSING = 16.0  # m, the field's length


def _write(folder: Path, side: int) -> Path:
    """The hills image, world and scenario in ``folder``; the scenario's path."""
    import numpy as np

    x = np.linspace(0.0, 4 * np.pi, side)
    gx, gy = np.meshgrid(x, x)
    hills = 0.5 + 0.25 * np.sin(gx) * np.cos(0.7 * gy) + 0.25 * np.sin(0.3 * gx + gy)
    grey = (255 * (hills - hills.min()) / np.ptp(hills)).astype(np.uint8)
    (folder / "hills.pgm").write_bytes(b"P5\n%d %d\n255\n" % (side, side) + grey.tobytes())
    (folder / "hills.world").write_text("[FLOOR]\nsize 20 20 0.1\n[TERRAIN]\nimage hills.pgm\n"
                                        "size 16 16 1.0\n")
    (folder / "cross.scenario").write_text(
        "[WORLD]\nfile hills.world\n[ROBOT_1]\ntype turtlebot3\nname tb\nposition -9.5 0 0\n"
        f"[SETTINGS]\nengine mujoco\ndt {DT}\n")
    return folder / "cross.scenario"


class Terrain(Case):
    """One TurtleBot3 crossing a ``side`` x ``side`` height field."""

    params = (sizes(512, smoke=16),)
    param_names = ("side",)

    def setup(self, side):
        try:
            import mujoco  # noqa: F401
            import PIL  # noqa: F401
        except ImportError as exc:
            raise NotImplementedError(f"needs mujoco and Pillow: {exc}") from None
        from coopsim.formats.files import load_scenario

        threads(1)
        self._dir = tempfile.TemporaryDirectory()
        spec = load_scenario(str(_write(Path(self._dir.name), side)))
        self.stepper = build(spec, warm=0)
        self.stepper.slots.put("tb", "motors", (SPEED, SPEED), attach=False)
        self.ms = tick_ms(self.stepper, 50)
        ticks = count(int(CROSSING / SPEED / DT))
        t0 = time.perf_counter()
        for _ in range(ticks):
            self.stepper.tick()
        self.crossing = ticks * DT / (time.perf_counter() - t0)

    def teardown(self, side):
        self._dir.cleanup()

    @unit("ms")
    def track_ms(self, side):
        return self.ms

    @unit("x real time")
    def track_x_real_time(self, side):
        return x_real_time(DT, self.ms)

    @unit("x real time")
    def track_crossing_x_real_time(self, side):
        return self.crossing
