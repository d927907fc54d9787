"""Follow a leader: keep a set distance behind another robot, using gps and compass.

Usage: python follow_leader.py [ROBOT] --leader NAME [--gap 0.8] [--steps N]
The follower reads its own gps/compass and the leader's gps (any robot's modules are servers).
"""

import argparse
import math
import os

from coopsim.client import Client


def follow_speeds(me, my_yaw, leader, gap):
    """Wheel speeds (m/s) to close on ``leader`` (x, y) to ``gap`` m, from pose ``me``, ``my_yaw``."""
    dx, dy = leader[0] - me[0], leader[1] - me[1]
    distance = math.hypot(dx, dy)
    bearing = math.atan2(dy, dx) - my_yaw
    bearing = math.atan2(math.sin(bearing), math.cos(bearing))
    forward = max(-0.2, min(0.5, 0.8 * (distance - gap))) * max(0.0, math.cos(bearing))
    turn = max(-0.3, min(0.3, 0.8 * bearing))
    return forward - turn, forward + turn


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "robot2"))
    parser.add_argument("--leader", default="robot1")
    parser.add_argument("--gap", type=float, default=0.8)
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    with Client() as client:
        robot, leader = client.robot(args.robot), client.robot(args.leader)
        for _ in robot.loop(args.steps):
            me, (yaw,) = robot.gps.read(), robot.compass.read()
            robot.motors.set_speeds(*follow_speeds(me, yaw, leader.gps.read(), args.gap))


if __name__ == "__main__":
    main()
