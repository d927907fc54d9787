"""Transport leader: take a bar-carrying team to the target of a colour (attractor dynamics).

Usage: python transport_leader.py [ROBOT] [--color magenta] [--speed 0.3] [--steps N]
The controller is coopsim's ``transport_leader`` driver (coopsim/plugins/drivers/transport.py),
hosted here over the network: in-process and here it is the same code, and in lockstep it takes
the same path. ROBOT is a team2 leader (``team1_leader``); default $COOPSIM_ROBOT.
"""

import argparse
import os

from coopsim.client import run_controller
from coopsim.plugins.drivers.transport import TransportLeader


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT",
                                                                     "team1_leader"))
    parser.add_argument("--color", default="magenta", help="colour of the team's target")
    parser.add_argument("--speed", type=float, default=0.3, help="cruising speed, m/s")
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    run_controller(TransportLeader, args.robot, {"color": args.color, "speed": args.speed},
                   steps=args.steps)


if __name__ == "__main__":
    main()
