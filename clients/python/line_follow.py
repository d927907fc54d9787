"""Thymio edge following with the two ground sensors.

Usage: python line_follow.py [ROBOT] [--steps N] [--set NAME=VALUE ...]
(ROBOT defaults to $COOPSIM_ROBOT, else thymio; e.g. against
`coopsim run scenarios/thymio_line.scenario --mode lockstep` with the scenario's driver line
removed, or `--controller thymio="python clients/python/line_follow.py"`.)
The controller is coopsim's ``line_follow`` driver (coopsim/plugins/drivers/textbook.py): the same
code runs in-process (``driver line_follow`` in a scenario) or, here, over the network.
"""

import argparse
import os

from coopsim.client import run_controller
from coopsim.plugins.drivers.textbook import LineFollow


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "thymio"))
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a driver parameter (coopsim list shows them)")
    args = parser.parse_args()
    params = {}
    for item in args.set:
        name, _, value = item.partition("=")
        params[name] = value if not value.replace(".", "", 1).lstrip("-").isdigit() \
            else float(value)
    run_controller(LineFollow, args.robot, params, steps=args.steps)


if __name__ == "__main__":
    main()
