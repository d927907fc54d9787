"""Benchmark: what the Foxglove bridge costs a run, and how fast and lean the export is.

1. Bridge overhead: N ``single`` robots (``coopsim.app.bench.swarm_scenario``: driving, new
   random wheel speeds every 50 steps, all sonars cast), dt = 0.02 s, an unpaced
   ``Stepper.tick()`` loop on this thread (as the stepper thread runs it). The bridge publishes
   at RATE Hz to a real WebSocket client in another process subscribed to every topic. Blocks
   with the bridge publishing and blocks with it idle alternate; the figure is the ratio of the
   median block means (the bridge's thread competes for the GIL in its blocks).
2. Export: a recording of M robots at 50 Hz (dt 0.02 s, unpaced), exported with
   ``export_foxglove``; the figure is recorded seconds per second of export wall time. Peak
   memory (VmHWM) of ``coopsim export --foxglove`` in a fresh process, for a short and a long
   recording, shows whether memory grows with length.

Usage: python benchmarks/foxglove_bench.py [--robots 500] [--rate 20] [--blocks 12]
       [--block-steps 100] [--export-robots 100] [--minutes 1 10] [--only bridge|export]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from coopsim.app.bench import swarm_scenario, timed_block
from coopsim.foxglove.bridge import Bridge, LiveSource
from coopsim.foxglove.export import export_foxglove
from coopsim.replay.player import recorded_steps
from coopsim.recording.reader import Recording
from coopsim.recording.writer import Recorder
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

DT = 0.02

#: A client in its own process reading everything it subscribed to: with "layout", the topics
#: docs/foxglove.md's panels use (the scene, transforms, state, metrics, events and one robot's
#: pose), as Foxglove subscribes only to what its panels show; with "all", every topic.
CLIENT = r"""
import json, sys
from websockets.sync.client import connect
subs = 0
def wanted(topic):
    if sys.argv[2] == "state":
        return topic == "/sim/state"
    return sys.argv[2] == "all" or not topic.startswith("/robots/") or topic.endswith("/r0/pose")
with connect(sys.argv[1], subprotocols=["foxglove.sdk.v1"], max_size=None) as ws:
    print("connected", flush=True)
    while True:
        msg = ws.recv()
        if isinstance(msg, str):
            m = json.loads(msg)
            if m["op"] == "advertise":
                s = []
                for c in m["channels"]:
                    if wanted(c["topic"]):
                        subs += 1
                        s.append({"id": subs, "channelId": c["id"]})
                ws.send(json.dumps({"op": "subscribe", "subscriptions": s}))
"""


class GatedSource(LiveSource):
    """The stepper's snapshots while ``on``; the last one shown while off (so the bridge has
    nothing new to publish). The layout is described up front: this loop ticks the stepper
    itself, so there is no stepper thread to run calls."""

    def __init__(self, stepper) -> None:
        super().__init__(stepper)
        self.on = False
        self._held = stepper.view()
        self._layout = (stepper.view()[1], stepper.sim.world.describe())

    def current(self):
        if self.on:
            self._held = self.stepper.view()
        snap, key = self._held
        return snap, key, time.time_ns()

    def layout(self):
        return self._layout


def _stepper(n: int, seed: int = 0):
    stepper = Stepper(Simulation(swarm_scenario(n, seed, DT)), mode="lockstep", speed=0)
    return stepper, np.random.default_rng(seed)



def bridge_overhead(n: int, rate: float, blocks: int, block_steps: int,
                    subscribe: str = "layout") -> dict:
    stepper, rng = _stepper(n)
    timed_block(stepper, rng, 30)
    source = GatedSource(stepper)
    bridge = Bridge(source, "127.0.0.1", 0, rate).start()
    client = subprocess.Popen([sys.executable, "-c", CLIENT, bridge.url, subscribe],
                              stdout=subprocess.PIPE, text=True)
    try:
        client.stdout.readline()
        source.on = True
        timed_block(stepper, rng, 50)  # channels advertised and subscribed
        plain, bridged = [], []
        for _ in range(blocks):
            source.on = False
            plain.append(timed_block(stepper, rng, block_steps))
            source.on = True
            published = bridge.published
            bridged.append(timed_block(stepper, rng, block_steps))
            assert bridge.published > published, "the bridge published nothing"
        assert client.poll() is None, "the client died"
    finally:
        client.kill()
        bridge.close()
    p, b = statistics.median(plain), statistics.median(bridged)
    return {"robots": n, "rate": rate, "subscribe": subscribe, "plain_ms": p, "bridged_ms": b,
            "ratio": b / p,
            "published": bridge.published, "errors": bridge.errors,
            "publish_ms": bridge.busy / max(bridge.published, 1) * 1000,
            "cpu_ms": bridge.cpu / max(bridge.published, 1) * 1000}


def record(path: Path, n: int, minutes: float) -> float:
    """Record ``minutes`` of sim time of ``n`` robots; return the recorded seconds."""
    stepper, rng = _stepper(n, seed=1)
    sim = stepper.sim
    rec = Recorder(path, sim.scenario, sim.scenario.settings, sim.seed, sim.dt).attach(stepper)
    steps = round(minutes * 60 / DT)
    for k in range(0, steps, 500):
        timed_block(stepper, rng, min(500, steps - k))
    rec.close()
    return steps * DT


def export_speed(path: Path, out: Path) -> dict:
    """The export's speed, and (same run, baseline) the time to only read every step."""
    with Recording(path) as rec:
        length = rec.end - rec.start
        t0 = time.perf_counter()
        for _ in recorded_steps(rec):
            pass
        read = time.perf_counter() - t0
    with Recording(path) as rec:
        t0 = time.perf_counter()
        steps, messages = export_foxglove(rec, out)
        wall = time.perf_counter() - t0
    return {"recorded_s": length, "wall_s": wall, "ratio": length / wall, "steps": steps,
            "messages": messages, "out_mb": out.stat().st_size / 1e6, "read_s": read}


