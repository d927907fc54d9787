"""Drive an arm of a running simulation from Python, over the network.

Start the simulation first, then this script (any mode; in lockstep one loop iteration is one
step of 0.01 s, in realtime iterations come 20 times a second)::

    coopsim run examples/plugin-arm/scenarios/arms.scenario
    python examples/plugin-arm/clients/drive_arm.py            # arm2, name server on port 10000

It bends the arm with ``arm_joints.set_positions``, compares the tip the ``effector`` reports with
forward kinematics, shows a refused command, then hands the arm to the ``reach`` driver, the same
class the simulator hosts in-process, with :func:`coopsim.client.run_controller`.
"""

from __future__ import annotations

import argparse
import math

from coopsim.client import Client, RemoteError, run_controller
from coopsim_arm.kinematics import forward
from coopsim_arm.reach import Reach


def bend(client: Client, name: str, angles: tuple[float, float, float]) -> None:
    """Servo the joints to ``angles`` (rad), then check the tip against forward kinematics."""
    bot = client.robot(name)
    for _ in bot.loop(steps=2000):  # leaving the loop stops the joints and detaches
        bot.arm_joints.set_positions(*angles)
        if max(abs(a - b) for a, b in zip(bot.arm_joints.read(), angles)) < 0.002:
            break
    base = client.sim().robots()[name]  # the base's x, y (m) and yaw (rad), world frame
    x, y, heading = bot.effector.read()
    fx, fy, _ = forward(angles, base)
    print(f"{name} joints at {', '.join(f'{a:+.3f}' for a in angles)} rad: tip at "
          f"({x:.3f}, {y:.3f}) m, heading {heading:+.3f} rad; forward kinematics says "
          f"({fx:.3f}, {fy:.3f}) m")
    try:
        bot.arm_joints.set_positions(3.0, 0.0, 0.0)  # joint 0 turns at most 150 degrees
    except RemoteError as exc:
        print(f"refused as expected: {exc}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nameserver", help="default $COOPSIM_NAMESERVER or port 10000")
    parser.add_argument("--robot", default="arm2")
    parser.add_argument("--goal", type=float, nargs=2, default=(0.5, 0.4), metavar=("X", "Y"),
                        help="where reach takes the tip, m, world frame")
    parser.add_argument("--steps", type=int, default=200, help="iterations of reach")
    args = parser.parse_args()
    with Client(args.nameserver) as client:
        bend(client, args.robot, (0.6, -0.9, 0.7))
    run_controller(Reach, args.robot, {"x": args.goal[0], "y": args.goal[1]}, steps=args.steps,
                   nameserver=args.nameserver)
    with Client(args.nameserver) as client:
        x, y, _ = client.robot(args.robot).effector.read()
    miss = math.hypot(x - args.goal[0], y - args.goal[1])
    print(f"reach: tip at ({x:.3f}, {y:.3f}) m, {miss * 1000:.0f} mm from the goal")


if __name__ == "__main__":
    main()
