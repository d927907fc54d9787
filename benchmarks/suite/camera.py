"""Image cameras (``camera3d``, rendered offscreen by MuJoCo with EGL or OSMesa): 10 cameras of
160 x 120 RGB published at 30 Hz beside a 500 Hz world of hovering Crazyflies, against the same
world with its cameras unread (goal: real time; the images render in the run's render process,
on the other core: the run's CPU a tick and the render process's are tracked apart, what 2
quiet cores need whatever the load here); one 640 x 480 RGB-D image read over the
protocol by the Python client (goal: <= 20 ms). Skipped, with the reason, where MuJoCo cannot
render (no EGL/OSMesa)."""

import os
import time

from .common import Case, alternate, build, count, flyers, per_call_ms, sizes, threads, unit


def _renders() -> None:
    """Raise NotImplementedError with the sentence when MuJoCo's renderer cannot start here."""
    try:
        from coopsim.physics.mujoco.renderproc import missing
    except ImportError as exc:
        raise NotImplementedError(f"no MuJoCo: {exc}") from None
    why = missing()
    if why:
        raise NotImplementedError(why)


def _cameras(n: int, publish: int):
    """:func:`flyers` on the mujoco engine, each with a 160 x 120 RGB camera at 30 Hz,
    published (``publish`` 1) or unread (0)."""
    from dataclasses import replace

    from coopsim.model.specs import ParamSetting

    spec = flyers(n, engine="mujoco")
    cam = (("width", 160), ("height", 120), ("rate", 30.0), ("depth", 0), ("publish", publish))
    params = tuple(ParamSetting("camera3d", k, v) for k, v in cam)
    return replace(spec, robots=tuple(replace(r, params=params) for r in spec.robots))


def _cpu_ms(stepper, ticks: int) -> float:
    """CPU ms of this process per tick of ``stepper`` over ``ticks`` ticks."""
    t0 = time.process_time()
    for _ in range(ticks):
        stepper.tick()
    return (time.process_time() - t0) / ticks * 1e3


def _render_cpu_ms(stepper, ticks: int) -> float:
    """Tick ``stepper`` ``ticks`` times; the CPU ms a tick its render process used meanwhile
    (from Linux's /proc; NaN elsewhere)."""
    pid = stepper.sim.world.engine.render_pid()
    path = f"/proc/{pid}/stat" if pid is not None else ""

    def used() -> float:
        with open(path) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    if not path or not os.path.exists(path):
        _cpu_ms(stepper, ticks)
        return float("nan")
    c0 = used()
    _cpu_ms(stepper, ticks)
    return (used() - c0) * 1e3 / ticks


class Cameras(Case):
    """10 hovering Crazyflies at 500 Hz (mujoco), each camera 160 x 120 RGB at 30 Hz
    published, and the same world with the cameras unread, ticks alternating in blocks: x real
    time of the world with cameras, and its tick over the unread one's."""

    params = (sizes(10, smoke=1),)
    param_names = ("cameras",)

    def setup(self, cameras):
        _renders()
        threads(1)
        seen, unread = build(_cameras(cameras, 1)), build(_cameras(cameras, 0))
        ticks = count(100, 1)  # 100 ticks: 0.2 s of sim time, six images per camera
        self.ms = alternate(lambda: per_call_ms(seen.tick, ticks, 1),
                            lambda: per_call_ms(unread.tick, ticks, 1), blocks=count(5, 1))
        self.dt = seen.sim.dt
        # CPU ms a tick of this process (the stepper's core) and of the render process (the
        # other core): what real time on 2 quiet cores needs, whatever the load here
        self.cpu = alternate(lambda: _cpu_ms(seen, ticks), lambda: _cpu_ms(unread, ticks),
                             blocks=count(5, 1))
        self.render_ms = _render_cpu_ms(seen, count(500, 1))

    @unit("x real time")
    def track_x_real_time(self, cameras):
        return self.dt * 1e3 / self.ms[0]

    @unit("x unread")
    def track_over_unread(self, cameras):
        return self.ms[0] / self.ms[1]

    @unit("x unread")
    def track_cpu_over_unread(self, cameras):
        """The run's process's CPU time a tick over the unread world's (the render process's
        not counted: it renders on the other core)."""
        return self.cpu[0] / self.cpu[1]

    @unit("ms")
    def track_render_cpu_ms(self, cameras):
        """The render process's CPU time a tick, ms (NaN where /proc cannot say)."""
        return self.render_ms


class ReadImage(Case):
    """One 640 x 480 RGB-D image (raw: 0.9 MB of RGB and 1.2 MB of float32 depth) read by the
    Python client from a lockstep run in this process: ms per read, rendering, encoding,
    transport and decoding included (goal <= 20 ms). ``track_ms``: the client's own way, the
    pixels raw in a second ZeroMQ frame (protocol 11, the word ``frame``); ``track_base64_ms``
    the same read with base64 in the reply's text (protocol 10's), in blocks alternating with
    it in the same run: the baseline."""

    def setup(self):
        _renders()
        from dataclasses import replace

        from coopsim.app.run import Run, RunOptions
        from coopsim.client import Client
        from coopsim.model.specs import ParamSetting

        spec = flyers(1, driven=False, engine="mujoco")
        params = tuple(ParamSetting("camera3d", k, v) for k, v in (("width", 640),
                                                                    ("height", 480)))
        spec = replace(spec, robots=tuple(replace(r, params=params) for r in spec.robots))
        with Run(spec, RunOptions(port=0, controllers=False)) as run:
            run.stepper.pause()
            run.start()
            with Client(run.network.endpoint, timeout=10.0) as client:
                bot = client.robot("cf0")

                def reads(frames: bool) -> float:
                    bot.image_frames = frames
                    return per_call_ms(lambda: bot.camera3d.read("rgbd raw"), count(20, 1), 1)
                self.ms, self.base64_ms = alternate(lambda: reads(True), lambda: reads(False),
                                                    blocks=count(5, 1))

    @unit("ms")
    def track_ms(self):
        return self.ms

    @unit("ms")
    def track_base64_ms(self):
        return self.base64_ms
