"""Go to a target: steer towards the target of a colour, avoid obstacles, stop when there.

Usage: python goto_target.py [ROBOT] [--color red] [--steps N]
"""

import argparse
import math
import os

from coopsim.client import Client

ARRIVED = 0.45  # m from the target's centre


def goto_speeds(distance, angle, sonar):
    """Wheel speeds (m/s) towards a target at ``distance`` m, ``angle`` rad (+ = left)."""
    if distance < ARRIVED:
        return 0.0, 0.0
    ahead = min(sonar[3:8])
    forward = 0.4 * min(1.0, distance) * max(0.0, math.cos(angle))
    if ahead < 0.4:
        forward = 0.0
        angle = angle + (0.8 if min(sonar[0:5]) < min(sonar[6:11]) else -0.8)
    turn = max(-0.3, min(0.3, 0.6 * angle))
    return forward - turn, forward + turn


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "robot1"))
    parser.add_argument("--color", default="red")
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    with Client() as client:
        robot = client.robot(args.robot)
        for _ in robot.loop(args.steps):
            distance, angle = robot.target.read_color(args.color)
            robot.motors.set_speeds(*goto_speeds(distance, angle, robot.sonar.read()))


if __name__ == "__main__":
    main()
