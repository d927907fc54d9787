"""The viewer: one whole frame against the robot count, on whatever OpenGL the display offers
(was benchmarks/viewer_bench.py). Without a DISPLAY it starts its own Xvfb (software
rendering: llvmpipe); without either the case is skipped."""

import math
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np

from .common import CannedLink, Case, count, sizes, unit


def _layout(n: int) -> dict:
    """N ``single`` robots on a 1.5 m grid in a square arena, one box per 25 robots."""
    from coopsim.model.module import describe_module
    from coopsim.plugins.modules.sonar import Sonar

    rng, row = np.random.default_rng(1), math.ceil(math.sqrt(n))
    side = row * 1.5 + 2.0
    robots = [{"name": f"robot{i + 1}", "type": "single", "team": "", "radius": 0.2,
               "color": [int(c) for c in rng.integers(30, 240, 3)],
               "x": (i % row) * 1.5 - side / 2 + 1.75, "y": (i // row) * 1.5 - side / 2 + 1.75,
               "yaw": float(rng.uniform(-math.pi, math.pi)), "modules": ["motors", "sonar"],
               "controller": ""} for i in range(n)]
    objects = [{"name": f"WALL_{k}", "shape": "box", "size": [0.5, 0.3, 0.5],
                "x": float(rng.uniform(-side / 2 + 1, side / 2 - 1)),
                "y": float(rng.uniform(-side / 2 + 1, side / 2 - 1)), "z": 0.25, "yaw": 0.0,
                "mass": 0.0, "color": [150, 150, 150]} for k in range(max(1, n // 25))]
    return {"floor": {"length": side, "width": side}, "objects": objects, "robots": robots,
            "parts": [], "targets": [], "sections": [], "layout_version": 1,
            "modules": {"sonar": describe_module(Sonar)},
            "columns": [c.name for c in Sonar.columns if c.stream]}


def _frame(layout: dict, k: int, rng):
    """Frame ``k``: every robot turned and shifted a little, its sonar readings random."""
    from coopsim.net.statestream import StateFrame

    base = np.array([(r["x"], r["y"], r["yaw"]) for r in layout["robots"]])
    t, n = k * 0.05, len(base)
    poses = base + np.column_stack((0.3 * np.cos(t + base[:, 2]), 0.3 * np.sin(t + base[:, 2]),
                                    np.full(n, t)))
    objects = np.array([(o["x"], o["y"], o["yaw"]) for o in layout["objects"]])
    return StateFrame(k, t, 1, "realtime", 1.0, 1.0, 0, False, 0, poses, objects,
                      np.zeros((0, 3)), rng.uniform(0.2, 2.0, (n, 11)))


class Frame(Case):
    """N robots moving every frame, sonar rays and names shown: one whole frame (the scene
    updated from a new state frame, the batched draw, the widgets, ``glFinish`` and the buffer
    swap), median ms over 150 frames after 10."""

    params = (sizes(100, 500, 1000, smoke=2),)
    param_names = ("robots",)

    def setup(self, robots):
        self.xvfb = None
        if not os.environ.get("DISPLAY"):
            xvfb = shutil.which("Xvfb")
            if xvfb is None:
                raise NotImplementedError("no DISPLAY and no Xvfb")
            number = next(n for n in range(120, 400) if not Path(f"/tmp/.X11-unix/X{n}").exists())
            self.xvfb = subprocess.Popen([xvfb, f":{number}", "-screen", "0", "1280x900x24",
                                          "-nolisten", "tcp"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            while not Path(f"/tmp/.X11-unix/X{number}").exists():
                time.sleep(0.05)
            os.environ["DISPLAY"] = f":{number}"

    def teardown(self, robots):
        if self.xvfb is not None:
            self.xvfb.terminate()
            self.xvfb.wait()
            del os.environ["DISPLAY"]

    @unit("ms")
    def track_frame_ms(self, robots):
        from pyglet import gl

        from coopsim.viewer.app import Viewer

        layout = _layout(robots)
        link, rng, times = CannedLink(layout), np.random.default_rng(2), []
        viewer = Viewer("canned", fps=1000, link=link, width=1100, height=760)
        viewer.scene.show_rays, viewer.show_names = True, True
        try:
            for k in range(count(160, 2)):
                link.frame = _frame(layout, k, rng)
                t0 = time.perf_counter()
                viewer.dispatch_events()
                viewer.render()
                gl.glFinish()
                viewer.flip()
                times.append((time.perf_counter() - t0) * 1e3)
        finally:
            viewer.close()
        return float(np.median(times[count(10, 1):]))
