"""A stand-in for a flying robot under motion capture (issue 44, example 4d).

Its own process flies its own path: it hovers at ``--height`` m, banked ``--roll`` degrees,
circling ``--radius`` m about its start at ``--speed`` m/s (0: in place), and streams its full
pose (``external_pose``, robot command 20, the 7-value form: x, y, z and the attitude's unit
quaternion; docs/in-the-loop.md) to coopsim as a motion-capture bridge would. Its controller
reads coopsim's simulated altimeter over the same protocol (it casts along the body's -z from
the streamed height and attitude) and prints it once a second. Run by
``flying_external.scenario`` (its controller), or by hand against a run:
``python3 flyer.py --nameserver tcp://127.0.0.1:10000``.
"""

from __future__ import annotations

import argparse
import math
import os
import time

from coopsim.client.connection import Client, RemoteError
from coopsim.model.errors import ProtocolError


def pose(t: float, args) -> tuple:
    """The flyer's pose at ``t`` s: x, y, z (m) and (w, x, y, z), banked about its body x."""
    x0, y0 = args.start
    turn = args.speed * t / args.radius if args.radius > 0 else 0.0
    x = x0 + args.radius * (math.cos(turn) - 1.0)
    y = y0 + args.radius * math.sin(turn)
    yaw, roll = turn + math.pi / 2 if args.radius > 0 else 0.0, math.radians(args.roll)
    cy, sy, cr, sr = math.cos(yaw / 2), math.sin(yaw / 2), math.cos(roll / 2), math.sin(roll / 2)
    return x, y, args.height, (cy * cr, cy * sr, sy * sr, sy * cr)  # yaw, then roll


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nameserver", default=os.environ.get("COOPSIM_NAMESERVER",
                                                               "tcp://127.0.0.1:10000"))
    parser.add_argument("--robot", default=os.environ.get("COOPSIM_ROBOT", "flyer"))
    parser.add_argument("--start", type=float, nargs=2, default=(0.0, 0.0), metavar=("X", "Y"))
    parser.add_argument("--height", type=float, default=1.0, help="m")
    parser.add_argument("--roll", type=float, default=20.0, help="bank, degrees")
    parser.add_argument("--radius", type=float, default=0.0, help="circle, m (0: hover)")
    parser.add_argument("--speed", type=float, default=0.3, help="along the circle, m/s")
    parser.add_argument("--rate", type=float, default=100.0, help="pose stream rate, Hz")
    parser.add_argument("--seconds", type=float, default=60.0, help="stream this long, s")
    args = parser.parse_args()
    period, start = 1.0 / args.rate, time.monotonic()
    with Client(args.nameserver, timeout=1.0) as client:
        bot = client.robot(args.robot)
        tick, said = start, 0
        while tick - start < args.seconds:
            x, y, z, quat = pose(tick - start, args)
            try:
                bot.send_pose(x, y, z=z, quat=quat)  # what the motion-capture system sees
                if int(tick - start) > said:
                    said = int(tick - start)
                    print(f"altimeter {bot.altimeter.read()[0]:.3f} m", flush=True)
            except RemoteError as exc:  # a refused pose (14, 15): the stream goes on
                print(f"refused: {exc}", flush=True)
            except ProtocolError:  # no reply: the run has ended
                break
            tick += period
            time.sleep(max(0.0, tick - time.monotonic()))


if __name__ == "__main__":
    main()
