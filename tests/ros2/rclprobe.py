"""A plain rclpy node (stock ROS 2 from the ``ros-*`` wheels, nothing of coopsim imported) that a
test drives with JSON lines on stdin, one JSON line answered on stdout per command.

Run with a ROS venv's python (tests/ros2/rosnode.py finds it and sets the environment):
``python rclprobe.py [--sim-time]``. It prints ``{"ready": true, "rclpy": ..., "rmw": ...}``
first, then answers:

- ``{"cmd": "sub", "topic": T, "type": "nav_msgs/msg/Odometry", "reliable": true,
  "transient": false, "depth": 10}``: subscribe (the samples are kept, the last ``keep``).
- ``{"cmd": "take", "topic": T, "n": N, "timeout": S, "fields": [...]}``: wait until N samples
  arrived on T since it was subscribed (or since the last ``clear``), answer
  ``{"count": c, "msgs": [...]}`` with the last N as dicts (only ``fields`` when given:
  dotted paths), each with ``"_rx"``, the wall time (s, monotonic) it arrived.
- ``{"cmd": "clear", "topic": T}``: forget T's samples.
- ``{"cmd": "pub", "topic": T, "type": ..., "msg": {...}, "count": n, "period": s,
  "reliable": true, "match": true}``: publish ``count`` copies ``period`` s apart, after a
  subscriber matched (unless ``match`` is false); answers the monotonic send times.
- ``{"cmd": "call", "service": S, "type": "std_srvs/srv/Trigger", "request": {...},
  "timeout": s}``: call a service (waits for it first); answers ``{"response": {...}}`` or
  ``{"error": "..."}``.
- ``{"cmd": "graph", "wait_topic": T, "wait_node": N, "timeout": S}``: topics with types,
  nodes, services, as the ROS 2 graph shows them, after waiting for T and N to show (both
  optional; ``wait_gone``: until node N has left); ``"found"`` says whether they did.
- ``{"cmd": "endpoints", "topic": T, "kind": "pub" | "sub", "wait_node": N, "timeout": S}``:
  the topic's publishers (or subscriptions) as the ROS 2 graph shows them (``ros2 topic info
  -v``): node name and namespace, type, GID; after waiting until one shows (with
  ``wait_node``: until one shows as that node's, ``"found"`` says whether it did).
- ``{"cmd": "now"}``: the node's clock (sim time with ``--sim-time``), ns.
- ``{"cmd": "quit"}``.

Every wait is on a condition with a cap, so a test fails instead of hanging.
"""

from __future__ import annotations

import array
import importlib
import json
import math
import os
import sys
from importlib import metadata
import threading
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

CAP = 120.0  # s: the longest any wait may take


def ros_type(name: str):
    """``pkg/msg/Name`` or ``pkg/srv/Name`` -> the generated class."""
    pkg, kind, cls = name.split("/")
    return getattr(importlib.import_module(f"{pkg}.{kind}"), cls)


def to_dict(msg, fields=None):
    """A message as plain JSON values (NaN and inf as strings, which JSON lacks)."""
    if fields:
        return {f: plain(_path(msg, f)) for f in fields}
    return plain(msg)


def _path(msg, dotted: str):
    for part in dotted.split("."):
        msg = msg[int(part)] if part.isdigit() else getattr(msg, part)
    return msg


