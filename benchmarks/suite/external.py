"""External robots: 10 robots whose poses stream in at 200 Hz each (from a process
of their own, as a motion-capture bridge would) into a 100 Hz real-time run, each one's sonar
read after every pose: the late steps (%), pose received -> in the next snapshot (p95, ms;
goal <= one step + 2 ms) and pose -> sonar reading served (p95, ms; goal <= 2 steps), as the
server measures them (``/sim state``'s ``external.latency``). The poses go either to each
robot's own endpoint (``robot``: command 20, served by the stepper's thread) or to the pose
channel ``/external`` (``channel``, protocol 11: its own thread); the sonar reads go to the
robots' endpoints both ways."""

import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .common import SMOKE, Case, late_percent, root, sizes, unit

ROBOTS = 2 if SMOKE else 10
SECONDS = 0.5 if SMOKE else 5.0
RATE = 200.0  # Hz, each robot's pose stream

#: The stream, in its own process (in the smoke run: in this one, sparing a process start):
#: per robot one DEALER to its endpoint (and one to the pose channel, when given), a pose then
#: a sonar read every period, replies drained as they come (argv: seconds, rate, channel
#: endpoint or "", robot endpoints...).
STREAMER = r"""
import math, sys, time, msgpack, zmq
def stream(seconds, rate, channel, ends):
    ctx = zmq.Context()
    def dealer(e):
        s = ctx.socket(zmq.DEALER); s.setsockopt(zmq.LINGER, 0); s.connect(e); return s
    reads = [dealer(e) for e in ends]
    poses = [dealer(channel) for e in ends] if channel else reads
    t0 = tick = time.perf_counter()
    while tick - t0 < seconds:
        for k, s in enumerate(reads):
            x = -4.0 + 0.5 * k + 0.1 * math.sin(tick - t0)
            pose = [x, -1.0 + 0.2 * (tick - t0), 0.0]
            who = f"robot{k + 1}" if channel else ""
            poses[k].send_multipart([b"", msgpack.packb([0, who, 20, [], pose])])
            s.send_multipart([b"", msgpack.packb([0, "", 200, [], []])])
            for r in {s, poses[k]}:
                while r.poll(0):
                    r.recv_multipart()
        tick += 1.0 / rate
        time.sleep(max(0.0, tick - time.perf_counter()))
    ctx.destroy(linger=0)
if __name__ == "__main__":
    stream(float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4:])
"""


def _scenario(folder: Path, robots: int) -> Path:
    lines = ["[WORLD]", f"file {root() / 'worlds' / 'empty.world'}", "[SETTINGS]",
             "mode realtime", "dt 0.01"]
    for i in range(robots):
        lines += [f"[ROBOT_{i + 1}]", "type single", f"name robot{i + 1}",
                  f"position {-4 + 0.5 * i:.1f} -1 0", "external stale 0.5 max_rate 1000"]
    path = folder / "external.scenario"
    path.write_text("\n".join(lines) + "\n")
    return path


class Stream(Case):
    """10 external robots at 200 Hz into a 100 Hz real-time run (the run in this process, the
    stream in another): late %, pose -> snapshot p95 and pose -> sonar reading p95, ms; the
    poses to each robot's endpoint or to the pose channel."""

    params = (sizes("robot", "channel", smoke="channel"),)
    param_names = ("path",)

    def setup(self, path):
        from coopsim.app.run import Run, RunOptions
        from coopsim.client import Client
        from coopsim.formats.files import load

        with tempfile.TemporaryDirectory() as tmp:
            scenario = load(_scenario(Path(tmp), ROBOTS))
        with Run(scenario, RunOptions(port=0, controllers=False)) as run:
            run.start()
            with Client(run.network.endpoint) as client:
                ends = [client.lookup(f"/robot{i + 1}") for i in range(ROBOTS)]
                channel = client.lookup("/external") if path == "channel" else ""
            stepper = run.stepper
            clock = _stepper_clock()
            steps0, missed0 = stepper.snapshot.step, stepper.missed
            cpu0 = time.clock_gettime(clock)
            _stream(channel, ends)
            steps, missed = stepper.snapshot.step - steps0, stepper.missed - missed0
            self.stepper_ms = (time.clock_gettime(clock) - cpu0) * 1e3 / max(1, steps)
            latency = stepper.sim.external.state()["latency"]
        self.late = late_percent(missed, max(1, steps))
        self.snapshot_ms = latency["to_snapshot"]["p95"] * 1e3
        self.reading_ms = latency["to_reading"]["p95"] * 1e3

    @unit("ms")
    def track_stepper_cpu_ms(self, path):
        """CPU time of the stepper's thread a step (its step, its snapshot and the requests it
        serves): what the poses cost it, a figure the machine's load hardly moves."""
        return self.stepper_ms

    @unit("%")
    def track_late_percent(self, path):
        return self.late

    @unit("ms")
    def track_pose_to_snapshot_p95_ms(self, path):
        return self.snapshot_ms

    @unit("ms")
    def track_pose_to_reading_p95_ms(self, path):
        return self.reading_ms


def _stepper_clock() -> int:
    """The CPU-time clock of the run's stepper thread (found by its name)."""
    thread = next(t for t in threading.enumerate() if t.name == "coopsim-stepper")
    return time.pthread_getcpuclockid(thread.ident)


def _stream(channel: str, ends: list) -> None:
    """Stream SECONDS of poses and reads (another process; this one in the smoke run)."""
    if SMOKE:
        space = {"__name__": "streamer"}
        exec(STREAMER, space)  # noqa: S102 -- this module's own text
        space["stream"](SECONDS, RATE, channel, ends)
        return
    subprocess.run([sys.executable, "-c", STREAMER, str(SECONDS), str(RATE), channel, *ends],
                   check=True, timeout=SECONDS + 60)
