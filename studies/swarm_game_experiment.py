"""The swarm-gaming paper's measurements, repeated on coopsim (docs/experiments/swarm_game.md).

Table 3 -- one squad command, GoTo flag B in a wedge around the water, for team A's attacking
squad of 3 on the ctf arena (scenarios/ctf.scenario's map), 20 repetitions:

* player -> SI: a player sends the order to ``/squads`` (REQ/REP) of a live run; timed from the
  send until a subscriber of ``/squads/events`` (the squad's controller) has it;
* SI: the swarm library decomposes it (:meth:`SquadRunner.apply`: formation, assignment, A*
  for the squad, per-robot legs and detours, the pick-up) for the squad where it stands;
* SI -> squad: the controller hands every robot its first wheel command (one pipelined round of
  motion commands over the protocol, ``Fleet.move``, real-time mode).

Each part runs once untimed first (a process's first search loads the compiled kernels from
numba's cache, ~0.3 s; the first request opens sockets). Then the SI alone for 10, 50 and 200 robots (random free spots in team A's half, wedge and
block). Table 4 -- a 3-robot squad in a line gets a GoTo every I ms of sim time (I = 100 ...
5000), alternating between two points across the water, 10 commands per interval, while it
drives in a real simulation (in-process, dt = 0.05 s): the SI's decomposition time and the robot
intelligence's time (the three robots' subsumption decisions for one step) per interval.

Usage: python studies/swarm_game_experiment.py [--repeat 20] [--sizes 10 50 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from coopsim.client import Client
from coopsim.client.fleet import Fleet
from coopsim.client.squads import Squads, Subscription
from coopsim.formats.files import load
from coopsim.model.orders import SquadOrder
from coopsim.model.specs import SquadSpec
from coopsim.sim.drivers import LocalRobot
from coopsim.sim.simulation import Simulation
from coopsim.swarm.behaviours import RobotState
from coopsim.swarm.ctf import SquadRunner
from coopsim.swarm.game import planning_grid

ROOT = Path(__file__).resolve().parents[1]
VIEW = ROOT / "tests" / "games" / "data" / "ctf_view.scenario"  # the arena, robots standing
FLAG_B = (8.0, 0.0)
INTERVALS = (100, 250, 500, 750, 1000, 1500, 2000, 2500, 5000)  # ms, the paper's Table 4


def row(name: str, ms: list[float]) -> str:
    sd = statistics.stdev(ms) if len(ms) > 1 else 0.0
    return f"| {name} | {statistics.mean(ms):.2f} | {sd:.2f} | {min(ms):.2f} | {max(ms):.2f} |"


def table3(repeat: int) -> None:
    """Player -> SI, SI and SI -> squad for team A's attackers (a1, a2, a3)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from nethelpers import live

    spec = load(VIEW)
    grid = planning_grid(Simulation(spec).snapshot.extra["map"])
    with live(spec) as run, Client(run.network.endpoint) as client:
        squads, sub = Squads(client), Subscription(client, ["A"])
        fleet = Fleet(client, ["a1", "a2", "a3"])
        time.sleep(0.3)
        squads.send("A", "capture", FLAG_B, "wedge")  # warm-up: the server's grid, sockets
        sub.poll(5.0)
        runner = SquadRunner(SquadSpec("A", ("a1", "a2", "a3"), "wedge", 0.6, "A"), grid,
                             Simulation(spec).snapshot.extra["map"])
        where = {r["name"]: (r["x"], r["y"]) for r in client.sim().state()["robots"]}
        runner.apply(SquadOrder("A", "capture", FLAG_B, "wedge"), where)  # warm-up: loads the
        fleet.move("motors", "set_speeds", [(0.0, 0.0)] * 3)  # kernels, opens the sockets
        player, si, out = [], [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            squads.send("A", "capture", FLAG_B, "wedge")
            got = sub.poll(5.0)
            t1 = time.perf_counter()
            assert runner.apply(got[0], where), runner.error
            t2 = time.perf_counter()
            fleet.move("motors", "set_speeds", [(0.0, 0.0)] * 3)
            t3 = time.perf_counter()
            player.append((t1 - t0) * 1e3)
            si.append((t2 - t1) * 1e3)
            out.append((t3 - t2) * 1e3)
        sub.close()
    print(f"Table 3: GoTo flag B in a wedge around the water, 3 robots, {repeat} repetitions "
          f"({len(runner.controllers['a1'].command.commands)} commands for a1)\n")
    print("| ms | mean | σ | min | max |\n|---|---:|---:|---:|---:|")
    print(row("player -> SI", player))
    print(row("SI (decomposition)", si))
    print(row("SI -> squad", out) + "\n", flush=True)


def spots(grid, n: int, seed: int = 7) -> np.ndarray:
    """n free cells of team A's half (x < -1.5 m), 0.55 m apart at least."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    while len(out) < n:
        p = rng.uniform((-9.6, -5.6), (-1.5, 5.6))
        if grid.is_free(*p) and all(np.hypot(*(p - q)) >= 0.55 for q in out):
            out.append(p)
    return np.array(out)


def sizes(sizes_: list[int], repeat: int) -> None:
    spec_map = Simulation(load(VIEW)).snapshot.extra["map"]
    grid = planning_grid(spec_map)
    print("SI alone, the same command for larger squads\n")
    print("| robots | formation | mean ms | σ ms | min ms | max ms |\n|---:|---|---:|---:|---:|---:|")
    for n in sizes_:
        where = spots(grid, n)
        names = tuple(f"r{k}" for k in range(n))
        for formation in ("wedge", "block"):
            runner = SquadRunner(SquadSpec("A", names, formation, 0.6, "A"), grid, spec_map)
            order = SquadOrder("A", "capture", FLAG_B, formation)
            positions = dict(zip(names, map(tuple, where)))
            runner.apply(order, positions)
            ms = []
            for _ in range(repeat):
                assert runner.apply(order, positions), runner.error
                ms.append(runner.last_ms)
            print(f"| {n} | {formation} | {statistics.mean(ms):.1f} | {statistics.stdev(ms):.1f} "
                  f"| {min(ms):.1f} | {max(ms):.1f} |", flush=True)
    print()


def table4(commands: int) -> None:
    """A 3-robot line ordered back and forth across the water every I ms of sim time."""
    spec = load(VIEW)
    spec = replace(spec, robots=tuple(r for r in spec.robots if r.name in ("a1", "a2", "a3")),
                   rules=(), squads=(SquadSpec("A", ("a1", "a2", "a3"), "line", 0.6, "A"),))
    goals = [(4.0, 3.0), (-5.0, -3.0)]
    print("Table 4: a GoTo every I ms to a 3-robot line, 10 commands each (means)\n")
    print("| interval ms | " + " | ".join(str(i) for i in INTERVALS) + " |")
    print("|---|" + "---:|" * len(INTERVALS))
    si_row, ri_row = [], []
    for interval in INTERVALS:
        sim = Simulation(spec)
        runner = SquadRunner(spec.squads[0], planning_grid(sim.snapshot.extra["map"]),
                             sim.snapshot.extra["map"])
        bots = {n: LocalRobot(sim, n) for n in runner.robots}
        si, ri, issued, every = [], [], 0, max(1, round(interval / 1000 / sim.dt))
        while issued < commands:
            snap = sim.snapshot
            states = {n: RobotState(*snap.poses[snap.index[n]][:2], snap.poses[snap.index[n]][2],
                                    tuple(snap.reading(n, "sonar")),
                                    tuple(int(v) for v in snap.reading(n, "bumper")), snap.time)
                      for n in runner.robots}
            if sim.step % every == 0:
                order = SquadOrder("A", "goto", goals[issued % 2])
                runner.apply(order, {n: (s.x, s.y) for n, s in states.items()})
                si.append(runner.last_ms)
                issued += 1
            t0 = time.perf_counter()
            wheels = runner.decide(states)
            ri.append((time.perf_counter() - t0) * 1e3)
            for n, (left, right) in wheels.items():
                bots[n].motors.set_speeds(left, right)
            sim.command({})
            sim.actuate()
            sim.physics()
            sim.sense()
        si_row.append(statistics.mean(si))
        ri_row.append(statistics.mean(ri))
    print("| SI: decomposition ms | " + " | ".join(f"{v:.1f}" for v in si_row) + " |")
    print("| RI: one step's decisions, 3 robots, ms | " +
          " | ".join(f"{v:.3f}" for v in ri_row) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 200])
    ap.add_argument("--commands", type=int, default=10)
    args = ap.parse_args()
    table3(args.repeat)
    sizes(args.sizes, args.repeat)
    table4(args.commands)


if __name__ == "__main__":
    main()
