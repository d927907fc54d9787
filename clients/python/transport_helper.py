"""Transport helper: help carry a bar, following its direction and pull (support sensor).

Usage: python transport_helper.py [ROBOT] [--steps N]
The controller is coopsim's ``transport_helper`` driver (coopsim/plugins/drivers/transport.py),
hosted here over the network. ROBOT is a team2 helper (``team1_helper``); default
$COOPSIM_ROBOT.
"""

import argparse
import os

from coopsim.client import run_controller
from coopsim.plugins.drivers.transport import TransportHelper


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT",
                                                                     "team1_helper"))
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    run_controller(TransportHelper, args.robot, {}, steps=args.steps)


if __name__ == "__main__":
    main()
