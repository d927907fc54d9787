"""A DDS participant of its own (another process, like a ROS 2 node): finds coopsim's topics,
reads odometry, scans and tf, and publishes Twists. Its ROS 2 types are declared here from the
ROS 2 interface definitions, independently of coopsim's encoder.

Driven by JSON lines on stdin, one JSON line answered on stdout per command:
``{"cmd": "topics", "expect": [...]}``, ``{"cmd": "drive", "robot": R, "linear": v,
"angular": w, "steps": n}``, ``{"cmd": "odom_at", "robot": R, "ns": t}``, ``{"cmd":
"tf_static"}``, ``{"cmd": "scans", "robot": R}``, ``{"cmd": "twist", ...}``, ``{"cmd":
"pose", "robot": R, "x": x, "y": y, "yaw": a}`` (an external robot's PoseStamped),
``{"cmd": "quit"}``.
Every wait is on a condition (a sample arriving) with a cap that fails the command instead of
hanging the test.
"""

from __future__ import annotations

import json
import math
import sys
import time
import types
from dataclasses import dataclass

from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl import types as t
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

CAP = 120.0  # s: a wait that long fails the command (the test then fails, it does not hang)
CONFIG = ("<CycloneDDS><Domain id='any'><General><Interfaces><NetworkInterface "
          "address='127.0.0.1'/></Interfaces><AllowMulticast>false</AllowMulticast></General>"
          "<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32"
          "</MaxAutoParticipantIndex><Peers><Peer address='127.0.0.1'/></Peers></Discovery>"
          "</Domain></CycloneDDS>")


def ros(pkg: str, name: str, /, **fields):
    cls = types.new_class(name, (IdlStruct,), {"typename": f"{pkg}::msg::dds_::{name}_"},
                          lambda ns: ns.update(__annotations__=fields))
    return dataclass(cls)


Time = ros("builtin_interfaces", "Time", sec=t.int32, nanosec=t.uint32)
Header = ros("std_msgs", "Header", stamp=Time, frame_id=str)
Vector3 = ros("geometry_msgs", "Vector3", x=t.float64, y=t.float64, z=t.float64)
Point = ros("geometry_msgs", "Point", x=t.float64, y=t.float64, z=t.float64)
Quaternion = ros("geometry_msgs", "Quaternion", x=t.float64, y=t.float64, z=t.float64,
                 w=t.float64)
Pose = ros("geometry_msgs", "Pose", position=Point, orientation=Quaternion)
Twist = ros("geometry_msgs", "Twist", linear=Vector3, angular=Vector3)
PoseWC = ros("geometry_msgs", "PoseWithCovariance", pose=Pose,
             covariance=t.array[t.float64, 36])
TwistWC = ros("geometry_msgs", "TwistWithCovariance", twist=Twist,
              covariance=t.array[t.float64, 36])
Odometry = ros("nav_msgs", "Odometry", header=Header, child_frame_id=str, pose=PoseWC,
               twist=TwistWC)
LaserScan = ros("sensor_msgs", "LaserScan", header=Header, angle_min=t.float32,
                angle_max=t.float32, angle_increment=t.float32, time_increment=t.float32,
                scan_time=t.float32, range_min=t.float32, range_max=t.float32,
                ranges=t.sequence[t.float32], intensities=t.sequence[t.float32])
Transform = ros("geometry_msgs", "Transform", translation=Vector3, rotation=Quaternion)
TransformStamped = ros("geometry_msgs", "TransformStamped", header=Header, child_frame_id=str,
                       transform=Transform)
TFMessage = ros("tf2_msgs", "TFMessage", transforms=t.sequence[TransformStamped])
PoseStamped = ros("geometry_msgs", "PoseStamped", header=Header, pose=Pose)
JointState = ros("sensor_msgs", "JointState", header=Header, name=t.sequence[str],
                 position=t.sequence[t.float64], velocity=t.sequence[t.float64],
                 effort=t.sequence[t.float64])


def stamp(header) -> int:
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def yaw(q) -> float:
    return 2 * math.atan2(q.z, q.w)


