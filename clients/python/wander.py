"""Wander: drive forward, turn away from whatever the sonar sees (Braitenberg-style).

Usage: python wander.py [ROBOT] [--steps N]   (ROBOT defaults to $COOPSIM_ROBOT)
The controller is coopsim's ``wander`` driver (coopsim/plugins/drivers/wander.py): the same code
runs in-process (``driver wander`` in a scenario) or, here, over the network.
"""

import argparse
import os

from coopsim.client import run_controller
from coopsim.plugins.drivers.wander import Wander


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "robot1"))
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--cruise", type=float, default=0.35, help="forward speed, m/s")
    args = parser.parse_args()
    run_controller(Wander, args.robot, {"cruise": args.cruise}, steps=args.steps)


if __name__ == "__main__":
    main()
