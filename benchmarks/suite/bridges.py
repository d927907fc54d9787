"""Bridges: what the Foxglove and ROS 2 bridges cost a run, how fast a recording becomes a
Foxglove MCAP or a ROS 2 bag, and what an arm's messages cost per step (was
benchmarks/foxglove_bench.py, ros2_bench.py and arms_view_bench.py)."""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import Case, alternate, build, count, per_call_ms, record, sizes, swarm, tick_ms, \
    unit

#: A Foxglove client in its own process subscribed to every topic it is offered.
FOXGLOVE_CLIENT = r"""
import json, sys
from websockets.sync.client import connect
with connect(sys.argv[1], subprotocols=["foxglove.sdk.v1"], max_size=None) as ws:
    print("connected", flush=True)
    while True:
        m = ws.recv()
        if isinstance(m, str) and json.loads(m)["op"] == "advertise":
            ws.send(json.dumps({"op": "subscribe", "subscriptions": [
                {"id": c["id"], "channelId": c["id"]} for c in json.loads(m)["channels"]]}))
"""

#: A DDS participant in its own process reading every robot's odometry and scan. Its topics
#: are typed (the binding's type information) while the bridge's writers announce none: Cyclone
#: matches them by type name. It prints "count N" (samples taken so far) twice a second, so the
#: cases can say whether it matched at all (:func:`received`).
ROS2_READER = r"""
import sys, time
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from coopsim.ros2.dds import idl_types, loopback_config
dom, n = int(sys.argv[1]), int(sys.argv[2])
d = Domain(dom, loopback_config()); dp = DomainParticipant(dom); T = idl_types()
rs = [DataReader(dp, Topic(dp, f"rt/r{i}/{t}", T[k])) for i in range(n)
      for t, k in (("odom", "nav_msgs/Odometry"), ("scan", "sensor_msgs/LaserScan"))]
print("ready", flush=True)
got, said = 0, time.monotonic()
while True:
    for r in rs:
        got += len(r.take(64))
    if time.monotonic() - said > 0.5:
        print("count", got, flush=True)
        said = time.monotonic()
    time.sleep(0.01)
"""


def received(reader: subprocess.Popen) -> int:
    """Kill a subscriber process that prints ``count N`` lines (:data:`ROS2_READER`) and
    return the last N it printed: the samples it took (0: it never matched the bridge)."""
    reader.kill()
    out, _ = reader.communicate(timeout=10)
    counts = [int(line.split()[1]) for line in out.splitlines() if line.startswith("count ")]
    return counts[-1] if counts else 0


def _bridged_ratio(stepper, on, off, reader: subprocess.Popen, close) -> float:
    """A tick with the bridge fed (``on()``) over one without (``off()``), blocks alternating,
    while ``reader`` (a client process) takes what it publishes; then ``close()`` the bridge
    (before the reader goes: no half-closed connection to complain of)."""
    try:
        reader.stdout.readline()  # connected
        on()
        tick_ms(stepper, 50, blocks=1)  # advertised, subscribed, matched

        def fed():
            on()
            ms = tick_ms(stepper, 100, blocks=1)
            off()
            time.sleep(0.05)  # the bridge's thread drains what it had
            return ms
        plain, bridged = alternate(lambda: tick_ms(stepper, 100, blocks=1), fed)
        assert reader.poll() is None, "the bridge's client died"
        return bridged / plain
    finally:
        close()
        reader.kill()
        reader.wait()


class Foxglove(Case):
    """N driving robots (dt 0.02 s, unpaced ticks), the bridge publishing at 20 Hz to a client
    subscribed to every topic: a tick while it publishes over one while it has nothing new
    (its thread competes for the GIL)."""

    params = (sizes(500, smoke=2),)
    param_names = ("robots",)

    def setup(self, robots):
        from coopsim.foxglove.bridge import Bridge, LiveSource

        stepper = swarm(robots, mode="realtime")
        source = LiveSource(stepper)
        held = stepper.view()
        world = stepper.sim.world  # what LiveSource.layout takes on a stepper thread
        layout = (held[1], world.describe(), {r.name: {label: dict(v.as_dict()) for label, v
                                                       in r.modules.items()} for r in world.robots})
        state = {"on": False, "held": held}

        def current():  # the last snapshot shown while off: nothing new to publish
            if state["on"]:
                state["held"] = stepper.view()
            return (*state["held"], time.time_ns())
        source.current, source.layout = current, lambda: layout
        bridge = Bridge(source, "127.0.0.1", 0, 20.0).start()
        client = subprocess.Popen([sys.executable, "-c", FOXGLOVE_CLIENT, bridge.url],
                                  stdout=subprocess.PIPE, text=True)
        self.ratio = _bridged_ratio(stepper, lambda: state.update(on=True),
                                    lambda: state.update(on=False), client, bridge.close)

    @unit("x step")
    def track_ratio(self, robots):
        return self.ratio


