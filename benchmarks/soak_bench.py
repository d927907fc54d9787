"""Soak benchmark: memory over a long run, and what inserting and removing robots leaves behind.

1. Long run: a whole live run (coopsim.app.run.Run: stepper, name server, /sim, robot hub, state
   stream) of 100 ``single`` robots, each driven by an in-process ``wander`` driver, recording
   every step, stepped unpaced (realtime, speed 0). Unpaced is the lockstep equivalent of an hour
   in real time: the world, engine, drivers and recorder see the same ticks, pacing only adds
   sleeps, so memory per step is what it would be. One hour at dt = 0.01 s is 360,000 steps
   (``--steps 360000``); the default 100,000 is the goal's window. RSS (``/proc/self/status``
   VmRSS) is sampled every ``--every`` steps; the figure is the least-squares slope after the
   warm-up, bytes per step. Meanwhile ``--clients`` processes (zmq and msgpack only) each drive a
   robot and send /sim and their robot malformed, oversized and many-frame requests, and leave
   replies unread on dropped sockets; one is SIGKILLed and replaced every ``--kill-every`` s.
   Descriptors and threads are sampled too, and counted again once the last client is gone,
   against the same run before the first came. ``--trim`` calls glibc's ``malloc_trim`` before
   each RSS sample, so free heap the allocator keeps is not counted as growth.
2. The pymunk Buffer check: the same run without recording or network for ``--leak-steps`` steps,
   once with the engine as it is (one reused ``pymunk.batch.Buffer``) and once with a new Buffer
   made every step (the old code, which pymunk never frees): slopes side by side.
3. Churn: 10,000 robots inserted and removed through ``/sim`` (commands 16 and 18 over a real
   socket), 1,000 at a time: open file descriptors (``/proc/self/fd``), threads and RSS after each
   round, against the count before the first.

Usage: python benchmarks/soak_bench.py [--steps 100000] [--robots 100] [--every 2000]
       [--warmup 10000] [--clients 8] [--kill-every 1] [--no-record] [--trim]
       [--leak-steps 20000] [--churn 10000] [--batch 1000] [--only long|leak|churn]
"""

from __future__ import annotations

import argparse
import ctypes
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from coopsim.app.bench import swarm_scenario
from coopsim.app.run import Run, RunOptions
from coopsim.client import Client
from coopsim.model.specs import DriverSetting, FloorSpec, ScenarioSpec, Settings, WorldSpec

DT = 0.01


# Hostile and dying clients: child processes with only zmq and msgpack (a fast start), each a
# controller of one robot that also sends /sim and its robot malformed and oversized requests,
# and leaves connections with unread replies behind. The parent SIGKILLs one every
# ``kill_every`` seconds and starts another, so the servers see connections dropped mid-request
# all run long.
CHILD = r"""
import os, random, sys, msgpack, zmq
sim_ep, robot_ep, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng, ctx = random.Random(seed), zmq.Context()

def dealer(endpoint):
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(endpoint)
    return s

def ask(s, payload, frames=()):
    s.send_multipart([b"", *frames, payload])
    if s.poll(1000):  # a dropped connection (a frame over the cap) answers nothing
        s.recv_multipart()

def good(command, data=()):
    return msgpack.packb([0, "", command, [], list(data)])

JUNK = [b"", b"\xc1", b"\x92\x01", os.urandom(64), msgpack.packb([0, "x", 2**40, [], []]),
        msgpack.packb({"a": 1}), msgpack.packb([0, 1, 2, 3]), msgpack.packb([[[[[[[[]]]]]]]]),
        msgpack.packb([0, "r1 single", 16, [], [1e300, 0, 0, 0]]),
        msgpack.packb([0, "/etc/passwd", 22, [], []]),
        msgpack.packb([0, "/tmp/x.mcap", 26, [1], []])]
robot, sim = dealer(robot_ep), dealer(sim_ep)
while True:
    ask(robot, good(100, (rng.uniform(-0.3, 0.5), rng.uniform(-0.3, 0.5))))  # set_speeds
    ask(robot, good(200))  # sonar read
    if rng.random() < 0.2:
        ask(sim, good(23))  # state
    kind = rng.random()
    if kind < 0.3:
        ask(rng.choice((sim, robot)), rng.choice(JUNK))
    elif kind < 0.35:
        ask(robot, b"\x95" + os.urandom(70_000))  # a frame over the 64 KiB limit
    elif kind < 0.4:
        ask(sim, good(1), frames=[b"x" * 1000] * 20)  # a request of many frames
    elif kind < 0.45:  # asks, then leaves the reply unread on a socket it drops
        stale = dealer(rng.choice((sim_ep, robot_ep)))
        stale.send_multipart([b"", good(1)])
        stale.close()
"""


