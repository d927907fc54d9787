"""Fetch an object from a shelf with a mobile manipulator (scenarios/mobile_fetch.scenario).

Usage: python mobile_fetch.py [ROBOT] [--object OBJECT_1] [--color green] [--speed 0.8]

A ``mobile_lwa`` (the LWA 3 arm on a differential base) drives to the shelf (to a stand-off
point in front of the object, facing it), picks the object with the arm, drives to the target of
``--color`` (on a side table: its z is the table's top) and puts the object down there. The base
follows waypoints with its ``pose`` reading (x, y, yaw, world frame) and ``motors`` wheel
speeds; the arm moves with ``tool.ik`` and ``joints.set_positions`` (world frame: the server's
inverse kinematics uses where the base really stopped) and ``joints.wait`` per step
(clients/python/arm.py). The rule ``delivered`` grades it.
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from arm import Arm  # noqa: E402  (beside this file)
from coopsim.client import Client, RemoteError, RunFinished  # noqa: E402

AXLE = 0.50  # m between the base's drive wheels (coopsim/plugins/robots/arms.py)
MOUNT = 0.20  # m: the arm's base ahead of the chassis centre
REACH = 0.50  # m: where the arm picks and places, ahead of its base
GRASP = 0.005  # m above an object's top when grabbing
DROP = 0.003  # m: a placed object's bottom above the surface


def heading_error(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


class Base:
    """The differential base: drive to a point, turn to a heading (one command per step)."""

    def __init__(self, bot, speed: float = 1.0, turn: float = 1.5) -> None:
        self.bot, self.speed, self.turn = bot, speed, turn

    def pose(self):
        x, y, _, yaw = self.bot.pose.read()[:4]
        return x, y, yaw

    def wheels(self, v: float, w: float) -> None:
        self.bot.motors.set_speeds(v - w * AXLE / 2, v + w * AXLE / 2)

    def go(self, gx: float, gy: float, tol: float = 0.02, steps: int = 40000) -> None:
        """Drive to (gx, gy) m: turn towards it, then drive with a heading correction."""
        for _ in range(steps):
            x, y, yaw = self.pose()
            d = math.hypot(gx - x, gy - y)
            if d <= tol:
                break
            err = heading_error(math.atan2(gy - y, gx - x) - yaw)
            v = 0.0 if abs(err) > 0.3 else min(self.speed, 1.5 * d) * math.cos(err)
            self.wheels(v, max(-self.turn, min(self.turn, 3.0 * err)))
        self.wheels(0.0, 0.0)

    def face(self, heading: float, tol: float = 0.01, steps: int = 20000) -> None:
        """Turn on the spot to ``heading`` rad."""
        for _ in range(steps):
            err = heading_error(heading - self.pose()[2])
            if abs(err) <= tol:
                break
            self.wheels(0.0, max(-self.turn, min(self.turn, 3.0 * err)))
        self.wheels(0.0, 0.0)

    def stand_off(self, px: float, py: float, heading: float) -> None:
        """Stop where the arm has the point (px, py) ``REACH`` m ahead of its base."""
        back = MOUNT + REACH
        self.go(px - back * math.cos(heading), py - back * math.sin(heading))
        self.face(heading)


def fetch(base: Base, arm: Arm, thing, spot, lift: float) -> None:
    """Drive to ``thing`` (x, y, z, height), pick it, drive to ``spot`` (x, y, surface z),
    put it down."""
    x, y, z, h = thing
    sx, sy, sz = spot
    rx, ry, _ = base.pose()
    towards = math.atan2(y - ry, x - rx)
    grasp = z + h / 2 + GRASP
    base.stand_off(x, y, towards)
    arm.move(x, y, grasp + lift, towards)
    arm.move(x, y, grasp, towards)
    arm.grab()
    arm.move(x, y, grasp + lift, towards)
    rx, ry, _ = base.pose()
    towards = math.atan2(sy - ry, sx - rx)
    base.stand_off(sx, sy, towards)
    place = sz + DROP + h + GRASP
    arm.move(sx, sy, place + lift, towards)
    arm.move(sx, sy, place, towards)
    arm.release()
    arm.move(sx, sy, place + lift, towards)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "fetcher"))
    parser.add_argument("--object", default="OBJECT_1", help="name of the object to fetch")
    parser.add_argument("--color", default="green", help="colour of the target to put it on")
    parser.add_argument("--speed", type=float, default=0.8, help="fraction of top joint speed")
    parser.add_argument("--lift", type=float, default=0.06, help="clearance above, m")
    args = parser.parse_args()
    with Client() as client:
        state = client.sim().state()
        o = next(o for o in state["objects"] if o["name"] == args.object)
        t = next(t for t in state["targets"] if t["color"] == args.color)
        bot = client.robot(args.robot)
        try:
            fetch(Base(bot), Arm(bot, speed=args.speed), (o["x"], o["y"], o["z"], o["size"][2]),
                  (t["x"], t["y"], t["z"]), args.lift)
            print(f"{args.robot}: {args.object} fetched to the {args.color} target")
            for _ in bot.loop():  # hold still until the rule ends the run
                bot.joints.wait()
        except RunFinished:
            pass
        except RemoteError as exc:
            raise SystemExit(f"mobile_fetch: {exc}") from None


if __name__ == "__main__":
    main()
