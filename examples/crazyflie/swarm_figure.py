"""Four simulated Crazyflies fly a circle with Bitcraze's cflib, unchanged but for the URIs.

    pip install cflib
    coopsim run scenarios/crazyflie_crtp.scenario --headless    # in another terminal
    python examples/crazyflie/swarm_figure.py

The same script flies real Crazyflies with radio URIs (docs/crazyflie.md).
"""

import math
import time

import cflib.crtp
from cflib.crazyflie.swarm import CachedCfFactory, Swarm

URIS = [f"udp://127.0.0.1:{19850 + i}" for i in range(4)]
RADIUS = 0.6  # m
HEIGHT = 0.8  # m
LAP = 8.0  # s per lap


def take_off(scf):
    scf.cf.high_level_commander.takeoff(HEIGHT, 2.0)
    time.sleep(2.5)


def circle(scf, phase):
    hl = scf.cf.high_level_commander
    steps = 16
    for k in range(steps + 1):  # a go_to to each of 16 points around the circle
        a = phase + 2 * math.pi * k / steps
        hl.go_to(RADIUS * math.cos(a), RADIUS * math.sin(a), HEIGHT, 0.0, LAP / steps)
        time.sleep(LAP / steps)


def land(scf):
    scf.cf.high_level_commander.land(0.0, 2.0)
    time.sleep(2.5)
    scf.cf.high_level_commander.stop()


def main():
    cflib.crtp.init_drivers()
    with Swarm(URIS, factory=CachedCfFactory(rw_cache="./cache")) as swarm:
        swarm.parallel_safe(take_off)
        swarm.parallel_safe(circle, {uri: [math.pi / 2 * k] for k, uri in enumerate(URIS)})
        swarm.parallel_safe(land)


if __name__ == "__main__":
    main()
