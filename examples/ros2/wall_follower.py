"""A ROS 2 wall follower for coopsim: a plain rclpy node, nothing of coopsim imported.

It follows the wall on the robot's right with the laser scan (``scan``, sensor_msgs/LaserScan)
and drives with ``cmd_vel`` (geometry_msgs/Twist), both relative names, so the robot is chosen
by the node's namespace; it runs on the simulation's clock (``use_sim_time``: its timer ticks
in sim time, so it pauses when the run pauses). Against coopsim (docs/ros2.md):

    coopsim run examples/ros2/wall_follow.scenario --ros2 --headless
    python examples/ros2/wall_follower.py --ros-args -r __ns:=/tb3 -p use_sim_time:=true

Parameters: ``speed`` (m/s forward, default 0.15), ``gap`` (m to keep from the wall, 0.4),
``rate`` (Hz of sim time at which it commands, 10). The rule is the one of coopsim's own
``wall_follow`` driver (coopsim/plugins/drivers/textbook.py), in body velocities: blocked ahead
-> turn left in place; no wall on the right -> curve right to find one; else steer to hold the
gap. Stop it with Ctrl-C: it sends a zero Twist on its way out, so the robot stops.
"""

import math
import sys

import rclpy
from geometry_msgs.msg import Twist
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan


class WallFollower(Node):
    def __init__(self) -> None:
        super().__init__("wall_follower")
        self.speed = self.declare_parameter("speed", 0.15).value
        self.gap = self.declare_parameter("gap", 0.4).value
        rate = self.declare_parameter("rate", 10.0).value
        self.scan = None
        self.commands = 0
        # sensor QoS (best effort): what rviz2 and Nav2 use; coopsim's reliable writer serves it
        self.create_subscription(LaserScan, "scan", self.on_scan, qos_profile_sensor_data)
        self.cmd = self.create_publisher(Twist, "cmd_vel", 10)
        self.create_timer(1.0 / rate, self.on_timer)  # sim time with use_sim_time:=true

    def on_scan(self, scan: LaserScan) -> None:
        self.scan = scan

    def nearest(self, lo_deg: float, hi_deg: float) -> float:
        """The shortest valid range (m) between two bearings (deg, counter-clockwise, 0 ahead)."""
        s = self.scan
        n = len(s.ranges)
        best = math.inf
        for deg in range(int(lo_deg), int(hi_deg) + 1, 5):
            i = int(round((math.radians(deg) - s.angle_min) / s.angle_increment)) % n
            r = s.ranges[i]
            if s.range_min <= r <= s.range_max:  # REP 117: below range_min is no reading
                best = min(best, r)
        return best

    def on_timer(self) -> None:
        if self.scan is None or not self.scan.ranges:
            return
        twist = Twist()
        ahead = self.nearest(-20, 20)
        right = min(self.nearest(-100, -80), self.nearest(-60, -60) * math.cos(math.radians(30)))
        if ahead < 1.5 * self.gap:
            twist.angular.z = 1.2  # blocked: turn left in place
        elif right > 3 * self.gap:
            twist.linear.x, twist.angular.z = 0.8 * self.speed, -0.4  # find the wall again
        else:
            error = right - self.gap  # too far from the wall: steer right (negative yaw rate)
            twist.linear.x = self.speed
            twist.angular.z = -max(-0.6, min(0.6, 2.0 * error / self.gap))
        self.cmd.publish(twist)
        self.commands += 1
        if self.commands % 50 == 1:
            self.get_logger().info(f"ahead {ahead:.2f} m, right {right:.2f} m: "
                                   f"v {twist.linear.x:.2f} m/s, w {twist.angular.z:+.2f} rad/s")


def main() -> None:
    rclpy.init(args=sys.argv)
    node = WallFollower()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        if rclpy.ok():
            node.cmd.publish(Twist())  # stop the robot
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
