"""Benchmark: what the ROS 2 bridge costs a run, how soon a cmd_vel moves the wheels, and how
fast a recording becomes a ROS 2 bag.

1. Bridge overhead: N ``single`` robots (``coopsim.app.bench.swarm_scenario``: driving, new
   wheel speeds every 50 steps, every sonar cast), dt 0.02 s, an unpaced ``Stepper.tick()``
   loop on this thread in realtime mode (odometry, /tf and /clock at 50 Hz = every step, scans
   at 10 Hz). A DDS participant in another process reads every robot's odometry and scan. Blocks
   with the bridge hooked on and blocks without alternate; the figure is the ratio of the
   median block means (the bridge's thread competes for the GIL in its blocks).
2. cmd_vel latency: a realtime run (dt 0.01 s, paced) with the bridge; a DDS participant in
   another process answers robot1's odometry of step k with a Twist of its own speed; the
   figure is the number of steps until the step whose stored command carries that speed.
3. Bag export: a recording of M robots at 50 Hz, exported with ``export_ros2``; recorded
   seconds per second of export wall time (baseline in the same run: reading every step).

Usage: python benchmarks/ros2_bench.py [--robots 100] [--blocks 12] [--block-steps 100]
       [--export-robots 100] [--minutes 1] [--only overhead|latency|export]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from coopsim.app.bench import swarm_scenario, timed_block
from coopsim.replay.player import recorded_steps
from coopsim.recording.reader import Recording
from coopsim.recording.writer import Recorder
from coopsim.ros2.bag import export_ros2
from coopsim.ros2.bridge import RosBridge
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

DT = 0.02
DOMAIN = 150 + os.getpid() % 50

#: Another process reading every robot's odometry and scan (coopsim's own IDL types: this
#: measures the bridge, the decoding is checked by tests/ros2).
READER = r"""
import sys, time
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from coopsim.ros2.dds import idl_types, loopback_config
dom, n = int(sys.argv[1]), int(sys.argv[2])
d = Domain(dom, loopback_config()); dp = DomainParticipant(dom); T = idl_types()
readers = [DataReader(dp, Topic(dp, f"rt/r{i}/{t}", T[k])) for i in range(n)
           for t, k in (("odom", "nav_msgs/Odometry"), ("scan", "sensor_msgs/LaserScan"))]
print("ready", flush=True)
got = 0
while True:
    for r in readers:
        got += len(r.take(64))
    time.sleep(0.01)
"""

#: Another process answering robot1's odometry at step k with a Twist whose speed names k.
ANSWERER = r"""
import json, sys, time
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from coopsim.ros2.dds import idl_types, loopback_config
dom, count = int(sys.argv[1]), int(sys.argv[2])
d = Domain(dom, loopback_config()); dp = DomainParticipant(dom); T = idl_types()
odom = DataReader(dp, Topic(dp, "rt/robot1/odom", T["nav_msgs/Odometry"]))
tw = T["geometry_msgs/Twist"]; V = tw.__annotations__["linear"]
w = DataWriter(dp, Topic(dp, "rt/robot1/cmd_vel", tw))
sent, k = [], 0
while len(sent) < count:
    for o in odom.take(16):
        ns = o.header.stamp.sec * 10**9 + o.header.stamp.nanosec
        if ns % 10**8 == 0 and ns > 0:  # every 0.1 s of sim time
            k += 1
            v = 0.001 * (k % 400 + 1)
            w.write(tw(V(v, 0.0, 0.0), V(0.0, 0.0, 0.0)))
            sent.append((ns, v))
    time.sleep(0.0005)