class Node:
    def __init__(self, domain: int) -> None:
        self.domain = Domain(domain, CONFIG)
        self.dp = DomainParticipant(domain)
        self.pubs = BuiltinDataReader(self.dp, BuiltinTopicDcpsPublication)
        self.seen: dict[str, str] = {}
        self.odom: dict[str, dict[int, dict]] = {}
        self.scan: dict[str, list] = {}
        self.readers: dict[str, tuple] = {}
        self.writers: dict[str, DataWriter] = {}
        from cyclonedds.core import Policy
        from cyclonedds.qos import Qos
        latched = Qos(Policy.Reliability.Reliable(0), Policy.Durability.TransientLocal,
                      Policy.History.KeepLast(1))
        self.tf_static = DataReader(self.dp, Topic(self.dp, "rt/tf_static", TFMessage),
                                    qos=latched)

    def follow(self, robot: str) -> None:
        if robot not in self.readers:
            self.readers[robot] = (
                DataReader(self.dp, Topic(self.dp, f"rt/{robot}/odom", Odometry)),
                DataReader(self.dp, Topic(self.dp, f"rt/{robot}/scan", LaserScan)))
            self.writers[robot] = DataWriter(self.dp,
                                             Topic(self.dp, f"rt/{robot}/cmd_vel", Twist))
            self.odom[robot], self.scan[robot] = {}, []

    def poll(self) -> None:
        for p in self.pubs.take(256):
            self.seen[p.topic_name] = p.type_name
        for robot, (odom, scan) in self.readers.items():
            for o in odom.take(256):
                pose = o.pose.pose
                self.odom[robot][stamp(o.header)] = {
                    "ns": stamp(o.header), "x": pose.position.x, "y": pose.position.y,
                    "yaw": yaw(pose.orientation), "frame": o.header.frame_id,
                    "child": o.child_frame_id, "forward": o.twist.twist.linear.x,
                    "turn": o.twist.twist.angular.z}
            for s in scan.take(256):
                self.scan[robot].append({"ns": stamp(s.header), "frame": s.header.frame_id,
                                         "ranges": [None if math.isinf(r) else r
                                                    for r in s.ranges],
                                         "range_max": s.range_max})

    def until(self, predicate):
        end = time.monotonic() + CAP
        while time.monotonic() < end:
            self.poll()
            value = predicate()
            if value:
                return value
            time.sleep(0.002)
        raise TimeoutError("nothing came")

    def joints(self, robot: str, near: list, tol: float) -> dict:
        """The first JointState of ``robot`` near ``near`` and the arm's /tf of its stamp."""
        if not hasattr(self, "readers_extra"):
            self.readers_extra = (
                DataReader(self.dp, Topic(self.dp, f"rt/{robot}/joint_states", JointState)),
                DataReader(self.dp, Topic(self.dp, "rt/tf", TFMessage)))
            self.arm_tf: dict[int, list] = {}
        states, tf = self.readers_extra

        def found():
            for m in tf.take(256):
                chain = [x for x in m.transforms if x.child_frame_id.startswith(robot + "/")
                         and x.child_frame_id != f"{robot}/base_link"]
                if chain:
                    self.arm_tf[stamp(m.transforms[0].header)] = [
                        {"parent": x.header.frame_id, "child": x.child_frame_id,
                         "t": [x.transform.translation.x, x.transform.translation.y,
                               x.transform.translation.z],
                         "q": [x.transform.rotation.w, x.transform.rotation.x,
                               x.transform.rotation.y, x.transform.rotation.z]} for x in chain]
            for m in states.take(256):
                if len(m.position) == len(near) and all(
                        abs(a - b) <= tol for a, b in zip(m.position, near)):
                    self.last_joints = {"ns": stamp(m.header), "name": list(m.name),
                                        "position": list(m.position),
                                        "velocity": list(m.velocity),
                                        "effort": list(m.effort)}
            got = getattr(self, "last_joints", None)
            return got if got and got["ns"] in self.arm_tf else None

        out = dict(self.until(found))
        out["tf"] = self.arm_tf[out["ns"]]
        return out

    def twist(self, robot: str, linear: float, angular: float) -> None:
        self.follow(robot)
        self.writers[robot].write(Twist(Vector3(linear, 0.0, 0.0), Vector3(0.0, 0.0, angular)))

    def run(self, cmd: dict):
        c = cmd["cmd"]
        if c == "topics":
            for robot in cmd.get("follow", ()):
                self.follow(robot)
            self.until(lambda: set(cmd["expect"]) <= set(self.seen))
            return {"types": self.seen}
        if c == "twist":
            self.twist(cmd["robot"], cmd["linear"], cmd["angular"])
            return {"ok": True}
        if c == "drive":  # one Twist per odometry message: the lockstep way
            robot = cmd["robot"]
            self.follow(robot)
            last = max(self.odom[robot], default=-1)
            for _ in range(cmd["steps"] + 1):
                if _ < cmd["steps"]:
                    self.twist(robot, cmd["linear"], cmd["angular"])
                seen = last
                last = self.until(lambda: max(self.odom[robot], default=-1) > seen
                                  and max(self.odom[robot]))
            return {"last": self.odom[robot][last]}
        if c == "odom_at":
            robot = cmd["robot"]
            return self.until(lambda: self.odom[robot].get(cmd["ns"]))
        if c == "odoms":
            self.poll()
            return {"odoms": list(self.odom[cmd["robot"]].values())}
        if c == "scans":
            self.poll()
            return {"scans": self.scan[cmd["robot"]]}
        if c == "joints":
            return self.joints(cmd["robot"], cmd["near"], cmd["tol"])
        if c == "pose":  # an external robot's pose, as a motion-capture node publishes it
            topic = f"rt/{cmd['robot']}/external/pose"
            if topic not in self.writers:
                self.writers[topic] = DataWriter(self.dp, Topic(self.dp, topic, PoseStamped))
            half = cmd["yaw"] / 2
            self.writers[topic].write(PoseStamped(Header(Time(0, 0), "map"), Pose(
                Point(cmd["x"], cmd["y"], 0.0), Quaternion(0.0, 0.0, math.sin(half),
                                                           math.cos(half)))))
            return {"ok": True}
        if c == "tf_static":
            found = self.until(lambda: self.tf_static.read(1))
            return {"transforms": [{"parent": x.header.frame_id, "child": x.child_frame_id,
                                    "x": x.transform.translation.x,
                                    "y": x.transform.translation.y,
                                    "yaw": yaw(x.transform.rotation)}
                                   for x in found[0].transforms]}
        raise ValueError(f"unknown command {c}")


def main() -> None:
    node = Node(int(sys.argv[1]))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "quit":
            break
        try:
            out = node.run(cmd)
        except Exception as exc:  # noqa: BLE001 - said to the test, which fails on it
            out = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
