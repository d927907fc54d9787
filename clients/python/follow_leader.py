"""Follow a leader: keep a set distance behind another robot, using gps and compass.

Usage: python follow_leader.py [ROBOT] --leader NAME [--gap 0.8] [--steps N]
The controller is coopsim's ``follow_leader`` driver (coopsim/plugins/drivers/follow_leader.py),
hosted here over the network: it reads its own gps/compass and the leader's gps.
"""

import argparse
import os

from coopsim.client import run_controller
from coopsim.plugins.drivers.follow_leader import FollowLeader


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "robot2"))
    parser.add_argument("--leader", default="robot1")
    parser.add_argument("--gap", type=float, default=0.8)
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    run_controller(FollowLeader, args.robot, {"leader": args.leader, "gap": args.gap},
                   steps=args.steps)


if __name__ == "__main__":
    main()