class Ros2(Case):
    """N driving robots in realtime mode (dt 0.02 s, unpaced ticks; odometry, /tf and /clock
    every step, scans at 10 Hz), a DDS reader of every odometry and scan in another process:
    a tick with the bridge hooked on over one without."""

    params = (sizes(100, smoke=2),)
    param_names = ("robots",)

    def setup(self, robots):
        try:
            from coopsim.ros2.bridge import RosBridge
        except ImportError as e:  # the ros2 extra (cyclonedds) is not installed
            raise NotImplementedError(str(e))
        domain = 150 + os.getpid() % 50
        stepper = swarm(robots, mode="realtime")
        bridge = RosBridge(stepper, domain).start()
        stepper.hooks.remove(bridge)
        reader = subprocess.Popen([sys.executable, "-c", ROS2_READER, str(domain), str(robots)],
                                  stdout=subprocess.PIPE, text=True)
        self.ratio = _bridged_ratio(stepper, lambda: stepper.hooks.append(bridge),
                                    lambda: stepper.hooks.remove(bridge), reader, bridge.close)

    @unit("x step")
    def track_ratio(self, robots):
        return self.ratio


class Export(Case):
    """A recording of 100 driving robots, one minute at 50 Hz: its export to a Foxglove MCAP
    or a ROS 2 bag, ms per recorded step (x real time = 20 / this)."""

    params = (["foxglove", "ros2"],)
    param_names = ("to",)

    def setup(self, to):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / "rec.mcap"
        self.steps = record(self.path, count(100, 2), count(3000, 20)).frames

    def teardown(self, to):
        self.tmp.cleanup()

    @unit("ms/step")
    def track_ms_per_step(self, to):
        from coopsim.foxglove.export import export_foxglove
        from coopsim.recording.reader import Recording
        from coopsim.ros2.bag import export_ros2

        out = Path(self.tmp.name) / f"out-{to}"
        with Recording(self.path) as rec:
            t0 = time.perf_counter()
            (export_foxglove if to == "foxglove" else export_ros2)(rec, out)
            return (time.perf_counter() - t0) * 1e3 / self.steps


class ArmMessages(Case):
    """One ``irb120`` on the mujoco engine at 1 kHz holding a pose: per step, the Foxglove arm
    messages (``ArmScene.messages``) and the ROS 2 ones (``RosScene.arm_messages``), over the
    step itself."""

    params = (["foxglove", "ros2"],)
    param_names = ("bridge",)

    def setup(self, bridge):
        from coopsim.foxglove.arms import ArmScene
        from coopsim.model.specs import FloorSpec, RobotSpec, ScenarioSpec, Settings, WorldSpec
        from coopsim.ros2.scene import RosScene

        spec = ScenarioSpec(WorldSpec(FloorSpec(3.0, 3.0)), name="arms_view",
                            robots=(RobotSpec("irb120", "irb", (0.0, 0.0, 0.0), 0.0),),
                            settings=Settings(dt=0.001, mode="lockstep", engine="mujoco"))
        self.stepper = build(spec, warm=0)
        layout = self.stepper.sim.world.describe()
        if bridge == "foxglove":
            scene = ArmScene(layout)
            self.call = lambda: scene.messages(self.stepper.snapshot, 0)
        else:
            scene = RosScene(layout, self.stepper.snapshot)
            self.call = lambda: scene.arm_messages(self.stepper.snapshot, 0)

    @unit("x step")
    def track_ratio(self, bridge):
        step, messages = alternate(lambda: tick_ms(self.stepper, 200, 1),
                                   lambda: per_call_ms(self.call, 200, 1))
        return messages / step