TRIM = False  # --trim: give free heap back to the OS before each RSS sample


def rss() -> int:
    """Resident set size of this process, bytes (after glibc's ``malloc_trim`` with --trim)."""
    if TRIM:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/status") as status:
        line = next(x for x in status if x.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def slope(points: list[tuple]) -> float:
    """Least-squares bytes per step of (step, rss, ...) points."""
    return fit(points)[0]


def fit(points: list[tuple]) -> tuple[float, float]:
    """(slope, its standard error), bytes per step, of (step, rss, ...) points."""
    if len(points) < 3:
        return math.nan, math.nan
    x = np.array([p[0] for p in points], dtype=float)
    y = np.array([p[1] for p in points], dtype=float)
    coef, cov = np.polyfit(x, y, 1, cov=True)
    return float(coef[0]), float(math.sqrt(cov[0, 0]))


def driven(n: int) -> ScenarioSpec:
    """``swarm_scenario`` with a ``wander`` driver in every robot."""
    base = swarm_scenario(n, seed=3, dt=DT)
    robots = tuple(replace(r, drivers=(DriverSetting("wander"),)) for r in base.robots)
    return replace(base, robots=robots, settings=replace(base.settings, mode="realtime",
                                                         speed=0.0))


def follow(run: Run, steps: int, every: int) -> list[tuple[int, int, int, int]]:
    """Sample (step, RSS, fds, threads) of a started run every ``every`` steps until ``steps``."""
    samples = []
    target = every
    while target <= steps:
        run.stepper.wait_step(target - 1, 600.0)
        samples.append((run.stepper.stats().steps, rss(), fds(), os_threads()))
        target += every
    return samples


def long_run(n: int, steps: int, every: int, warmup: int, folder: Path, clients: int,
             kill_every: float, record: bool = True) -> dict:
    path = folder / "soak.mcap"
    options = RunOptions(port=0, controllers=False, record=str(path) if record else None,
                         mode="realtime", speed=0.0,
                         duration=steps * DT * 2)
    t0 = time.perf_counter()
    with Run(driven(n), options) as run:
        run.stepper.pause()
        run.start()
        with Client(run.network.endpoint, timeout=30.0) as client:
            names = client.names()  # then closed: its sockets are not the run's
        crowd = Crowd(names, [f"r{i}" for i in range(n)], clients, kill_every)
        quiet = (fds(), os_threads(), rss())  # the same run before any client came
        run.stepper.resume()
        with crowd:
            samples = follow(run, steps, every)
        settled = _settle(quiet[0])  # before stop: a stopped stepper's hub serves on a thread
        run.stepper.stop()
        taken = run.stepper.stats().steps
    wall = time.perf_counter() - t0
    recorder = run.recorder
    late = [s for s in samples if s[0] >= warmup]
    return {"steps": taken, "wall_s": wall, "quiet": quiet, "settled": settled,
            "samples": samples, "late": late, "fit": fit(late),
            "peak_fds": max(s[2] for s in samples), "peak_threads": max(s[3] for s in samples),
            "started": crowd.started, "killed": crowd.killed,
            "recorded": recorder.frames if recorder else 0,
            "dropped": recorder.dropped if recorder else 0,
            "file_mb": path.stat().st_size / 2**20 if record else 0.0,
            "error": recorder.error_text if recorder else ""}


def _settle(base: int, wait: float = 10.0) -> tuple[int, int]:
    """(fds, threads) once the descriptors of killed clients' connections are closed (or after
    ``wait`` s): the kernel ends their TCP connections, libzmq then closes its side."""
    end = time.monotonic() + wait
    while fds() > base and time.monotonic() < end:
        time.sleep(0.2)
    return fds(), os_threads()


class Crowd:
    """``n`` client processes on ``robots`` (names; ``names``: the name server's list) of a
    live run; one killed every ``kill_every`` s and replaced."""

    def __init__(self, names: dict[str, str], robots: list[str], n: int,
                 kill_every: float) -> None:
        self.sim = names["/sim"]
        self.endpoints = [names[f"/{name}"] for name in robots]
        self.n, self.kill_every, self.started, self.killed = n, kill_every, 0, 0
        self.children: list[subprocess.Popen] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _spawn(self) -> None:
        endpoint = self.endpoints[self.started % len(self.endpoints)]
        self.children.append(subprocess.Popen(
            [sys.executable, "-c", CHILD, self.sim, endpoint, str(self.started)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.started += 1

    def _kill(self, child: subprocess.Popen) -> None:
        child.kill()  # SIGKILL: the connection ends however far its request got
        child.wait()
        self.killed += 1

    def _loop(self) -> None:
        while len(self.children) < self.n:
            self._spawn()
        while self.children and not self.stop.wait(self.kill_every):
            self._kill(self.children.pop(self.started % len(self.children)))
            self._spawn()

    def __enter__(self) -> "Crowd":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        while self.children:
            self._kill(self.children.pop())


def leak_check(n: int, steps: int, every: int) -> dict:
    """Slope with the engine's reused Buffer, and with a new Buffer every step."""
    from coopsim.physics import pymunk_engine
    from pymunk import batch

    original = pymunk_engine.PymunkEngine._write_controls

    def fresh_buffer(self, control_rows, velocity):  # what the engine did before the fix
        self._set = batch.Buffer()
        return original(self, control_rows, velocity)

    out = {}
    for label, method in (("reused", original), ("new_every_step", fresh_buffer)):
        pymunk_engine.PymunkEngine._write_controls = method
        try:
            with Run(driven(n), RunOptions(network=False, controllers=False, mode="realtime",
                                           speed=0.0, duration=steps * DT * 2)) as run:
                run.start()
                samples = follow(run, steps, every)
                run.stepper.stop()
        finally:
            pymunk_engine.PymunkEngine._write_controls = original
        out[label] = slope(samples[len(samples) // 4:])
    return out


def churn(total: int, batch: int) -> dict:
    """Insert and remove ``total`` robots through /sim, ``batch`` at a time."""
    side = math.ceil(math.sqrt(batch))
    size = side * 2.0 + 4.0
    world = ScenarioSpec(WorldSpec(FloorSpec(size, size)), settings=Settings(dt=DT), name="churn")
    rows = []
    with Run(world, RunOptions(port=0, controllers=False)) as run:
        run.stepper.pause()
        run.start()
        with Client(run.network.endpoint, timeout=60.0) as client:
            sim = client.sim()
            sim.status()
            base = (fds(), os_threads(), threading.active_count(), rss())
            t0 = time.perf_counter()
            for start in range(0, total, batch):
                names = [f"c{start + i}" for i in range(batch)]
                for i, name in enumerate(names):
                    x = -size / 2 + 2.0 + (i % side) * 2.0
                    y = -size / 2 + 2.0 + (i // side) * 2.0
                    client.request(sim.endpoint, 16, f"{name} single", data=(x, y, 0.0, 0.0))
                peak = (fds(), os_threads(), len(client.names("/c")))
                for name in names:
                    client.request(sim.endpoint, 18, name)
                rows.append((start + batch, *peak, fds(), os_threads(), threading.active_count(),
                             rss(), len(client.names("/c"))))
            wall = time.perf_counter() - t0
    return {"base": base, "rows": rows, "wall_s": wall}


def print_long(r: dict, args) -> None:
    """The long run's figures, each against the same run's own baseline."""
    fd0, th0, rss0 = r["quiet"]
    (step_a, rss_a, fd_a, th_a), (step_b, rss_b, fd_b, th_b) = r["late"][0], r["late"][-1]
    print(f"long run: {args.robots} robots, wander drivers, recording every step, unpaced, "
          f"{args.clients} client processes (controllers sending hostile requests too), one "
          f"SIGKILLed and replaced every {args.kill_every:g} s: {r['steps']} steps in "
          f"{r['wall_s']:.0f} s, {r['started']} clients started, {r['killed']} killed")
    print(f"  RSS: {rss0 / 2**20:.1f} MB before any client; {rss_a / 2**20:.1f} MB at step "
          f"{step_a} (end of warm-up), {rss_b / 2**20:.1f} MB at step {step_b}: "
          f"{rss_b / rss_a:.4f}x; slope {r['fit'][0]:.2f} +- {r['fit'][1]:.2f} B/step (goal < 1), "
          f"first to last sample {(rss_b - rss_a) / max(1, step_b - step_a):.2f} B/step")
    late = [s[1] for s in r["late"]]
    print(f"  RSS after warm-up: min {min(late) / 2**20:.2f} MB, max {max(late) / 2**20:.2f} MB "
          f"({len(late)} samples)")
    print(f"  fds: {fd0} before any client, {fd_a} / {fd_b} at those steps, peak {r['peak_fds']}, "
          f"{r['settled'][0]} after the last client was killed ({r['settled'][0] / fd0:.2f}x)")
    print(f"  threads: {th0} before, peak {r['peak_threads']}, {r['settled'][1]} after "
          f"({r['settled'][1] / th0:.2f}x)")
    print(f"  recorded {r['recorded']} steps, dropped {r['dropped']}, "
          f"{r['file_mb']:.1f} MB file{'; ' + r['error'] if r['error'] else ''}")


def print_churn(r: dict, args) -> None:
    fd0, th0, py0, rss0 = r["base"]
    print(f"churn: {args.churn} robots inserted and removed through /sim, {args.batch} at a "
          f"time, in {r['wall_s']:.0f} s; before: {fd0} fds, {th0} threads ({py0} Python), "
          f"{rss0 / 2**20:.1f} MB")
    print("  after  | with robots: fds threads names | after removal: fds threads (Python) "
          "RSS MB names")
    for done, pfd, pth, names, fd, th, py, mem, left in r["rows"]:
        print(f"  {done:6d} | {pfd:5d} {pth:5d} {names:5d} | {fd:5d} {th:5d} ({py}) "
              f"{mem / 2**20:7.1f} {left}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--robots", type=int, default=100)
    parser.add_argument("--every", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--kill-every", type=float, default=1.0)
    parser.add_argument("--no-record", action="store_true")
    parser.add_argument("--trim", action="store_true",
                        help="malloc_trim before each RSS sample: free heap the allocator keeps "
                             "is not counted, so growth left is memory still in use")
    parser.add_argument("--leak-steps", type=int, default=20_000)
    parser.add_argument("--churn", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--only", choices=("long", "leak", "churn"))
    args = parser.parse_args()
    global TRIM
    TRIM = args.trim
    if args.only in (None, "long"):
        with tempfile.TemporaryDirectory() as folder:
            print_long(long_run(args.robots, args.steps, args.every, args.warmup, Path(folder),
                                args.clients, args.kill_every, not args.no_record), args)
    if args.only in (None, "leak"):
        r = leak_check(args.robots, args.leak_steps, max(200, args.leak_steps // 40))
        print(f"pymunk Buffer ({args.leak_steps} steps, {args.robots} robots, no network): "
              f"reused {r['reused']:.2f} B/step, a new one every step "
              f"{r['new_every_step']:.2f} B/step")
    if args.only in (None, "churn"):
        print_churn(churn(args.churn, args.batch), args)


if __name__ == "__main__":
    main()
