"""Benchmark: viewer frame time against robot count, on whatever OpenGL the display offers.

Builds a canned world (N ``single`` robots 1.5 m apart in a square arena, one static box per 25
robots, a few targets, 11 sonar readings per robot) and feeds the real viewer window a new state
frame before every frame, every robot moving. Times one whole frame: the scene update from the
frame, the batched draw, the widget layer (menu, controls, status bar, robot names when shown)
and ``glFinish`` + buffer swap, so the GPU (or llvmpipe, the software renderer under Xvfb) work is
counted. No network: the frames come from memory, so only the viewer is measured.

Without a DISPLAY it starts its own Xvfb (software rendering, as CI has).

Usage: python benchmarks/viewer_bench.py [--robots 100,500,1000] [--frames 150] [--sonar on|off]
       [--names on|off] [--zoom 1.0] [--screenshot test-artifacts/screenshots/bench]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import time
from concurrent.futures import Future
from pathlib import Path

import numpy as np

from coopsim.plugins.modules.sonar import Sonar

from coopsim.net.statestream import StateFrame

WARMUP = 10  # frames before timing starts


class CannedLink:
    """What the window reads from a link, filled from memory instead of the network."""

    def __init__(self, layout: dict) -> None:
        self.nameserver = "canned"
        self.connected = True
        self.layout = layout
        self.frame: StateFrame | None = None
        self.playback = None
        self.error = ""
        self.generation = 1

    def submit(self, *args, **kwargs) -> Future:
        future: Future = Future()
        future.set_result(None)
        return future

    def switch(self, nameserver: str) -> None:
        pass

    def close(self) -> None:
        pass


def canned_layout(n: int, seed: int = 1) -> dict:
    """A square arena holding ``n`` robots on a 1.5 m grid, boxes and targets."""
    rng = np.random.default_rng(seed)
    per_row = math.ceil(math.sqrt(n))
    side = per_row * 1.5 + 2.0
    xy = [((i % per_row) * 1.5 - side / 2 + 1.75, (i // per_row) * 1.5 - side / 2 + 1.75)
          for i in range(n)]
    robots = [{"name": f"robot{i + 1}", "type": "single", "team": "", "radius": 0.2,
               "color": [int(c) for c in rng.integers(30, 240, 3)], "x": x, "y": y,
               "yaw": float(rng.uniform(-math.pi, math.pi)), "modules": ["motors", "sonar"],
               "controller": ""} for i, (x, y) in enumerate(xy)]
    objects = [{"name": f"WALL_{k}", "shape": "box" if k % 2 else "cylinder",
                "size": [0.5, 0.3, 0.5], "x": float(rng.uniform(-side / 2 + 1, side / 2 - 1)),
                "y": float(rng.uniform(-side / 2 + 1, side / 2 - 1)), "z": 0.25,
                "yaw": float(rng.uniform(0, math.pi)), "mass": 0.0, "color": [150, 150, 150]}
               for k in range(max(1, n // 25))]
    targets = [{"index": k, "color": c, "rgb": rgb, "x": side / 3 * (k - 1), "y": 0.0, "z": 0.0}
               for k, (c, rgb) in enumerate((("red", [230, 40, 40]), ("green", [40, 180, 60]),
                                             ("blue", [40, 90, 230])))]
    return {"floor": {"length": side, "width": side}, "objects": objects, "robots": robots,
            "parts": [], "targets": targets, "sections": [], "layout_version": 1,
            "modules": {"sonar": Sonar.describe()},
            "columns": [c.name for c in Sonar.columns if c.stream]}


def canned_frame(layout: dict, k: int, rng) -> StateFrame:
    """Frame ``k``: every robot turned and shifted a little, sonar readings random."""
    n = len(layout["robots"])
    base = np.array([(r["x"], r["y"], r["yaw"]) for r in layout["robots"]]).reshape(-1, 3)
    t = k * 0.05
    poses = base + np.column_stack((0.3 * np.cos(t + base[:, 2]), 0.3 * np.sin(t + base[:, 2]),
                                    np.full(n, t)))
    objects = np.array([(o["x"], o["y"], o["yaw"]) for o in layout["objects"]]).reshape(-1, 3)
    return StateFrame(k, t, 1, "realtime", 1.0, 1.0, 0, False, 0, poses, objects,
                      np.zeros((0, 3)), rng.uniform(0.2, 2.0, (n, 11)))


def bench(n: int, frames: int, sonar: bool, names: bool, zoom: float = 1.0,
          screenshot: str | None = None) -> tuple[float, float]:
    """(p50, p95) frame time in ms for ``n`` robots (the last frame saved to ``screenshot``)."""
    from pyglet import gl

    from coopsim.viewer.app import Viewer

    layout = canned_layout(n)
    link = CannedLink(layout)
    viewer = Viewer("canned", fps=1000, link=link, width=1100, height=760)
    viewer.scene.show_rays, viewer.show_names = sonar, names
    viewer.render()  # the first frame fits the world to the window; then zoom in on its centre
    viewer.camera.zoom(viewer.width / 2, viewer.height / 2, math.log(zoom, 1.15))
    rng = np.random.default_rng(2)
    times = []
    try:
        for k in range(WARMUP + frames):
            link.frame = canned_frame(layout, k, rng)
            start = time.perf_counter()
            viewer.dispatch_events()
            viewer.render()
            gl.glFinish()
            viewer.flip()
            times.append(time.perf_counter() - start)
        if screenshot:
            viewer.render()
            import pyglet
            pyglet.image.get_buffer_manager().get_color_buffer().save(screenshot)
    finally:
        viewer.close()
    ms = np.array(times[WARMUP:]) * 1000
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def _own_display() -> subprocess.Popen | None:
    if os.environ.get("DISPLAY"):
        return None
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        raise SystemExit("no DISPLAY and no Xvfb (apt-get install xvfb)")
    number = next(n for n in range(120, 400) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    proc = subprocess.Popen([xvfb, f":{number}", "-screen", "0", "1280x900x24", "-nolisten",
                             "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not Path(f"/tmp/.X11-unix/X{number}").exists():
        time.sleep(0.05)
    os.environ["DISPLAY"] = f":{number}"
    return proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default="100,500,1000", help="comma-separated counts")
    parser.add_argument("--frames", type=int, default=150, help="timed frames per count")
    parser.add_argument("--sonar", choices=("on", "off"), default="on")
    parser.add_argument("--names", choices=("on", "off"), default="on",
                        help="robot names (drawn only when robots are >= 6 px on screen)")
    parser.add_argument("--zoom", type=float, default=1.0,
                        help="zoom factor over the fitted view (2 shows names at 500 robots)")
    parser.add_argument("--screenshot", help="save each count's last frame as PATH-<count>.png")
    args = parser.parse_args()
    xvfb = _own_display()
    try:
        from pyglet import gl
        import pyglet
        pyglet.window.Window(visible=False).close()  # open the display to read the renderer
        print(f"renderer: {gl.gl_info.get_renderer()}")
        print("| robots | p50 ms | p95 ms | fps at p50 | fps at p95 |")
        print("|---:|---:|---:|---:|---:|")
        for n in (int(c) for c in args.robots.split(",")):
            shot = f"{args.screenshot}-{n}.png" if args.screenshot else None
            p50, p95 = bench(n, args.frames, args.sonar == "on", args.names == "on", args.zoom,
                             shot)
            print(f"| {n} | {p50:.1f} | {p95:.1f} | {1000 / p50:.0f} | {1000 / p95:.0f} |",
                  flush=True)
    finally:
        if xvfb is not None:
            xvfb.terminate()


if __name__ == "__main__":
    main()
