"""Camera reads beside a real-time world: four clients reading 160 x 120 RGB
images as fast as they can and one reading at 30 Hz beside a camera that publishes at 30 Hz,
from a ``coopsim run`` of its own (mujoco, 18 Crazyflies at 500 Hz in real time: steps of 1 ms
of CPU or more, so the hub lends them to its reading thread, where the old code deadlocked); the real-time factor while they
read over the same run's without readers (before and after them, averaged), and the error 9
replies (the read and the stepper waiting on each other froze the world: goal 0 of them, and
>= 0.9 of the factor without readers). Skipped where MuJoCo cannot render."""

import os
import threading
import time

from .camera import _renders
from .common import SMOKE, Case, LiveRun, unit

SECONDS = 0.2 if SMOKE else 10.0  # s of wall time each phase
CROWD = 1 if SMOKE else 16  # more Crazyflies: steps of >= 1 ms, lent to the reading thread
TEXT = """[WORLD]
file {root}/worlds/empty.world

[ROBOT_1]
type crazyflie
name cf
position 0 0 0.05

[ROBOT_2]
type crazyflie
name pub
position 0 1 0.05
param camera3d.publish 1
param camera3d.rate 30
""" + "".join(f"""
[ROBOT_{i + 3}]
type crazyflie
name crowd{i}
position {-3 + 0.5 * (i % 8):.1f} {-3 + 0.5 * (i // 8):.1f} 0.05
""" for i in range(CROWD)) + """
[SETTINGS]
engine mujoco
dt 0.002
mode realtime
seed 1
"""


def _cpu_s(pid: int) -> float:
    """CPU seconds process ``pid`` has used (Linux's /proc; NaN elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _factor(sim, seconds: float, pid: int) -> tuple[float, float]:
    """Over ``seconds`` of wall time: the run's real-time factor (its simulated time gone by
    over the wall time between two status reads) and its process's CPU seconds per simulated
    second (what a quiet machine needs for real time, whatever the load here)."""
    t0, w0, c0 = sim.status()["time"], time.perf_counter(), _cpu_s(pid)
    time.sleep(seconds)
    t1, w1, c1 = sim.status()["time"], time.perf_counter(), _cpu_s(pid)
    return (t1 - t0) / (w1 - w0), (c1 - c0) / max(t1 - t0, 1e-9)


def _reader(nameserver: str, robot: str, period: float, stop, tally: dict) -> None:
    """Read ``robot``'s camera every ``period`` s (0: as fast as it can) until ``stop``."""
    from coopsim.client import Client, RemoteError

    with Client(nameserver, timeout=30.0) as client:
        camera = client.robot(robot).camera3d
        while not stop.is_set():
            began = time.perf_counter()
            try:
                camera.read("rgb")
                tally["reads"] += 1
            except RemoteError as exc:
                tally[exc.code] = tally.get(exc.code, 0) + 1
            if period:
                stop.wait(max(0.0, period - (time.perf_counter() - began)))


class Readers(Case):
    """x real time of a 500 Hz mujoco run with four as-fast-as-they-can readers and a 30 Hz
    reader (beside a camera publishing at 30 Hz) over the same run without them."""

    timeout = 300

    def setup(self):
        _renders()
        from coopsim.client import Client

        with LiveRun(0, text=TEXT) as run, Client(run.nameserver, timeout=30.0) as client:
            sim = client.sim()
            while sim.status()["time"] < (0.02 if SMOKE else 0.5):  # started and warm
                time.sleep(0.1)
            pid = run.proc.pid
            before = _factor(sim, SECONDS, pid)
            stop, tally = threading.Event(), {"reads": 0}
            readers = [threading.Thread(target=_reader, args=(run.nameserver, robot, period,
                                                              stop, tally))
                       for robot, period in (("cf", 0),) * 4 + (("pub", 1 / 30),)]
            for thread in readers:
                thread.start()
            self.reading, self.reading_cpu = _factor(sim, SECONDS, pid)
            stop.set()
            for thread in readers:
                thread.join(60.0)
            after = _factor(sim, SECONDS, pid)
            self.alone = (before[0] + after[0]) / 2
            self.alone_cpu = (before[1] + after[1]) / 2
            self.tally = dict(tally)

    @unit("x real time")
    def track_x_real_time_reading(self):
        return self.reading

    @unit("x real time")
    def track_x_real_time_alone(self):
        return self.alone

    @unit("x alone")
    def track_reading_over_alone(self):
        return self.reading / self.alone

    @unit("x alone")
    def track_cpu_over_alone(self):
        """The run's process's CPU seconds per simulated second while they read, over the
        same without readers (the render process's not counted: it renders on another
        core)."""
        return self.reading_cpu / self.alone_cpu

    @unit("reads/s")
    def track_reads_per_s(self):
        return self.tally["reads"] / SECONDS

    @unit("replies")
    def track_timeouts(self):
        """Reads answered error 9 (goal 0)."""
        return self.tally.get(9, 0)

    @unit("replies")
    def track_errors(self):
        """Reads answered with any error."""
        return sum(v for k, v in self.tally.items() if k != "reads")
