"""Stack cubes with an arm: pick every movable object of a colour and stack them on the target
of that colour (scenarios/arm_stack.scenario, scenarios/arm_compare.scenario).

Usage: python arm_stack.py [ROBOT] [--color red] [--speed 0.8] [--lift 0.06]

The cubes and the target are read once from ``/sim state`` (objects of the target's colour with
a mass; the target's z is the surface the stack stands on). For each cube, nearest the arm
first: above it, down to its top, grab, up, over the stack, down until its bottom is just
above the stack's top, release, up. Every move is ``tool.move_to`` with the tool pointing down
and one ``joints.wait`` per step until the tool is there (clients/python/arm.py), so in lockstep
the run goes exactly as fast as the arm. The rule ``stacked`` grades the result.
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from arm import Arm  # noqa: E402  (beside this file)
from coopsim.client import Client, RemoteError, RunFinished  # noqa: E402

GRASP = 0.005  # m: the tool point this far above a cube's top when it grabs
DROP = 0.003  # m: a placed cube's bottom this far above what it lands on


def task(state: dict, robot: str, color: str):
    """The arm's base (x, y), its cubes (x, y, z, height; nearest first) and the spot (x, y,
    surface z) from a ``/sim state`` document."""
    me = next(r for r in state["robots"] if r["name"] == robot)
    spot = next((t for t in state["targets"] if t["color"] == color), None)
    if spot is None:
        raise SystemExit(f"arm_stack: no {color} target in this run")
    cubes = [(o["x"], o["y"], o["z"], o["size"][2]) for o in state["objects"]
             if o["mass"] > 0 and list(o["color"]) == list(spot["rgb"])]
    cubes.sort(key=lambda c: math.hypot(c[0] - me["x"], c[1] - me["y"]))
    return (me["x"], me["y"]), cubes, (spot["x"], spot["y"], spot["z"])


def stack(arm: Arm, base, cubes, spot, lift: float) -> None:
    """Pick ``cubes`` one by one and stack them on ``spot``."""
    def yaw(x, y):  # the gripper faces away from the base: no wrist turns between moves
        return math.atan2(y - base[1], x - base[0])

    top = spot[2]  # the stack's top, m
    for x, y, z, h in cubes:
        grasp = z + h / 2 + GRASP
        arm.move(x, y, grasp + lift, yaw(x, y))
        arm.move(x, y, grasp, yaw(x, y))
        arm.grab()
        arm.move(x, y, max(grasp, top + h + GRASP) + lift, yaw(x, y))
        place = top + DROP + h + GRASP
        arm.move(spot[0], spot[1], place + lift, yaw(*spot[:2]))
        arm.move(spot[0], spot[1], place, yaw(*spot[:2]))
        arm.release()
        top += h
        arm.move(spot[0], spot[1], place + lift, yaw(*spot[:2]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "arm"))
    parser.add_argument("--color", default="red", help="colour of the cubes and the target")
    parser.add_argument("--speed", type=float, default=0.8, help="fraction of top joint speed")
    parser.add_argument("--lift", type=float, default=0.06, help="clearance above, m")
    args = parser.parse_args()
    with Client() as client:
        base, cubes, spot = task(client.sim().state(), args.robot, args.color)
        bot = client.robot(args.robot)
        arm = Arm(bot, speed=args.speed)
        try:
            stack(arm, base, cubes, spot, args.lift)
            print(f"{args.robot}: stacked {len(cubes)} {args.color} cubes in {arm.steps} steps")
            for _ in bot.loop():  # hold still until the rule ends the run
                bot.joints.wait()
        except RunFinished:
            pass
        except RemoteError as exc:  # out of reach, nothing to grab, too heavy: one line
            raise SystemExit(f"arm_stack: {exc}") from None


if __name__ == "__main__":
    main()
