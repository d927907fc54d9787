"""What ``--ros2`` costs a realtime run in CPU (the goal: at most 10 % of the run's CPU
for 100 robots at 50 Hz with odometry, scans and tf going to a subscriber).

The same swarm (100 driving robots, dt 0.02 s: 50 Hz, an 11-ray sonar each, so ``/R/scan`` at
10 Hz) runs paced in real time for the same number of steps twice, without the bridge and with
it (``/clock``, ``/tf`` and every robot's ``/R/odom`` each step, the scans, the cmd_vel
readers); the figure is the share of the bridged run's CPU (this process: the stepper, the
bridge's thread and Cyclone's threads) that the bridge added. The subscriber runs in its own
process: stock rclpy (``COOPSIM_ROS_PYTHON``, a ROS 2 venv: tests/ros2/rosnode.py) taking every
odometry and scan, else a Cyclone DDS reader of the same topics.
"""

import os
import subprocess
import sys
import threading
import time

from .bridges import ROS2_READER, received as taken
from .common import SMOKE, Case, count, sizes, swarm, unit

#: A stock rclpy node taking every robot's odometry and scan (best effort or reliable: the
#: bridge's writers are reliable). Prints "ready" once subscribed, then "count N" (messages
#: taken so far) twice a second, as the Cyclone reader does (:func:`.bridges.received`).
RCLPY_SUBSCRIBER = r"""
import sys, rclpy
from nav_msgs.msg import Odometry
from sensor_msgs.msg import LaserScan
n = int(sys.argv[1]); rclpy.init(); node = rclpy.create_node("bench_subscriber")
got = [0]
def take(msg):
    got[0] += 1
subs = [node.create_subscription(T, f"/r{i}/{t}", take, 10)
        for i in range(n) for t, T in (("odom", Odometry), ("scan", LaserScan))]
timer = node.create_timer(0.5, lambda: print("count", got[0], flush=True))
print("ready", flush=True)
rclpy.spin(node)
"""


def _subscriber(robots: int, domain: int) -> subprocess.Popen:
    """The subscriber process: stock rclpy where a ROS 2 Python is named, else Cyclone."""
    ros = os.environ.get("COOPSIM_ROS_PYTHON", "")
    if ros and os.path.exists(ros):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "ROS_"))}
        env.update(ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        cmd, kw = [ros, "-c", RCLPY_SUBSCRIBER, str(robots)], {"env": env}
    else:
        # the same with Cyclone DDS (no ROS 2 here): the bridges case's reader
        cmd, kw = [sys.executable, "-c", ROS2_READER, str(domain), str(robots)], {}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, **kw)
    proc.stdout.readline()  # ready: subscribed
    return proc


def thread_cpu() -> dict:
    """CPU seconds of each thread of this process so far, by thread id (/proc; empty where
    there is none), with its name as the kernel has it."""
    out, tick = {}, os.sysconf("SC_CLK_TCK")
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                stat = fh.read()
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(tid)] = (stat[stat.index("(") + 1:stat.rindex(")")],
                         (int(fields[11]) + int(fields[12])) / tick)
    return out


def cpu_per_step(robots: int, steps: int, domain: int | None,
                 threads: dict | None = None, received: list | None = None) -> float:
    """CPU seconds of this process per step of a realtime swarm run of ``steps`` steps, with
    the ROS 2 bridge on ``domain`` and a subscriber (None: without); ``threads``, a dict, gets
    each thread's CPU ms a step by its name (the stepper, the bridge, Cyclone's threads);
    ``received``, a list, gets the messages the subscriber took over the whole run (0: it
    never matched the bridge, and the figure is not of a subscribed bridge)."""
    stepper = swarm(robots, mode="realtime")
    bridge = reader = None
    if domain is not None:
        from coopsim.ros2.bridge import RosBridge
        bridge = RosBridge(stepper, domain).start()
        reader = _subscriber(robots, domain)
    try:
        stepper.start()
        first = stepper.snapshot.step
        stepper.wait_step(first + count(50, 2), 120.0)  # matched, the writers made
        before, cpu, at = thread_cpu(), time.process_time(), stepper.snapshot.step
        stepper.wait_step(at + steps - 1, 60.0 + steps)
        used, done = time.process_time() - cpu, stepper.snapshot.step - at
        after, names = thread_cpu(), {t.native_id: t.name for t in threading.enumerate()}
    finally:
        stepper.stop()
        if bridge is not None:
            bridge.close()
        if reader is not None:
            got = taken(reader)
            if received is not None:
                received.append(got)
    if threads is not None:
        for tid, (name, spent) in after.items():
            key = names.get(tid, name)
            was = before.get(tid, (name, 0.0))[1]
            threads[key] = threads.get(key, 0.0) + (spent - was) * 1e3 / max(done, 1)
    return used / max(done, 1)


class Ros2Cpu(Case):
    """The share of a realtime run's CPU that ``--ros2`` adds: 100 robots at 50 Hz, odometry,
    scans and tf to a subscriber in another process, against the same run without."""

    params = (sizes(100, smoke=2),)
    param_names = ("robots",)

    def setup(self, robots):
        try:
            import coopsim.ros2.bridge  # noqa: F401
            import cyclonedds  # noqa: F401
        except ImportError as e:  # the ros2 extra (cyclonedds) is not installed
            raise NotImplementedError(str(e))
        steps = count(500, 10)  # 10 s at 50 Hz
        domain = 150 + (os.getpid() + 25) % 50
        off, got = cpu_per_step(robots, steps, None), []
        on = cpu_per_step(robots, steps, domain, received=got)
        if not got[0] and not SMOKE:  # an unread bridge writes nothing: not the case measured
            raise RuntimeError("ros2cost: the subscriber took no message (it never matched)")
        self.share = max(on - off, 0.0) / on

    @unit("share of CPU")
    def track_share(self, robots):
        return self.share
