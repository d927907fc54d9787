"""Avoid: drive forward and turn away from what the sonar sees, one request a step.

Usage: python avoid_step.py [ROBOT] [--steps N] [--cruise M/S]   (ROBOT defaults to
$COOPSIM_ROBOT)

Each iteration is one ``bot.step`` (protocol 13's exchange, docs/protocol.md section 3,
*Exchange*): the wheel speeds go out with the sonar's read, and the reply, in lockstep after
the step that used them, carries the sonar of that step: one round trip a step where
``bot.sonar.read()`` then ``bot.motors.set_speeds(...)`` take two. Prints one JSON line a step
(``step``, the nearest distance ahead, m) when ``--print`` is given.
"""

import argparse
import json
import os

from coopsim.client import Client


def speeds(sonar, cruise: float) -> tuple[float, float]:
    """Wheel speeds (m/s) from an 11-beam sonar (index 0 right, 5 ahead, 10 left): turn
    toward the side with more room when anything ahead is nearer than 0.5 m."""
    if min(sonar[3:8]) > 0.5:
        return cruise, cruise
    return (cruise, -cruise) if sum(sonar[:5]) > sum(sonar[6:]) else (-cruise, cruise)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "robot1"))
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--cruise", type=float, default=0.3, help="forward speed, m/s")
    parser.add_argument("--print", action="store_true", help="one JSON line a step")
    args = parser.parse_args()
    with Client() as client:
        bot = client.robot(args.robot)
        step = bot.exchange("motors.set_speeds", ("sonar",))  # checked once, then one call a step
        left = right = 0.0
        for _ in bot.loop(steps=args.steps):
            got = step(left, right)
            left, right = speeds(got.sonar, args.cruise)
            if args.print:
                print(json.dumps({"step": got.step, "ahead": min(got.sonar[3:8]),
                                  "taken": got.sonar.step}), flush=True)


if __name__ == "__main__":
    main()