print(json.dumps(sent), flush=True)
"""


def _stepper(n: int, seed: int = 0, mode: str = "realtime"):
    stepper = Stepper(Simulation(swarm_scenario(n, seed, DT)), mode=mode, speed=0)
    return stepper, np.random.default_rng(seed)



def overhead(n: int, blocks: int, block_steps: int) -> dict:
    stepper, rng = _stepper(n)
    timed_block(stepper, rng, 30)
    bridge = RosBridge(stepper, DOMAIN).start()
    reader = subprocess.Popen([sys.executable, "-c", READER, str(DOMAIN), str(n)],
                              stdout=subprocess.PIPE, text=True)
    try:
        reader.stdout.readline()
        timed_block(stepper, rng, 100)  # discovery, matching
        plain, bridged = [], []
        for _ in range(blocks):
            stepper.hooks.remove(bridge)
            time.sleep(0.05)  # the bridge's thread drains what it had
            plain.append(timed_block(stepper, rng, block_steps))
            stepper.hooks.append(bridge)
            published = bridge.counts.published
            bridged.append(timed_block(stepper, rng, block_steps))
            assert bridge.counts.published > published, "the bridge published nothing"
        assert reader.poll() is None, "the reader died"
    finally:
        reader.kill()
        bridge.close()
    p, b = statistics.median(plain), statistics.median(bridged)
    return {"robots": n, "plain_ms": p, "bridged_ms": b, "ratio": b / p,
            "published": bridge.counts.published, "errors": bridge.counts.errors}


def latency(count: int) -> dict:
    """Steps from the odometry a Twist answers to the step that used it (realtime, paced)."""
    from coopsim.formats.files import load
    stepper = Stepper(Simulation(load("scenarios/demo.scenario"), dt=0.01), mode="realtime")
    seen: list[tuple[int, float]] = []  # (step, robot1's stored left wheel command)

    def hook(snap):
        seen.append((snap.step, float(snap.commands["motors"][snap.index["robot1"], 0])))
    stepper.hooks.append(hook)
    bridge = RosBridge(stepper, DOMAIN, rate=100.0).start()
    answerer = subprocess.Popen([sys.executable, "-c", ANSWERER, str(DOMAIN), str(count)],
                                stdout=subprocess.PIPE, text=True)
    stepper.start()
    try:
        sent = json.loads(answerer.stdout.readline())
        time.sleep(0.5)
    finally:
        stepper.stop()
        bridge.close()
        answerer.kill()
    steps = []
    for ns, v in sent:
        k = round(ns / 1e7)
        used = next((s for s, left in seen if s > k and abs(left - v) < 1e-12), None)
        if used is not None:
            steps.append(used - k)
    return {"answers": len(sent), "matched": len(steps), "median_steps": statistics.median(steps),
            "max_steps": max(steps), "within_2": sum(s <= 2 for s in steps) / len(steps)}


def export(n: int, minutes: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rec.mcap"
        stepper, rng = _stepper(n, seed=1, mode="lockstep")
        sim = stepper.sim
        rec = Recorder(path, sim.scenario, sim.scenario.settings, sim.seed, sim.dt)
        rec.attach(stepper)
        steps = round(minutes * 60 / DT)
        for k in range(0, steps, 500):
            timed_block(stepper, rng, min(500, steps - k))
        rec.close()
        with Recording(path) as r:
            length = r.end - r.start
            t0 = time.perf_counter()
            for _ in recorded_steps(r):
                pass
            read = time.perf_counter() - t0
        with Recording(path) as r:
            t0 = time.perf_counter()
            steps, messages = export_ros2(r, Path(tmp) / "bag")
            wall = time.perf_counter() - t0
    return {"robots": n, "recorded_s": length, "wall_s": wall, "ratio": length / wall,
            "messages": messages, "read_only_ratio": length / read}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--robots", type=int, default=100)
    parser.add_argument("--blocks", type=int, default=12)
    parser.add_argument("--block-steps", type=int, default=100)
    parser.add_argument("--answers", type=int, default=100)
    parser.add_argument("--export-robots", type=int, default=100)
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--only", choices=("overhead", "latency", "export"))
    args = parser.parse_args()
    if args.only in (None, "overhead"):
        print("overhead", json.dumps(overhead(args.robots, args.blocks, args.block_steps)))
    if args.only in (None, "latency"):
        print("latency", json.dumps(latency(args.answers)))
    if args.only in (None, "export"):
        print("export", json.dumps(export(args.export_robots, args.minutes)))


if __name__ == "__main__":
    main()
