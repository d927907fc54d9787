"""The viewer's 3D view (viewer/view3d.py): frames per second drawing N Crazyflies, and the
real-time factor of a live run of them beside a viewer drawing as fast as it can, against the
same run with no viewer (issue 42's goals: >= 30 frames/s for 1,000 under Xvfb with Mesa's
software renderer on 2 cores; the run's real-time factor within 5 %). Without a DISPLAY it
starts its own Xvfb; without either, the cases are skipped."""

import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import numpy as np

from .common import SMOKE, Case, count, grid, sizes, unit


def _display():
    """An Xvfb of our own when there is no DISPLAY (its process, or None): the display
    number the server picks itself (``-displayfd``)."""
    if os.environ.get("DISPLAY"):
        return None
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        raise NotImplementedError("no DISPLAY and no Xvfb: the 3D view cannot be drawn")
    read, write = os.pipe()
    proc = subprocess.Popen([xvfb, "-displayfd", str(write), "-screen", "0", "1280x900x24",
                             "-nolisten", "tcp"], pass_fds=(write,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as pipe:
        os.environ["DISPLAY"] = f":{int(pipe.readline())}"
    return proc


def _undisplay(proc) -> None:
    if proc is not None:
        proc.terminate()
        proc.wait()
        del os.environ["DISPLAY"]


class _Canned:
    """What the window reads from a link, filled from memory instead of the network."""

    nameserver, connected, playback, error, generation, run = "canned", True, None, "", 1, {}

    def __init__(self, layout: dict) -> None:
        self.layout, self.frame = layout, None

    def submit(self, *args, **kwargs) -> Future:
        future: Future = Future()
        future.set_result(None)
        return future

    def switch(self, nameserver: str, keys=None) -> None:
        pass

    def close(self) -> None:
        pass


def _layout(n: int) -> dict:
    """N Crazyflies 0.5 m apart (the suite's ``flyers`` grid), as a 3D world's layout."""
    side = math.ceil(math.sqrt(n)) * 0.5 + 4.0
    robots = [{"name": f"cf{k}", "type": "crazyflie", "radius": 0.0695, "x": x, "y": y,
               "yaw": 0.0, "z": 1.0, "quat": [1.0, 0.0, 0.0, 0.0], "modules": [],
               "color": [230, 120, 40], "draw": {"shape": "disc", "heading": True,
                                                 "rotorcraft": True}}
              for k, (x, y) in enumerate(grid(n, 0.5))]
    return {"floor": {"length": side, "width": side}, "objects": [], "robots": robots,
            "parts": [], "targets": [], "sections": [], "layout_version": 1, "modules": {},
            "columns": [], "engine": "aerial"}


def _frame(layout: dict, k: int):
    """Frame ``k``: every Crazyflie bobbing and tilting a little, as a hovering swarm does."""
    from coopsim.net.statestream import StateFrame

    base = np.array([(r["x"], r["y"], 0.0) for r in layout["robots"]])
    n, t = len(base), k * 0.02
    phase = base[:, 0] + base[:, 1]
    tilt = 0.1 * np.sin(t + phase) / 2  # half-angle of a roll of up to 0.1 rad
    pose3d = np.column_stack((base[:, 0], base[:, 1], 1.0 + 0.05 * np.sin(t + phase),
                              np.cos(tilt), np.sin(tilt), np.zeros(n), np.zeros(n)))
    return StateFrame(k, t, 1, "realtime", 1.0, 1.0, 0, False, 0, base, np.zeros((0, 3)),
                      np.zeros((0, 3)), np.zeros((n, 0)), pose3d=pose3d)


class Frames(Case):
    """N hovering Crazyflies in the 3D view, moving every frame (canned frames: the scene
    updated, the instanced draw, the widgets, ``glFinish`` and the swap): frames per second,
    the median over 60 frames after 10 (the goal: >= 30 for 1,000)."""

    params = (sizes(100, 1000, smoke=2),)
    param_names = ("drones",)

    def setup(self, drones):
        self.xvfb = _display()

    def teardown(self, drones):
        _undisplay(self.xvfb)

    @unit("frames/s")
    def track_fps(self, drones):
        from pyglet import gl

        from coopsim.viewer.app import Viewer

        layout = _layout(drones)
        link, times = _Canned(layout), []
        viewer = Viewer("canned", fps=1000, link=link, width=1100, height=760)
        try:
            for k in range(count(70, 2)):
                link.frame = _frame(layout, k)
                t0 = time.perf_counter()
                viewer.dispatch_events()
                viewer.render()
                gl.glFinish()
                viewer.flip()
                times.append(time.perf_counter() - t0)
            assert viewer.view3d.active and len(viewer.view3d.drawn["disc"]) >= 4 * drones
        finally:
            viewer.close()
        return 1.0 / float(np.median(times[count(10, 1):]))
