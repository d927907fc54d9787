"""Read an arm's joint states from coopsim in ROS 2: a plain rclpy node, nothing of coopsim imported.

Subscribes ``joint_states`` (sensor_msgs/JointState; a relative name: the node's namespace
picks the arm) and prints each message's sim time and joint angles as one JSON line on stdout,
so the output can be read by a person or piped on. Against coopsim (docs/ros2.md):

    coopsim run scenarios/arm_reach.scenario --ros2 --headless
    python examples/ros2/joint_reader.py --count 5 --ros-args -r __ns:=/arm -p use_sim_time:=true

``--count N`` stops after N messages (default: runs until Ctrl-C). Positions are rad, velocities
rad/s and efforts N m, in the order of ``name`` (``joint_1`` .. ``joint_6`` for the irb120).
"""

import argparse
import json
import sys

import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState


class JointReader(Node):
    def __init__(self, count: int) -> None:
        super().__init__("joint_reader")
        self.left = count  # messages still to print (0: no limit)
        self.create_subscription(JointState, "joint_states", self.on_joints, 10)

    def on_joints(self, msg: JointState) -> None:
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        print(json.dumps({"t": stamp, "now": self.get_clock().now().nanoseconds * 1e-9,
                          "name": list(msg.name), "position": list(msg.position),
                          "velocity": list(msg.velocity), "effort": list(msg.effort)}),
              flush=True)
        if self.left:
            self.left -= 1
            if not self.left:
                raise SystemExit(0)


def main() -> None:
    argv = rclpy.utilities.remove_ros_args(sys.argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=0, help="stop after N messages")
    count = parser.parse_args(argv[1:]).count
    rclpy.init(args=sys.argv)
    node = JointReader(count)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, SystemExit, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