def export_memory(path: Path, out: Path) -> float:
    """Peak resident memory, MB, of ``coopsim export --foxglove`` in a fresh process."""
    code = ("import sys, resource\nfrom coopsim.app.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")
    done = subprocess.run([sys.executable, "-c", code, "export", str(path), "--foxglove",
                           str(out)], capture_output=True, text=True, check=True)
    return int(re.findall(r"\d+", done.stdout)[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--robots", type=int, default=500)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--blocks", type=int, default=12)
    parser.add_argument("--block-steps", type=int, default=100)
    parser.add_argument("--export-robots", type=int, default=100)
    parser.add_argument("--minutes", type=float, nargs="+", default=[1.0, 10.0])
    parser.add_argument("--only", choices=["bridge", "export"])
    parser.add_argument("--subscribe", nargs="+", choices=["layout", "all", "state"],
                        default=["layout", "all"])
    args = parser.parse_args()
    if args.only != "export":
        for subscribe in args.subscribe:
            r = bridge_overhead(args.robots, args.rate, args.blocks, args.block_steps,
                                subscribe)
            print(f"bridge: {r['robots']} robots, {r['rate']:g} Hz, client subscribed to "
                  f"{subscribe}: step {r['plain_ms']:.2f} ms without, {r['bridged_ms']:.2f} ms "
                  f"with the bridge publishing: ratio {r['ratio']:.3f} ({r['published']} "
                  f"publications of {r['publish_ms']:.2f} ms, {r['cpu_ms']:.2f} ms of it CPU; "
                  f"{r['errors']} errors)", flush=True)
    if args.only == "bridge":
        return
    with tempfile.TemporaryDirectory() as tmp:
        for minutes in args.minutes:
            rec = Path(tmp) / f"rec-{minutes:g}.mcap"
            t0 = time.perf_counter()
            record(rec, args.export_robots, minutes)
            print(f"recorded {minutes:g} min of {args.export_robots} robots in "
                  f"{time.perf_counter() - t0:.0f} s", flush=True)
            e = export_speed(rec, Path(tmp) / "out.mcap")
            mem = export_memory(rec, Path(tmp) / "out2.mcap")
            print(f"export: {e['recorded_s']:.0f} s recorded ({e['steps']} steps, "
                  f"{e['messages']} messages, {e['out_mb']:.1f} MB) in {e['wall_s']:.1f} s: "
                  f"{e['ratio']:.1f}x real time (reading the steps alone: {e['read_s']:.1f} s, "
                  f"{e['wall_s'] / e['read_s']:.1f}x less); peak memory {mem:.0f} MB",
                  flush=True)


if __name__ == "__main__":
    main()
