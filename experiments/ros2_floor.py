"""The floor under issue 54's bridge cost: what Cyclone DDS and the kernel take to send one
step's samples with no Python per sample, beside what the bridge's Python write loop and a
stock rclpy publisher take for the same step (docs/ros2.md, *What a step's samples cost*).

One process makes the bridge's own writers for 100 robots (``RosBridge`` on a swarm of
``benchmarks/suite``, not stepped) and one step's payloads from its encoders at their real
sizes: 100 ``/rK/odom``, 20 of the 100 ``/rK/scan`` (10 Hz at 50 Hz steps, a fifth each step),
``/tf`` (one TFMessage of 100 transforms) and ``/clock``: 122 samples a step. A subscriber in
another process takes every odometry and scan (stock rclpy where ``COOPSIM_ROS_PYTHON`` names a
ROS 2 Python, else a Cyclone reader; ``benchmarks/suite/ros2cost.py``). Then, paced at 50 Hz,
blocks of ``--steps`` steps alternate:

- ``idle``: no writes (Cyclone's own threads, discovery and heartbeats: subtracted);
- ``c``: a C loop (compiled here with ``cc``) calling ``dds_write`` of Cyclone's C API on each
  writer with the ready CDR bytes, as the binding's ``ddspy_write`` does, no Python at all;
- ``python``: the bridge's loop, ``RawWriter.write`` per sample (the binding's write).

The figure of a block is the process's CPU (every thread: the writer's, Cyclone's ``tev`` and
``recv`` serving acknowledgements) a step, less the idle block's. The sim's own CPU a step
without the bridge (``ros2cost.cpu_per_step``) gives the 10 % budget: the bridge may add at
most a ninth of it. ``--rclpy`` runs instead a stock rclpy node publishing the same 122
messages a step (messages built once) in the ROS venv: what a ROS user's own node pays.

    python experiments/ros2_floor.py --rounds 3
    COOPSIM_ROS_PYTHON=/work/main/.venv-ros-kilted/bin/python python experiments/ros2_floor.py
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

#: The write loop in C: rows of a plan (writer, sample) index pairs, one row a step, paced by
#: an absolute clock. A sample is the binding's container of CDR bytes (its
#: ``ddspy_sample_container_t``: pointer, size), which its sertype copies into a serdata.
C_SOURCE = r"""
#include <stddef.h>
#include <stdint.h>
#include <time.h>
typedef struct { const void *bytes; size_t size; } sample_t;
extern int32_t dds_write(int32_t writer, const void *data);
int64_t write_steps(const int32_t *writers, const sample_t *samples, const int32_t *plan,
                    int rows, int per, int steps, int64_t period_ns) {
  struct timespec next; int64_t failed = 0;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (int s = 0; s < steps; s++) {
    const int32_t *row = plan + (size_t)(s % rows) * per;
    for (int i = 0; i < per; i++)
      if (dds_write(writers[row[i]], &samples[row[i]]) < 0) failed++;
    next.tv_nsec += period_ns;
    while (next.tv_nsec >= 1000000000L) { next.tv_nsec -= 1000000000L; next.tv_sec++; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
  }
  return failed;
}
"""
PERIOD = 0.02  # s: 50 Hz

#: A stock rclpy node publishing a step's odometry (100), scans (a fifth of 100) and /clock
#: each 20 ms, messages built once (tf2_msgs has no wheel in the ROS venvs here: no /tf);
#: blocks of no publishing and of publishing alternate; prints one JSON line.
RCLPY_PUBLISHER = r"""
import json, sys, time, rclpy
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan
n, steps, rounds = map(int, sys.argv[1:4])
rclpy.init(); node = rclpy.create_node("floor_publisher")
odom = [(node.create_publisher(Odometry, f"/r{i}/odom", 10), Odometry()) for i in range(n)]
scan = [(node.create_publisher(LaserScan, f"/r{i}/scan", 10), LaserScan()) for i in range(n)]
for i, (_, o) in enumerate(odom):
    o.header.frame_id, o.child_frame_id = f"r{i}/odom", f"r{i}/base_link"
for i, (_, s) in enumerate(scan):
    s.header.frame_id, s.ranges = f"r{i}/laser", [1.0] * 11
clock = (node.create_publisher(Clock, "/clock", 10), Clock())
rows = [[clock] + odom + scan[r::5] for r in range(5)]
deadline = time.monotonic() + 60
while time.monotonic() < deadline and any(
        p.get_subscription_count() == 0 for p, _ in odom + scan):
    time.sleep(0.1)
out = {"idle": [], "rclpy": []}
for _ in range(rounds):
    for kind in out:
        cpu, due = time.process_time(), time.monotonic()
        for k in range(steps):
            if kind == "rclpy":
                for pub, msg in rows[k % 5]:
                    pub.publish(msg)
            due += 0.02
            time.sleep(max(due - time.monotonic(), 0.0))
        out[kind].append((time.process_time() - cpu) * 1e3 / steps)
print(json.dumps({"per": len(rows[0]), **out}), flush=True)
"""


def compiled(libddsc: str):
    """The C loop, built against the binding's ``libddsc`` (None without a C compiler)."""
    where = tempfile.mkdtemp(prefix="ros2floor")
    src, lib = os.path.join(where, "floor.c"), os.path.join(where, "floor.so")
    with open(src, "w") as fh:
        fh.write(C_SOURCE)
    try:
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", src, "-o", lib, libddsc,
                        f"-Wl,-rpath,{os.path.dirname(libddsc)}"], check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    fn = ctypes.CDLL(lib).write_steps  # ctypes releases the GIL for the call
    fn.restype = ctypes.c_int64
    return fn


