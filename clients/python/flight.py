"""Fly a quadrotor (a ``crazyflie`` or ``quadrotor``) through a hover or a figure-eight.

Usage: python flight.py [ROBOT] [--shape eight|hover] [--plane horizontal|vertical]
                        [--height M] [--size M] [--period S] [--yaw-rate RAD_S]
                        [--takeoff S] [--start S] [--steps N] [--period-wall S]

The controller is coopsim's ``flight`` driver (coopsim/plugins/drivers/flight.py: the cascaded
controller of coopsim/swarm/flight.py), hosted here over the network: each iteration it reads
/ROBOT/imu and /ROBOT/mocap, runs position -> attitude -> rates -> mixer, and sends the four
propeller speeds with /ROBOT/rotors set_rotors (the reference position riding along, for
``coopsim analyze tracking``). In lockstep one iteration is one step; in real time one
iteration every --period-wall s (default 0.01). The controller's clock is its readings' step
(never the wall clock): the take-off hold lasts --takeoff s from its first reading, or from sim
time --start when given.
"""

import argparse
import os

from coopsim.client import run_controller
from coopsim.plugins.drivers.flight import Flight


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "robot1"))
    parser.add_argument("--shape", default="eight", choices=("eight", "hover"))
    parser.add_argument("--plane", default="horizontal", choices=("horizontal", "vertical"))
    parser.add_argument("--height", type=float, default=1.0)
    parser.add_argument("--size", type=float, default=1.0)
    parser.add_argument("--period", type=float, default=8.0)
    parser.add_argument("--yaw-rate", type=float, default=0.0)
    parser.add_argument("--takeoff", type=float, default=3.0)
    parser.add_argument("--start", type=float, default=-1.0)
    parser.add_argument("--period-wall", type=float, default=0.01)
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    params = {"shape": args.shape, "plane": args.plane, "height": args.height,
              "size": args.size, "period": args.period, "yaw_rate": args.yaw_rate,
              "takeoff": args.takeoff, "start": args.start}
    run_controller(Flight, args.robot, params, steps=args.steps, period=args.period_wall)


if __name__ == "__main__":
    main()
