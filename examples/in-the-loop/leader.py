"""A stand-in for a real leader robot under motion capture (issue 44, example 4b).

It drives a circle of ``--radius`` m around the origin at ``--speed`` m/s on its own clock and
streams its pose to coopsim (``external_pose``, docs/in-the-loop.md) at ``--rate`` Hz; the
simulated followers of ``leader_formation.scenario`` keep formation behind it. It ends after
``--seconds`` s or when the run stops answering. With ``--clock sim`` it moves on the
simulation's clock instead (the time each pose's reply names), as a robot would whose motion
capture is replayed in step with the run: a busy machine that steps the run slower than real
time then does not let the leader run ahead of its followers (the tests use it).
"""

from __future__ import annotations

import argparse
import math
import os
import time

from coopsim.client.connection import Client, RemoteError
from coopsim.model.errors import ProtocolError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nameserver", default=os.environ.get("COOPSIM_NAMESERVER",
                                                               "tcp://127.0.0.1:10000"))
    parser.add_argument("--robot", default=os.environ.get("COOPSIM_ROBOT", "leader"))
    parser.add_argument("--radius", type=float, default=1.5, help="m")
    parser.add_argument("--speed", type=float, default=0.3, help="m/s")
    parser.add_argument("--rate", type=float, default=100.0, help="pose stream rate, Hz")
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--clock", choices=("wall", "sim"), default="wall",
                        help="move on this clock (sim: the run's simulated time)")
    args = parser.parse_args()
    omega, start = args.speed / args.radius, time.monotonic()
    with Client(args.nameserver, timeout=1.0) as client:
        bot = client.robot(args.robot)
        tick, sim_time = start, 0.0
        while tick - start < args.seconds:
            t = sim_time if args.clock == "sim" else time.monotonic() - start
            angle = omega * t  # counter-clockwise from (r, 0)
            x, y = args.radius * math.cos(angle), args.radius * math.sin(angle)
            try:
                sim_time = bot.send_pose(x, y, angle + math.pi / 2)
            except RemoteError as exc:  # a refused pose: the stream goes on
                print(f"refused: {exc}")
            except ProtocolError:  # no reply: the run has ended
                break
            tick += 1.0 / args.rate
            time.sleep(max(0.0, tick - time.monotonic()))


if __name__ == "__main__":
    main()
