"""Wander: drive forward, turn away from whatever the sonar sees (Braitenberg-style).

Usage: python wander.py [ROBOT] [--steps N]   (ROBOT defaults to $COOPSIM_ROBOT)
Works in real time and in lockstep; the name server is $COOPSIM_NAMESERVER or the default.
"""

import argparse
import os

from coopsim.client import Client

CRUISE = 0.35  # m/s
SAFE = 0.6  # m: obstacles nearer than this make the robot turn


def wander_speeds(distances):
    """Wheel speeds (left, right) in m/s from the 11 sonar distances (index 0 = right side)."""
    right_side = min(distances[0:5])
    left_side = min(distances[6:11])
    ahead = min(distances[3:8])
    if ahead < SAFE:
        turn = 1.0 if right_side < left_side else -1.0  # turn towards the more open side
        return -0.2 * turn, 0.2 * turn
    steer = 0.25 * (min(right_side, 2.0) - min(left_side, 2.0))  # drift away from near walls
    return CRUISE + steer, CRUISE - steer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "robot1"))
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    with Client() as client:
        robot = client.robot(args.robot)
        for _ in robot.loop(args.steps):
            robot.motors.set_speeds(*wander_speeds(robot.sonar.read()))


if __name__ == "__main__":
    main()
