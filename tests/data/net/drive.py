"""A controller process for the network tests: read the sonar, send the motors, report.

Usage: python drive.py [--steps N] [--seconds S] [--speeds LEFT RIGHT] [--period S]
Robot and name server come from $COOPSIM_ROBOT and $COOPSIM_NAMESERVER, as for launched
controllers. Prints one JSON line per iteration (the read's step, the motor reply's step, time
and text) and "done" at the end; without --steps or --seconds it runs until killed.
"""

import argparse
import json
import os
import sys
import time

from coopsim.client import Client


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--speeds", type=float, nargs=2, default=(0.3, 0.3))
    parser.add_argument("--period", type=float, default=0.02, help="realtime loop period, s")
    args = parser.parse_args()
    end = time.monotonic() + args.seconds if args.seconds else None
    with Client(timeout=10.0) as client:
        robot = client.robot(os.environ["COOPSIM_ROBOT"])
        for _ in robot.loop(args.steps, period=args.period):
            read = robot.call(200).params[0]
            info = robot.motors.set_speeds(*args.speeds)
            print(json.dumps({"read": read, "step": info.step, "time": info.time,
                              "note": info.note}), flush=True)
            if end is not None and time.monotonic() > end:
                break
    print("done", flush=True)


if __name__ == "__main__":
    sys.exit(main())