def plain(value):
    if hasattr(value, "get_fields_and_field_types"):
        return {k: plain(getattr(value, k)) for k in value.get_fields_and_field_types()}
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, (list, tuple, array.array)) or hasattr(value, "tolist"):
        value = value.tolist() if hasattr(value, "tolist") else list(value)
        return [plain(v) for v in value] if isinstance(value, list) else plain(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def fill(msg, values: dict):
    """Set ``values`` (a dict, nested for nested messages) on ``msg``; "nan"/"inf" strings
    become floats."""
    for key, value in values.items():
        if isinstance(value, dict):
            fill(getattr(msg, key), value)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            # a sequence of messages: its element type from the field's declared type
            kind = msg.get_fields_and_field_types()[key]
            inner = kind[kind.index("<") + 1:].rstrip(">").split(",")[0]
            pkg, name = inner.split("/")
            cls = ros_type(f"{pkg}/msg/{name}")
            setattr(msg, key, [fill(cls(), v) for v in value])
        else:
            if isinstance(value, str) and value.lower().lstrip("+-") in ("nan", "inf"):
                value = float(value)
            setattr(msg, key, value)
    return msg


def qos(cmd: dict) -> QoSProfile:
    return QoSProfile(
        depth=int(cmd.get("depth", 10)),
        reliability=(ReliabilityPolicy.RELIABLE if cmd.get("reliable", True)
                     else ReliabilityPolicy.BEST_EFFORT),
        durability=(DurabilityPolicy.TRANSIENT_LOCAL if cmd.get("transient")
                    else DurabilityPolicy.VOLATILE))


class Probe:
    def __init__(self, sim_time: bool) -> None:
        self.node = Node("coopsim_probe", parameter_overrides=[
            rclpy.parameter.Parameter("use_sim_time", value=sim_time)])
        self.changed = threading.Condition()
        self.samples: dict[str, list] = {}
        self.counts: dict[str, int] = {}
        self.subs, self.pubs = {}, {}
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.spinning = threading.Thread(target=self._spin, daemon=True)
        self.spinning.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001 - shutting down
            pass

    def _wait(self, ready, timeout: float) -> bool:
        deadline = time.monotonic() + min(float(timeout), CAP)
        with self.changed:
            while not ready():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(min(left, 0.05))
        return True

    def sub(self, cmd: dict) -> dict:
        topic, keep = cmd["topic"], int(cmd.get("keep", 200))

        def got(msg, topic=topic):
            with self.changed:
                kept = self.samples.setdefault(topic, [])
                kept.append((time.monotonic(), msg))
                del kept[:-keep]
                self.counts[topic] = self.counts.get(topic, 0) + 1
                self.changed.notify_all()
        self.samples.setdefault(topic, [])
        self.counts.setdefault(topic, 0)
        self.subs[topic] = self.node.create_subscription(ros_type(cmd["type"]), topic, got,
                                                         qos(cmd))
        return {"ok": True}

    def take(self, cmd: dict) -> dict:
        topic, n = cmd["topic"], int(cmd.get("n", 1))
        self._wait(lambda: self.counts.get(topic, 0) >= n, cmd.get("timeout", 30))
        with self.changed:
            kept = list(self.samples.get(topic, []))[-n:]
            count = self.counts.get(topic, 0)
        msgs = []
        for rx, msg in kept:
            d = to_dict(msg, cmd.get("fields"))
            d["_rx"] = rx
            msgs.append(d)
        return {"count": count, "msgs": msgs}

    def clear(self, cmd: dict) -> dict:
        with self.changed:
            self.samples[cmd["topic"]] = []
            self.counts[cmd["topic"]] = 0
        return {"ok": True}

    def pub(self, cmd: dict) -> dict:
        topic, cls = cmd["topic"], ros_type(cmd["type"])
        pub = self.pubs.get(topic)
        if pub is None:
            pub = self.pubs[topic] = self.node.create_publisher(cls, topic, qos(cmd))
        if cmd.get("match", True) and not self._wait(lambda: pub.get_subscription_count() > 0,
                                                     cmd.get("timeout", 30)):
            return {"error": f"no subscriber matched {topic}"}
        msg = fill(cls(), cmd.get("msg", {}))
        sent, period = [], float(cmd.get("period", 0.0))
        for _ in range(int(cmd.get("count", 1))):
            pub.publish(msg)
            sent.append(time.monotonic())
            if period:
                time.sleep(period)
        return {"sent": sent}

    def call(self, cmd: dict) -> dict:
        cls = ros_type(cmd["type"])
        client = self.node.create_client(cls, cmd["service"])
        try:
            if not client.wait_for_service(timeout_sec=min(float(cmd.get("wait", 30)), CAP)):
                return {"error": f"service {cmd['service']} not available"}
            done = threading.Event()
            t0 = time.monotonic()
            future = client.call_async(fill(cls.Request(), cmd.get("request", {})))
            future.add_done_callback(lambda _f: done.set())
            if not done.wait(min(float(cmd.get("timeout", 30)), CAP)):
                return {"error": "no response"}
            return {"response": plain(future.result()), "seconds": time.monotonic() - t0}
        finally:
            self.node.destroy_client(client)

    def graph(self, cmd: dict) -> dict:
        found = True  # what was waited for showed (a test asserts it: no silent time-out)
        if cmd.get("wait_topic"):  # discovery takes a moment: wait for one topic to show
            found = self._wait(lambda: any(n == cmd["wait_topic"] for n, _ in
                                           self.node.get_topic_names_and_types()),
                               cmd.get("timeout", 30))
        if cmd.get("wait_node"):
            found = found and self._wait(lambda: cmd["wait_node"] in self._nodes(),
                                         cmd.get("timeout", 30))
        if cmd.get("wait_gone"):  # until a node has left the graph
            found = found and self._wait(lambda: cmd["wait_gone"] not in self._nodes(),
                                         cmd.get("timeout", 30))
        return {"found": found,
                "topics": {n: t for n, t in self.node.get_topic_names_and_types()},
                "nodes": self._nodes(),
                "services": {n: t for n, t in self.node.get_service_names_and_types()}}

    def endpoints(self, cmd: dict) -> dict:
        get = (self.node.get_publishers_info_by_topic if cmd.get("kind", "pub") == "pub"
               else self.node.get_subscriptions_info_by_topic)
        want = cmd.get("wait_node")

        def shown() -> bool:
            found = get(cmd["topic"])
            return bool(found) and (want is None or any(
                (i.node_namespace.rstrip("/") + "/" + i.node_name) == want for i in found))
        found = self._wait(shown, cmd.get("timeout", 30))
        return {"found": found, "endpoints": [
            {"node": i.node_namespace.rstrip("/") + "/" + i.node_name, "type": i.topic_type,
             "gid": list(i.endpoint_gid)} for i in get(cmd["topic"])]}

    def _nodes(self) -> list:
        return [(ns.rstrip("/") + "/" + n) for n, ns in
                self.node.get_node_names_and_namespaces()]

    def now(self, cmd: dict) -> dict:
        return {"ns": self.node.get_clock().now().nanoseconds}


def main() -> None:
    rclpy.init()
    probe = Probe("--sim-time" in sys.argv[1:])
    print(json.dumps({"ready": True, "rmw": rclpy.get_rmw_implementation_identifier(),
                      "rclpy": rclpy_version()}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "quit":
            break
        try:
            out = getattr(probe, cmd["cmd"])(cmd)
        except Exception as exc:  # noqa: BLE001 - answered, the test reads it
            out = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(out), flush=True)
    rclpy.try_shutdown()  # the spinning thread returns
    sys.stdout.flush()
    # torn down once the executor stopped (destroying a node under a spinning executor can
    # abort in rclpy's C layer), Fast DDS removes its /dev/shm segments; else they stay
    probe.spinning.join(2.0)
    if not probe.spinning.is_alive() and probe.executor.shutdown(timeout_sec=2.0):
        probe.node.destroy_node()
        sys.exit(0)
    os._exit(0)


def rclpy_version() -> str:
    """The rclpy wheel's distribution and version (``ros-rclpy 9.1.2``: Kilted)."""
    for dist in ("ros-rclpy", "ros-jazzy-rclpy", "ros-kilted-rclpy"):
        try:
            return f"{dist} {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    return "rclpy (not from a wheel)"


if __name__ == "__main__":
    main()