def libddsc_path() -> str:
    import cyclonedds
    libs = os.path.join(os.path.dirname(os.path.dirname(cyclonedds.__file__)), "cyclonedds.libs")
    names = [n for n in os.listdir(libs) if n.startswith("libddsc")]
    return os.path.join(libs, names[0])


def step_samples(robots: int, domain: int):
    """The bridge's writers and one step's payloads: (writers, payloads, plan rows)."""
    from suite.common import swarm
    from coopsim.ros2 import messages as m
    from coopsim.ros2.bridge import RosBridge
    stepper = swarm(robots, mode="realtime")
    bridge = RosBridge(stepper, domain).start()  # writers made; the stepper never runs
    snap, _ = stepper.view()
    scene, ns = bridge._scene[1], round(snap.time * 1e9)
    items = [("/clock", m.clock(ns)), ("/tf", scene.transforms(snap, ns))]
    items += scene.odometry(snap, ns) + scene.scans(snap, ns, every=True)
    writers = [bridge._writers[topic] for topic, _ in items]
    odom = [k for k, (t, _) in enumerate(items) if t.endswith("/odom")]
    scans = [k for k, (t, _) in enumerate(items) if "/scan" in t]
    rows = [[0, 1] + odom + scans[r::5] for r in range(5)]  # a fifth of the scans a step
    return bridge, writers, [p for _, p in items], rows


