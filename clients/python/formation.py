"""Formation: lead a triangle to a target, or keep a corner of it behind the leader.

Usage: python formation.py [ROBOT] --role lead|left|right [--leader NAME] [--color red]
                           [--spacing 1.0] [--steps N]
The controller is coopsim's ``formation`` driver (coopsim/plugins/drivers/formation.py), hosted
here over the network. ROBOT defaults to $COOPSIM_ROBOT.
"""

import argparse
import os

from coopsim.client import run_controller
from coopsim.plugins.drivers.formation import Formation


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "lead"))
    parser.add_argument("--role", choices=("lead", "left", "right"), default="lead")
    parser.add_argument("--leader", default="lead", help="the leader's name (followers)")
    parser.add_argument("--color", default="red", help="the target's colour (leader)")
    parser.add_argument("--spacing", type=float, default=1.0, help="triangle side, m")
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    run_controller(Formation, args.robot, {"role": args.role, "leader": args.leader,
                                           "color": args.color, "spacing": args.spacing},
                   steps=args.steps)


if __name__ == "__main__":
    main()
