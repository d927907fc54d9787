"""TurtleBot3 right-hand wall following with the 360-beam lidar.

Usage: python wall_follow.py [ROBOT] [--steps N] [--set NAME=VALUE ...]
(ROBOT defaults to $COOPSIM_ROBOT, else tb3; e.g. against
`coopsim run scenarios/turtlebot3_wall_follow.scenario --mode lockstep` with the scenario's driver line
removed, or `--controller tb3="python clients/python/wall_follow.py"`.)
The controller is coopsim's ``wall_follow`` driver (coopsim/plugins/drivers/textbook.py): the same
code runs in-process (``driver wall_follow`` in a scenario) or, here, over the network.
"""

import argparse
import os

from coopsim.client import run_controller
from coopsim.plugins.drivers.textbook import WallFollow


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "tb3"))
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a driver parameter (coopsim list shows them)")
    args = parser.parse_args()
    params = {}
    for item in args.set:
        name, _, value = item.partition("=")
        params[name] = value if not value.replace(".", "", 1).lstrip("-").isdigit() \
            else float(value)
    run_controller(WallFollow, args.robot, params, steps=args.steps)


if __name__ == "__main__":
    main()