def block(kind: str, steps: int, writers, payloads, rows, c_loop) -> dict:
    """One paced block of ``kind``: CPU ms a step of the process and of this thread."""
    cpu, mine = time.process_time(), time.thread_time()
    if kind == "c":
        n = len(writers)
        handles = (ctypes.c_int32 * n)(*[w._ref for w in writers])
        bufs = [ctypes.create_string_buffer(p + b"\0" * (-len(p) % 4), len(p) + (-len(p) % 4))
                for p in payloads]
        samples = (ctypes.c_size_t * (2 * n))(*[v for b in bufs
                                                for v in (ctypes.addressof(b), len(b))])
        flat = [k for row in rows for k in row]
        plan = (ctypes.c_int32 * len(flat))(*flat)
        failed = c_loop(handles, samples, plan, len(rows), len(rows[0]), steps,
                        ctypes.c_int64(int(PERIOD * 1e9)))
        assert failed == 0, f"{failed} writes failed"
    else:
        due = time.monotonic()
        for s in range(steps):
            if kind == "python":
                for k in rows[s % len(rows)]:
                    writers[k].write(payloads[k])
            due += PERIOD
            time.sleep(max(due - time.monotonic(), 0.0))
    return {"process_ms": (time.process_time() - cpu) * 1e3 / steps,
            "thread_ms": (time.thread_time() - mine) * 1e3 / steps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--robots", type=int, default=100)
    ap.add_argument("--rclpy", action="store_true", help="a stock rclpy publisher instead")
    ap.add_argument("--kinds", default="c,python", help="blocks beside idle: c, python")
    ap.add_argument("--no-sim", action="store_true", help="skip the sim's own CPU a step")
    ap.add_argument("--unmatched", action="store_true",
                    help="no subscriber: Cyclone's write with no reader to send to")
    args = ap.parse_args()
    if args.rclpy:
        return rclpy_reference(args)
    from suite import ros2cost
    off = 0.0 if args.no_sim else ros2cost.cpu_per_step(args.robots, args.steps, None) * 1e3
    domain = 150 + (os.getpid() + 11) % 50
    bridge, writers, payloads, rows = step_samples(args.robots, domain)
    reader = None if args.unmatched else ros2cost._subscriber(args.robots, domain)
    try:
        deadline = time.monotonic() + 60
        while reader and any(w.matched() == 0 for w in writers[2:]) \
                and time.monotonic() < deadline:
            time.sleep(0.1)  # discovery: every odometry and scan writer matched
        c_loop = compiled(libddsc_path())
        kinds = ["idle"] + [k for k in args.kinds.split(",") if c_loop or k != "c"]
        runs = {k: [] for k in kinds}
        for _ in range(args.rounds):
            for kind in kinds:
                runs[kind].append(block(kind, args.steps, writers, payloads, rows, c_loop))
    finally:
        got = ros2cost.taken(reader) if reader else 0
        bridge.close()
    report(args, off, runs, payloads, rows, got)


def rclpy_reference(args) -> None:
    """A stock rclpy publisher's CPU a step and a message, with an rclpy subscriber."""
    from suite import ros2cost
    ros = os.environ.get("COOPSIM_ROS_PYTHON", "")
    if not os.path.exists(ros):
        raise SystemExit("--rclpy needs COOPSIM_ROS_PYTHON (a ROS 2 venv's python)")
    domain = 150 + (os.getpid() + 17) % 50
    reader = ros2cost._subscriber(args.robots, domain)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "ROS_"))}
    env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    try:
        done = subprocess.run([ros, "-c", RCLPY_PUBLISHER, str(args.robots), str(args.steps),
                               str(args.rounds)], env=env, capture_output=True, text=True)
    finally:
        got = ros2cost.taken(reader)
    res = json.loads(done.stdout.strip().splitlines()[-1])
    idle = statistics.median(res["idle"])
    added = sorted(v - idle for v in res["rclpy"])
    print(json.dumps({"load": open("/proc/loadavg").read().split()[0], "robots": args.robots,
                      "samples_step": res["per"], "idle_ms_step": round(idle, 3),
                      "subscriber_took": got, "rclpy": {
                          "ms_step": round(statistics.median(added), 3),
                          "range": [round(added[0], 3), round(added[-1], 3)],
                          "us_sample": round(statistics.median(added) * 1e3 / res["per"], 2)}}))


def report(args, off: float, runs: dict, payloads, rows, got: int) -> None:
    """One JSON line: the budget, each kind's added CPU a step and a sample (medians, ranges)."""
    idle = statistics.median(r["process_ms"] for r in runs["idle"])
    per = len(rows[0])
    out = {"load": open("/proc/loadavg").read().split()[0], "robots": args.robots,
           "sim_ms_step": round(off, 3), "budget_ms_step": round(off / 9, 3),
           "samples_step": per, "bytes_step": sum(len(payloads[k]) for k in rows[0]),
           "idle_ms_step": round(idle, 3), "subscriber_took": got}
    for kind, rs in runs.items():
        if kind == "idle":
            continue
        added = sorted(r["process_ms"] - idle for r in rs)
        out[kind] = {"ms_step": round(statistics.median(added), 3),
                     "range": [round(added[0], 3), round(added[-1], 3)],
                     "us_sample": round(statistics.median(added) * 1e3 / per, 2),
                     "thread_ms_step": round(statistics.median(r["thread_ms"] for r in rs), 3)}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
