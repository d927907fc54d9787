"""A short soak of ``/sim state`` reads: how long can one wait for its reply?

A real-time ``mujoco`` run (two crazyflies, one camera publishing 160x120 images at 30 Hz),
recorded to an MCAP file, with a reader asking ``/sim state`` 50 times a second over a real
ZeroMQ socket and optionally image readers and a stock rclpy subscriber (``--ros2 PYTHON``: a
ROS venv's Python, tests/ros2/rosnode.py) of the camera's images and odometry beside it.
Prints the reply latencies (max, p99.9,
p99, count over 0.5 s / 1 s / 5 s) and, for each read over ``--slow`` s, when it came (wall s
from the start, the run's sim time) so it can be set against what the run was doing.

    PYTHONPATH=$PWD python studies/state_soak.py --seconds 90 [--images 2] \
        [--ros2 .venv-ros-kilted/bin/python]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
import tempfile
import threading
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ros2"))

from coopsim.model.specs import (FloorSpec, ObjectSpec, ParamSetting,  # noqa: E402
                                 RobotSpec, ScenarioSpec, Settings, WorldSpec)
from coopsim.model.compiled import load_pending  # noqa: E402

from nethelpers import Peer, live, lookup  # noqa: E402
from rosnode import RosNode, domain  # noqa: E402

BOX = ObjectSpec("crate", "box", (0.4, 0.6, 0.6), (2.0, 0.0, 1.0), 0.0, 0.0, (40, 200, 40))


def world() -> ScenarioSpec:
    published = tuple(ParamSetting("camera3d", k, v) for k, v in (("publish", 1), ("rate", 30)))
    robots = (RobotSpec("crazyflie", "cf", (0.0, 0.0, 0.5)),
              RobotSpec("crazyflie", "pub", (0.0, 1.0, 0.5), params=published))
    return ScenarioSpec(WorldSpec(FloorSpec(8.0, 8.0)), robots=robots, objects=(BOX,),
                        settings=Settings(dt=0.002, seed=3, engine="mujoco", mode="realtime"),
                        name="soak")


@contextlib.contextmanager
def subscriber(python: str, dom):
    """A stock rclpy node subscribed (reliable, as ROS 2's default) to the camera's images,
    a flyer's odometry; None without ``python``."""
    if not python:
        yield None
        return
    with RosNode(Path(python), domain=dom) as node:
        for topic, kind in (("/pub/camera3d/image_raw", "sensor_msgs/msg/Image"),
                            ("/cf/odom", "nav_msgs/msg/Odometry")):
            node("sub", topic=topic, type=kind, reliable=True, depth=10)
        yield node


def watch_collections():
    """Time every cyclic-GC collection of this process (wall s, by generation, with the
    objects it tracked then): a collection holds the GIL from start to end."""
    rows, started = [], [0.0]

    def callback(phase, info):
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            rows.append((info["generation"], time.perf_counter() - started[0],
                         len(gc.get_objects(info["generation"]))))
    gc.callbacks.append(callback)
    return types.SimpleNamespace(rows=rows, callback=callback)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=90.0)
    ap.add_argument("--rate", type=float, default=50.0, help="state reads a second")
    ap.add_argument("--images", type=int, default=0, help="threads reading images meanwhile")
    ap.add_argument("--slow", type=float, default=0.5, help="s: a read this slow is listed")
    ap.add_argument("--ros2", default="", help="a ROS venv's Python: a stock rclpy subscriber")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="coopsim-soak-"))
    ros = dict(ros2=True, ros2_domain=domain() + 9) if args.ros2 else {}
    with live(world(), record=str(folder / "soak.mcap"), data_dirs=(str(folder),),
              **ros) as run, subscriber(args.ros2, ros.get("ros2_domain")) as node:
        load_pending()
        run.stepper.wait_step(0, 600.0)
        if node is not None:
            node("take", topic="/pub/camera3d/image_raw", n=1, timeout=120.0, fields=["width"])
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        stop = threading.Event()

        def images() -> None:
            peer = Peer(lookup(run.network.endpoint, "/cf/camera3d"))
            while not stop.is_set():
                peer.ask(5000, "rgb raw", timeout=60.0)
            peer.close()

        readers = [threading.Thread(target=images, daemon=True) for _ in range(args.images)]
        for reader in readers:
            reader.start()
        collections = watch_collections()
        lat, slow = [], []
        t0 = time.perf_counter()
        period = 1.0 / args.rate
        nxt = t0
        while time.perf_counter() - t0 < args.seconds:
            a = time.perf_counter()
            reply = sim.ask(23, timeout=60.0)
            d = time.perf_counter() - a
            lat.append(d)
            if d > args.slow or reply[0]:
                slow.append((round(a - t0, 2), round(d, 3), reply[0],
                             round(run.stepper.snapshot.time, 3)))
            nxt += period
            time.sleep(max(0.0, nxt - time.perf_counter()))
        stop.set()
        sim.close()
        sim_time = run.stepper.snapshot.time
        gc.callbacks.remove(collections.callback)
        for gen in range(3):
            took = [d for g, d, _ in collections.rows if g == gen]
            if took:
                print(f"gc generation {gen}: {len(took)} collections, max {max(took) * 1e3:.1f} "
                      f"ms, total {sum(took) * 1e3:.0f} ms (wall); tracked objects at the "
                      f"last: {max(n for g, _, n in collections.rows if g == gen)}")
        if node is not None:
            got = node("take", topic="/pub/camera3d/image_raw", n=1, timeout=5.0,
                       fields=["width"])["count"]
            print(f"the ROS 2 subscriber took {got} images")
    lat.sort()
    n = len(lat)
    print(f"{n} state reads in {args.seconds:g} s ({args.images} image readers); sim time "
          f"{sim_time:.1f} s; max {lat[-1] * 1e3:.1f} ms, p99.9 {lat[int(n * 0.999)] * 1e3:.1f} "
          f"ms, p99 {lat[int(n * 0.99)] * 1e3:.1f} ms, median {lat[n // 2] * 1e3:.2f} ms; "
          f"over 0.5 s: {sum(x > 0.5 for x in lat)}, over 1 s: {sum(x > 1 for x in lat)}, "
          f"over 5 s: {sum(x > 5 for x in lat)}")
    for row in slow:
        print("slow (wall s, reply s, error, sim time):", row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
