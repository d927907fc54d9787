"""Kilobot aggregation (or dispersion.

Usage: python kilobot_swarm.py [ROBOT] [--steps N] [--set NAME=VALUE ...]
(ROBOT defaults to $COOPSIM_ROBOT, else kilobot_aggregation:kb1; e.g. against
`coopsim run scenarios/ --set mode=disperse) by IR messaging.scenario --mode lockstep` with the scenario's driver line
removed, or `--controller kilobot_aggregation:kb1="python clients/python/kilobot_swarm.py"`.)
The controller is coopsim's ``kilobot_swarm`` driver (coopsim/plugins/drivers/textbook.py): the same
code runs in-process (``driver kilobot_swarm`` in a scenario) or, here, over the network.
"""

import argparse
import os

from coopsim.client import run_controller
from coopsim.plugins.drivers.textbook import KilobotSwarm


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "kilobot_aggregation:kb1"))
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a driver parameter (coopsim list shows them)")
    args = parser.parse_args()
    params = {}
    for item in args.set:
        name, _, value = item.partition("=")
        params[name] = value if not value.replace(".", "", 1).lstrip("-").isdigit() \
            else float(value)
    run_controller(KilobotSwarm, args.robot, params, steps=args.steps)


if __name__ == "__main__":
    main()
