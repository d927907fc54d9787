"""A stand-in for a real robot under motion capture (issue 44, example 4a).

It runs its own dynamics (a unicycle integrated on its own clock), streams its pose to
coopsim as a motion-capture bridge would (``external_pose``, robot command 20: the message is
in docs/in-the-loop.md), and its controller reads coopsim's simulated sonar over the same
protocol: it drives forward until the sonar sees something nearer than ``--stop`` m, then stands
still, streaming on, until the run ends. Run by ``virtual_wall.scenario`` (its controller), or
by hand against a run: ``python3 real_robot.py --nameserver tcp://127.0.0.1:10000``.
"""

from __future__ import annotations

import argparse
import math
import os
import time

from coopsim.client.connection import Client, RemoteError
from coopsim.model.errors import ProtocolError

SPEED = 0.6  # m/s: the real robot's cruising speed


def front_range(ranges) -> float:
    """The nearest of the sonar's three middle beams (straight ahead), m."""
    mid = len(ranges) // 2
    return min(ranges[max(0, mid - 1):mid + 2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nameserver", default=os.environ.get("COOPSIM_NAMESERVER",
                                                               "tcp://127.0.0.1:10000"))
    parser.add_argument("--robot", default=os.environ.get("COOPSIM_ROBOT", "real"))
    parser.add_argument("--start", type=float, nargs=3, default=(-2.0, 0.0, 0.0),
                        metavar=("X", "Y", "YAW"), help="start pose, m, m, rad")
    parser.add_argument("--rate", type=float, default=50.0, help="pose stream rate, Hz")
    parser.add_argument("--stop", type=float, default=0.5, help="stop this near, m")
    parser.add_argument("--seconds", type=float, default=60.0, help="give up after, s")
    args = parser.parse_args()
    x, y, yaw = args.start
    period = 1.0 / args.rate
    with Client(args.nameserver, timeout=1.0) as client:
        bot = client.robot(args.robot)
        speed, end, tick = SPEED, time.monotonic() + args.seconds, time.monotonic()
        while time.monotonic() < end:
            x += speed * math.cos(yaw) * period  # the real robot's own motion
            y += speed * math.sin(yaw) * period
            try:
                bot.send_pose(x, y, yaw)  # what the motion-capture system sees
                near = front_range(bot.sonar.read())  # the simulated sonar, read as any robot
            except RemoteError as exc:  # a refused pose (14, 15): the stream goes on
                print(f"refused: {exc}")
                continue
            except ProtocolError:  # no reply: the run has ended
                break
            if speed and near < args.stop:
                print(f"stopped at x = {x:.2f} m: the sonar sees {near:.2f} m ahead")
                speed = 0.0
            tick += period
            time.sleep(max(0.0, tick - time.monotonic()))


if __name__ == "__main__":
    main()
