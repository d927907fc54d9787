"""The viewer's 3D view (viewer/view3d.py): frames per second drawing N Crazyflies, and the
real-time factor of a live run of them beside a viewer drawing as fast as it can, against the
same run with no viewer (the goals: >= 30 frames/s for 1,000 under Xvfb with Mesa's
software renderer on 2 cores; the run's real-time factor within 5 %). Without a DISPLAY it
starts its own Xvfb; without either, the cases are skipped."""

import atexit
import math
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from .common import SMOKE, CannedLink, Case, LiveRun, count, grid, sizes, unit

BUSY_FPS = 30.0  # frames/s the window draws while a person interacts (viewer/app.py)


def _display() -> None:
    """Without a DISPLAY, start an Xvfb of our own (the display number the server picks
    itself, ``-displayfd``) and keep it, and DISPLAY, until this process ends: pyglet talks to
    the first display it opened for the life of the process, so every case of a process (the
    smoke run's, the viewer module's too) must share one."""
    if os.environ.get("DISPLAY"):
        return
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
    atexit.register(proc.terminate)


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
        _display()

    @unit("frames/s")
    def track_fps(self, drones):
        from pyglet import gl

        from coopsim.viewer.app import Viewer

        layout = _layout(drones)
        link, times = CannedLink(layout), []
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
            drawn = viewer.view3d.drawn
            assert viewer.view3d.active and len(drawn["quadfar"]) + len(drawn["box"]) >= drones
        finally:
            viewer.close()
        return 1.0 / float(np.median(times[count(10, 1):]))


def _hover_files(folder: Path, n: int) -> Path:
    """A realtime scenario of N Crazyflies hovering at 1 m under the ``flight`` driver at
    100 Hz on the aerial engine at 500 Hz (the suite's ``flyers``), written to ``folder``."""
    side = math.ceil(math.sqrt(n)) * 0.5 + 4.0
    (folder / "floor.world").write_text(f"[FLOOR]\nsize {side:g} {side:g} 0.1\n")
    lines = ["[WORLD]", "file floor.world"]
    for k, (x, y) in enumerate(grid(n, 0.5)):
        lines += [f"[ROBOT_{k + 1}]", "type crazyflie", f"name cf{k}",
                  f"position {x:.2f} {y:.2f} 0", "driver flight shape hover height 1 every 5"]
    lines += ["[SETTINGS]", "engine aerial", "dt 0.002", "mode realtime", "seed 1"]
    path = folder / "hover.scenario"
    path.write_text("\n".join(lines) + "\n")
    return path


class RealTimeBeside(Case):
    """A live realtime run of N hovering Crazyflies (its own process) with no viewer, then
    with the 3D view drawing it at 30 frames/s (the window's rate while a person drags or
    types; 10 when idle) at the priority ``coopsim view`` takes, alternating, 8 s each, twice:
    the run's real-time factor lost beside the viewer (% of the factor without it; the goal:
    <= 5) and the frames per second the viewer kept (the goal: 30)."""

    params = (sizes(1000, smoke=2),)
    param_names = ("drones",)
    rounds = 1

    def setup(self, drones):
        from coopsim.client import Client

        if SMOKE:  # a run process of its own and a live window: ~15 s on 2 cores, not ~1
            raise NotImplementedError("a live run beside a live window is too slow for the "
                                      "smoke run; asv runs it (Frames covers the drawing)")
        _display()
        self.folder = tempfile.TemporaryDirectory()
        folder = Path(self.folder.name)
        text = _hover_files(folder, drones).read_text()  # its world by its absolute path
        self.run = LiveRun(0, text=text.replace("file floor.world",
                                                f"file {folder / 'floor.world'}")).__enter__()
        self.client = Client(self.run.nameserver, timeout=30.0)
        self.sim = self.client.sim()
        while self.sim.status()["time"] < (0.05 if SMOKE else 2.0):  # built, stepping
            time.sleep(0.05)
        self.figures = self._measure(0.3 if SMOKE else 8.0, count(2, 1))

    def _rtf(self, seconds: float, work) -> float:
        """Sim seconds per wall second over ``seconds`` of calling ``work()``."""
        t0, s0 = time.perf_counter(), self.sim.status()["time"]
        while time.perf_counter() - t0 < seconds:
            work()
        return (self.sim.status()["time"] - s0) / (time.perf_counter() - t0)

    def _measure(self, seconds: float, blocks: int):
        from pyglet import gl

        from coopsim.viewer.app import Viewer

        from coopsim.viewer import lower_priority

        lower_priority()  # as `coopsim view` does: the simulation comes first
        viewer = Viewer(self.run.nameserver, fps=1000, width=1100, height=760)
        frames, period = [0], 1.0 / BUSY_FPS

        def draw():
            due = time.perf_counter() + period
            viewer.dispatch_events()
            viewer.render()
            gl.glFinish()
            viewer.flip()
            frames[0] += 1
            time.sleep(max(0.0, due - time.perf_counter()))
        alone, beside, fps = [], [], []
        try:
            for _ in range(blocks):
                alone.append(self._rtf(seconds, lambda: time.sleep(0.01)))
                frames[0], t0 = 0, time.perf_counter()
                beside.append(self._rtf(seconds, draw))
                fps.append(frames[0] / (time.perf_counter() - t0))
        finally:
            viewer.close()
        return float(np.median(alone)), float(np.median(beside)), float(np.median(fps))

    def teardown(self, drones):
        self.client.close()
        self.run.__exit__(None, None, None)  # SIGINT, then kill (common.LiveRun)
        self.folder.cleanup()

    @unit("% rtf lost")
    def track_rtf_lost_percent(self, drones):
        alone, beside, _ = self.figures
        return 100.0 * (1.0 - beside / alone)

    @unit("frames/s")
    def track_live_fps(self, drones):
        return self.figures[2]
