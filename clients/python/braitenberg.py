"""e-puck obstacle avoidance, Braitenberg's vehicle 3b on the 8 IR proximity sensors.

Usage: python braitenberg.py [ROBOT] [--steps N] [--set NAME=VALUE ...]
(ROBOT defaults to $COOPSIM_ROBOT, else epuck1; e.g. against
`coopsim run scenarios/epuck_braitenberg.scenario --mode lockstep` with the scenario's driver line
removed, or `--controller epuck1="python clients/python/braitenberg.py"`.)
The controller is coopsim's ``braitenberg`` driver (coopsim/plugins/drivers/textbook.py): the same
code runs in-process (``driver braitenberg`` in a scenario) or, here, over the network.
"""

import argparse
import os

from coopsim.client import run_controller
from coopsim.plugins.drivers.textbook import Braitenberg


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "epuck1"))
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a driver parameter (coopsim list shows them)")
    args = parser.parse_args()
    params = {}
    for item in args.set:
        name, _, value = item.partition("=")
        params[name] = value if not value.replace(".", "", 1).lstrip("-").isdigit() \
            else float(value)
    run_controller(Braitenberg, args.robot, params, steps=args.steps)


if __name__ == "__main__":
    main()
