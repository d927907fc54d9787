"""Go to a target: steer towards the target of a colour, avoid obstacles, stop when there.

Usage: python goto_target.py [ROBOT] [--color red] [--steps N]
The controller is coopsim's ``goto_target`` driver (coopsim/plugins/drivers/goto_target.py),
hosted here over the network.
"""

import argparse
import os

from coopsim.client import run_controller
from coopsim.plugins.drivers.goto_target import GotoTarget


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "robot1"))
    parser.add_argument("--color", default="red")
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    run_controller(GotoTarget, args.robot, {"color": args.color}, steps=args.steps)


if __name__ == "__main__":
    main()
