"""ROS 2 cmd_vel latency: a stock rclpy node (the ``ros-*`` wheels' Python, ``COOPSIM_ROS_PYTHON``,
Fast DDS) publishes Twists to a realtime ``--ros2`` run (the demo's four robots, dt 0.01 s, no
controllers); for each Twist, the time from its publication to the end of the first step that
moved the robot with it (the step whose command read, ``slots.take``, held it). The goal:
p95 within one step (dt) + 2 ms on a quiet machine. Both ends read CLOCK_MONOTONIC, one clock
for every process of the machine. Reported: p50, p95 and the worst latency (ms), the p95's part
in DDS (publish to coopsim's listener) and the bound (dt + 2 ms); beside them, in the same run,
the same figures for a ZeroMQ client's wheel-speed commands (the baseline).

Run as a table: ``cd benchmarks && PYTHONPATH=.. python -m suite.ros2_latency [N]``.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .common import Case, root, unit

#: The publisher: N Twists at 20 Hz, each linear.x unique (0.1 + i * 1e-4 m/s), its send time;
#: argv: N, then the seconds it waits once matched (1 s; 0.2 at smoke size, whose figures
#: nobody reads)
PUBLISHER = r"""
import json, sys, time
import rclpy
from geometry_msgs.msg import Twist
rclpy.init()
node = rclpy.create_node("latency_probe")
pub = node.create_publisher(Twist, "/robot1/cmd_vel", 10)
deadline = time.monotonic() + 60
while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
    rclpy.spin_once(node, timeout_sec=0.05)
time.sleep(float(sys.argv[2]))  # matched both ways: the first samples are not discovery's
for i in range(int(sys.argv[1])):
    t = Twist()
    t.linear.x = 0.1 + i * 1e-4
    sent = time.monotonic()
    pub.publish(t)
    print(json.dumps({"i": i, "x": t.linear.x, "t": sent}), flush=True)
    time.sleep(0.05)
"""


#: The baseline in the same run: a ZeroMQ client (coopsim's, another process) sending the same
#: commands as wheel speeds to robot2 (``motors.set_speeds``), send time before each request.
ZMQ_SENDER = r"""
import json, sys, time
from coopsim.client import Client
with Client(sys.argv[1]) as c:
    bot = c.robot("robot2")
    for i in range(int(sys.argv[2])):
        x = 0.1 + i * 1e-4
        sent = time.monotonic()
        bot.motors.set_speeds(x, x)
        print(json.dumps({"i": i, "x": x, "t": sent}), flush=True)
        time.sleep(0.05)
"""


def measure(n: int = 200, python: str | None = None) -> dict:
    """Latencies of ``n`` Twists (ms): p50, p95, max, the DDS part's p95 and the bound; and
    ``zmq``: the same figures for a ZeroMQ client's commands in the same run (the baseline)."""
    from coopsim.app.run import Run, RunOptions
    from coopsim.formats.files import load

    python = python or os.environ.get("COOPSIM_ROS_PYTHON")
    if not python or not Path(python).exists():
        raise NotImplementedError("no ROS 2 Python: set COOPSIM_ROS_PYTHON (.ci/ros-venvs)")
    domain = 150 + os.getpid() % 50
    scenario = load(str(root() / "scenarios" / "demo.scenario"))
    arrived, taken, ended = {}, {"robot1": [], "robot2": []}, {}
    options = RunOptions(port=0, controllers=False, ros2=True, ros2_domain=domain,
                         duration=3600.0)
    with Run(scenario, options) as run:
        stepper, bridge = run.stepper, run.ros2
        _watch(stepper, bridge, arrived, taken, ended)
        run.start()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "ROS_"))}
        env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        settle = "0.2" if os.environ.get("COOPSIM_BENCH_SMOKE") else "1.0"
        out = subprocess.run([python, "-c", PUBLISHER, str(n), settle], capture_output=True,
                             text=True,
                             env=env, timeout=n * 0.05 + 120).stdout
        base = subprocess.run([sys.executable, "-c", ZMQ_SENDER, run.network.endpoint, str(n)],
                              capture_output=True, text=True, timeout=n * 0.05 + 120).stdout
        time.sleep(0.2)  # the last command's step
        dt = stepper.sim.dt
    figures = _figures(_lines(out), arrived, taken["robot1"], ended, dt)
    figures["zmq"] = _figures(_lines(base), {}, taken["robot2"], ended, dt)
    figures["p95_over_zmq"] = figures["p95_ms"] / figures["zmq"]["p95_ms"]
    return figures


def _lines(out: str) -> list:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _watch(stepper, bridge, arrived, taken, ended) -> None:
    """Note when each Twist reaches the bridge, which step's command read holds it, and when
    each step ends (the stepper's hook, after the step)."""
    apply, take = bridge.cmd_vel.apply, stepper.slots.take

    def on_twist(robot, linear, angular):  # the bridge's cmd_vel thread read it
        arrived.setdefault(round(linear[0], 6), time.monotonic())
        apply(robot, linear, angular)

    def on_take(*args):  # the slots' take, whatever it is given (the step's time)
        out = take(*args)
        for (robot, _), values in out.items():
            if robot in taken:  # a differential drive: left = right = linear.x
                taken[robot].append((stepper.snapshot.step + 1, round(values[0], 6)))
        return out
    bridge.cmd_vel.apply, stepper.slots.take = on_twist, on_take
    stepper.hooks.append(lambda snap: ended.setdefault(snap.step, time.monotonic()))


def _figures(sent, arrived, taken, ended, dt) -> dict:
    first_step = {}
    for step, x in taken:
        first_step.setdefault(x, step)
    total, dds = [], []
    for s in sent:
        x = round(s["x"], 6)
        if x in first_step and first_step[x] in ended:
            total.append((ended[first_step[x]] - s["t"]) * 1e3)
            dds.append((arrived.get(x, s["t"]) - s["t"]) * 1e3)
    if not total:
        raise RuntimeError("no Twist reached a step")
    total.sort()
    dds.sort()

    def pct(v, q):
        return v[min(len(v) - 1, int(q * len(v)))]
    return {"n": len(total), "sent": len(sent), "p50_ms": pct(total, 0.5),
            "p95_ms": pct(total, 0.95), "max_ms": total[-1], "dds_p95_ms": pct(dds, 0.95),
            "bound_ms": dt * 1e3 + 2.0}


class CmdVelLatency(Case):
    """cmd_vel from a stock rclpy node to the end of the step that moved the robot with it,
    p95 in ms, beside its bound (one step + 2 ms) as a ratio."""

    timeout = 300
    rounds = 1

    def setup(self):
        # smoke: 10 Twists (0.5 s of publishing, and as long for the ZeroMQ baseline's)
        self.figures = measure(10 if os.environ.get("COOPSIM_BENCH_SMOKE") else 200)

    @unit("ms")
    def track_p95_ms(self):
        return self.figures["p95_ms"]

    @unit("x bound")
    def track_p95_over_bound(self):
        return self.figures["p95_ms"] / self.figures["bound_ms"]

    @unit("x zmq")
    def track_p95_over_zmq(self):
        return self.figures["p95_over_zmq"]


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 200), indent=1))
