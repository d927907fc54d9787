"""Benchmark: capture-the-flag games in lockstep, as fast as they go (real-time factor).

1. In-process, N vs N (default 10 vs 10): scenarios/ctf.scenario with each team grown to N
   ``swarmbot`` robots (an attacking squad of ceil(0.6 N) in a wedge, a defending one of the
   rest in a line), every robot played by the ``squad`` driver: radio beacons and reads every
   second, the subsumption stack every step, squad orders decomposed by the swarm library as
   the game goes. The ``Simulation`` is stepped by hand (commands, actuators, physics, sensors,
   rules) for ``--seconds`` of sim time at dt = 0.05 s. Baseline in the same run: the same
   world and robots with no driver (the simulation alone).
2. Over the network, 5 vs 5: ``coopsim run scenarios/ctf.scenario --headless --speed 0`` as shipped
   (team B a launched controller process, every robot read and commanded over the protocol
   each step); the real-time factor is the run's own summary line.

Usage: python studies/game_bench.py [--team 10] [--seconds 120] [--no-network]
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from coopsim.formats.files import load
from coopsim.model.specs import DriverSetting, RobotSpec, SquadSpec
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

ROOT = Path(__file__).resolve().parents[1]
CTF = ROOT / "scenarios" / "ctf.scenario"


def team_of(side: str, n: int, drivers: bool) -> tuple[list[RobotSpec], list[SquadSpec]]:
    """N robots of team A (x < 0) or B (x > 0) in two columns by their base, and two squads."""
    sign, color = (-1.0, (230, 40, 40)) if side == "A" else (1.0, (40, 90, 230))
    attack = math.ceil(0.6 * n)
    robots = []
    for k in range(n):
        x = sign * (9.3 - 0.6 * (k % 2))
        y = -sign * (-2.7 + 0.6 * (k // 2))
        role = "attack" if k < attack else "defend"
        setting = (DriverSetting("squad", (("role", role),)),) if drivers else ()
        robots.append(RobotSpec("swarmbot", f"{side.lower()}{k + 1}", (x, y, 0.0),
                                0.0 if side == "A" else math.pi, color, drivers=setting))
    names = [r.name for r in robots]
    squads = [SquadSpec(side, tuple(names[:attack]), "wedge", 0.6, side),
              SquadSpec(f"{side}d", tuple(names[attack:]), "line", 0.6, side)]
    return robots, squads


def game(n: int, drivers: bool):
    spec = load(CTF)
    a, sa = team_of("A", n, drivers)
    b, sb = team_of("B", n, drivers)
    return replace(spec, robots=tuple(a + b), squads=tuple(sa + sb))


def play(spec, seconds: float) -> tuple[float, float, str]:
    """(sim time, wall time, the game's state at the end) of ``spec`` stepped by the stepper's
    own tick (lockstep, as fast as it goes)."""
    sim = Simulation(spec)
    stepper = Stepper(sim, mode="lockstep", speed=0)
    steps = int(round(seconds / sim.dt))
    started = time.perf_counter()
    for _ in range(steps):
        stepper.tick()
        if sim.ended:
            break
    wall = time.perf_counter() - started
    fields = sim.snapshot.rules["ctf"]
    score = " : ".join(f"{k} {v['score']}" for k, v in fields["teams"].items())
    return sim.time, wall, f"{score}, {len(fields['tagged'])} tagged{', ' + fields['result'] if fields['result'] else ''}"


def network_game() -> str:
    """The shipped 5 vs 5 scenario over the network: the run's summary figures."""
    done = subprocess.run([sys.executable, "-m", "coopsim", "run", str(CTF), "--headless",
                           "--speed", "0", "--port", "0"], capture_output=True, text=True, timeout=900,
                          cwd=ROOT)
    out = done.stdout + done.stderr
    rtf = re.search(r"real-time factor\s+([\d.]+)", out)
    ended = re.search(r"ended\s+(.*)", out)
    steps = re.search(r"steps\s+(\d+)", out)
    return (f"| 5 vs 5, team B over the network | {steps.group(1) if steps else '?'} steps | "
            f"rtf **{rtf.group(1) if rtf else '?'}** | {ended.group(1) if ended else out[-200:]} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--team", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--no-network", action="store_true")
    args = ap.parse_args()
    print("| game | sim s | wall s | real-time factor | ratio to no drivers | end state |")
    print("|---|---:|---:|---:|---:|---|")
    base_t, base_w, _ = play(game(args.team, False), args.seconds)
    t, w, end = play(game(args.team, True), args.seconds)
    print(f"| {args.team} vs {args.team}, no drivers (baseline) | {base_t:.0f} | {base_w:.1f} | "
          f"{base_t / base_w:.1f} | 1 | - |")
    print(f"| {args.team} vs {args.team}, squad drivers, radio, arbitration | {t:.0f} | "
          f"{w:.1f} | **{t / w:.1f}** | {(t / w) / (base_t / base_w):.2f} | {end} |",
          flush=True)
    if not args.no_network:
        print("\n| game | steps | real-time factor | result |\n|---|---:|---:|---|")
        print(network_game())


if __name__ == "__main__":
    main()
