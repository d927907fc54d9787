"""What a ``cmd_vel`` flood costs a realtime ``--ros2`` run: four stock rclpy nodes (from the
ROS 2 venv ``COOPSIM_ROS_PYTHON`` or ``.venv-ros-kilted``) publish Twists as fast as rclpy
can, one node per robot of the demo scenario, and the run's real-time factor (sim time over
wall time) is taken over the flood, beside the same run quiet for as long and the same flood on
topics no reader has (``/nobodyN/cmd_vel``, which DDS never delivers). Prints one JSON line per
case: the factor, the Twists published a second, the run's CPU (every thread: Cyclone's
receiving one too), its CPU a Twist received and the threads that spent most of it, and the
bridge's ``cmd_vel`` counts.

    PYTHONPATH=. python studies/ros2_flood.py --count 100000
    PYTHONPATH=OTHER_TREE python studies/ros2_flood.py   # another tree's bridge, same flood

``--nice`` runs the flooding nodes at the lowest CPU priority (``nice -n 19``), so that on a
machine they would saturate the run still gets the CPU it asks for and the factor shows what
the bridge's reading costs it.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import tempfile
import threading
import time
from pathlib import Path

from coopsim.formats.files import load
from tests.nethelpers import SCENARIOS, live
from tests.ros2.rosnode import RosNode, need_ros

TWIST = "geometry_msgs/msg/Twist"


def factor(run, seconds: float) -> float:
    """The run's real-time factor over the next ``seconds`` of wall time."""
    s0, w0 = run.stepper.snapshot.time, time.perf_counter()
    time.sleep(seconds)
    return (run.stepper.snapshot.time - s0) / (time.perf_counter() - w0)


def thread_cpu() -> dict:
    """CPU seconds of this process's threads: each Python thread by its name, every other
    thread (Cyclone's receiving and timed-event threads, numba's, libzmq's) as "C threads"."""
    tick, out = os.sysconf("SC_CLK_TCK"), {}
    names = {t.native_id: t.name for t in threading.enumerate()}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        name = names.get(int(tid), "C threads")
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def flood(run, nodes, topics, count: int, match: bool) -> dict:
    """Every node publishes ``count`` Twists on its topic at once: the factor over it."""
    sent = [0] * len(nodes)

    def one(k: int) -> None:
        out = nodes[k]("pub", topic=topics[k], type=TWIST, count=count, match=match,
                       msg={"linear": {"x": 0.01}, "angular": {"z": 0.01}})
        sent[k] = len(out["sent"])
    before = dict(run.ros2.state()["ros2"]["cmd_vel"])
    t0 = thread_cpu()
    s0, w0, c0 = run.stepper.snapshot.time, time.perf_counter(), time.process_time()
    threads = [threading.Thread(target=one, args=(k,)) for k in range(len(nodes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - w0
    after = run.ros2.state()["ros2"]["cmd_vel"]
    cpu, received = time.process_time() - c0, after["received"] - before.get("received", 0)
    t1 = thread_cpu()
    threads = sorted(((round(t1[k] - t0.get(k, 0.0), 2), k) for k in t1), reverse=True)[:5]
    return {"factor": round((run.stepper.snapshot.time - s0) / wall, 3),
            "wall_s": round(wall, 2), "twists_per_s": round(sum(sent) / wall),
            "run_cpu_s": round(cpu, 2),
            "run_cpu_us_a_twist": round(cpu / received * 1e6, 1) if received else None,
            "threads_cpu_s": {k: v for v, k in threads if v > 0},
            **{k: after[k] - before.get(k, 0) for k in
               ("received", "applied", "refused", "malformed", "dropped") if k in after}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000, help="Twists each node sends")
    parser.add_argument("--distro", default="kilted", choices=("kilted", "jazzy"))
    parser.add_argument("--domain", type=int, default=197)
    parser.add_argument("--nice", action="store_true", help="flooders at nice 19")
    args = parser.parse_args()
    python = need_ros(args.distro)
    if args.nice:  # a wrapper that starts the ROS Python at the lowest priority
        wrapper = Path(tempfile.mkdtemp()) / "python"
        wrapper.write_text(f'#!/bin/sh\nexec nice -n 19 "{python}" "$@"\n')
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
        python = wrapper
    spec = load(str(SCENARIOS / "demo.scenario"))
    with live(spec, ros2=True, ros2_domain=args.domain, duration=3600.0) as run:
        nodes = [RosNode(python, domain=args.domain) for _ in range(4)]
        try:
            robots = [f"/robot{k}/cmd_vel" for k in range(1, 5)]
            for node, topic in zip(nodes, robots):  # matched, and the robots driven once
                node("pub", topic=topic, type=TWIST, count=5, period=0.05, msg={})
            time.sleep(1.0)
            t0, c0 = thread_cpu(), time.process_time()
            base = factor(run, 3.0)
            t1 = thread_cpu()
            print(json.dumps({"case": "quiet", "factor": round(base, 3),
                              "run_cpu_s_a_s": round((time.process_time() - c0) / 3.0, 3),
                              "threads_cpu_s": {k: round(t1[k] - t0.get(k, 0.0), 2)
                                                for k in t1 if t1[k] - t0.get(k, 0.0) > 0}}),
                  flush=True)
            nobody = [f"/nobody{k}/cmd_vel" for k in range(1, 5)]
            print(json.dumps({"case": "flood, no reader",
                              **flood(run, nodes, nobody, args.count, False)}), flush=True)
            print(json.dumps({"case": "flood, the robots' cmd_vel",
                              **flood(run, nodes, robots, args.count, True)}), flush=True)
        finally:
            for node in nodes:
                node.close()


if __name__ == "__main__":
    main()
