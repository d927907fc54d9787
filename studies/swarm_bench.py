"""Benchmark: squad-command decomposition time on a capture-the-flag arena.

The arena is 20 m x 20 m at 0.1 m per cell (40,000 cells): team A's base at the bottom, team B's
flag at the top, a water zone across the middle with two gaps (no-go polygons), and boxes and
pillars in both halves. A squad of N robots of team A stands in the bottom half (random free
spots, at least 0.55 m apart) and is ordered to the enemy flag: ``SquadGoTo`` in the paper's wedge
and in a compact block. Timed is :meth:`Squad.command` with the positions given, i.e. formation,
assignment, the squad's A* path, smoothing, slot fitting, every robot's leg checks and detours,
and handing the orders over -- no driving. Each size runs 20 times after one untimed warm-up
(which also builds the grid's landmark tables, timed separately as "prepare").

Compiled against Python: the figures are the shipped path (numba kernels for the searches,
line of sight, smoothing and slot fitting: coopsim.swarm.kernels); up to ``--python-max`` robots
the same commands are also timed with the kernels switched off (pure Python A*, scipy's
Dijkstra, numpy), the baseline of the ratio column.

Usage: python studies/swarm_bench.py [--repeat 20] [--sizes 3 10 50 200] [--python-max 50]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from coopsim.model.specs import FloorSpec, ObjectSpec
from coopsim.swarm import Formation, Squad, SquadGoTo, SwarmError, build_grid, kernels

FLAG_B = (1.0, 8.8)  # m, team B's flag, near the top edge
WATER = [  # three pools across y = 0, leaving gaps around x = -6.3 and x = 3.7
    np.array([[-10.0, -1.5], [-7.0, -1.8], [-7.0, 1.6], [-10.0, 1.5]]),
    np.array([[-5.5, -1.5], [2.5, -2.0], [3.0, 1.5], [-5.5, 1.8]]),
    np.array([[4.5, -1.7], [10.0, -1.5], [10.0, 1.5], [4.5, 1.9]]),
]
OBSTACLES = [
    ObjectSpec("b1", "box", (2.0, 0.3, 0.5), (-4.0, -5.0, 0.25)),
    ObjectSpec("b2", "box", (0.3, 3.0, 0.5), (6.0, -5.5, 0.25), yaw=0.3),
    ObjectSpec("p1", "cylinder", (1.0, 1.0, 0.5), (1.0, -4.5, 0.25)),
    ObjectSpec("p2", "cylinder", (1.0, 1.0, 0.5), (2.0, 5.0, 0.25)),
    ObjectSpec("b3", "box", (3.0, 0.3, 0.5), (-3.0, 6.0, 0.25)),
    ObjectSpec("b4", "box", (0.3, 2.0, 0.5), (6.0, 5.0, 0.25)),
    ObjectSpec("flag_wall", "box", (2.5, 0.3, 0.5), (1.0, 7.3, 0.25)),  # guards flag B
]


class Parked:
    """A robot that stands where it is put (the benchmark never drives)."""

    class _Read:
        def __init__(self, value) -> None:
            self.value = value

        def read(self):
            return self.value

    def __init__(self, x: float, y: float) -> None:
        self.gps, self.compass = self._Read([x, y]), self._Read([0.0])
        self.sonar, self.bumper = self._Read([2.0] * 11), self._Read([0, 0])
        self.motors = None


def team_a(grid, n: int, seed: int = 7) -> np.ndarray:
    """n free spots in the bottom half (y < -3 m), at least 0.55 m apart, m."""
    rng = np.random.default_rng(seed)
    spots: list[np.ndarray] = []
    while len(spots) < n:
        p = rng.uniform((-9.5, -9.5), (9.5, -3.0))
        if grid.is_free(*p) and all(np.hypot(*(p - q)) >= 0.55 for q in spots):
            spots.append(p)
    return np.array(spots)


def time_command(grid, n: int, formation: str, repeat: int) -> list[float]:
    """Wall times (ms) of ``repeat`` decompositions of the same command."""
    pos = team_a(grid, n)
    squad = Squad([Parked(*p) for p in pos], grid, Formation(formation, 0.6))
    cmd = SquadGoTo(*FLAG_B)
    squad.command(cmd, pos)  # warm-up
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        squad.command(cmd, pos)
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--sizes", type=int, nargs="+", default=[3, 10, 50, 200])
    ap.add_argument("--formations", nargs="+", default=["wedge", "block"])
    ap.add_argument("--python-max", type=int, default=50)
    args = ap.parse_args()
    t0 = time.perf_counter()
    grid = build_grid(FloorSpec(20.0, 20.0), OBSTACLES, WATER, resolution=0.1,
                      robot_radius=0.2, clearance=0.1)
    t1 = time.perf_counter()
    grid.prepare()
    t2 = time.perf_counter()
    print(f"grid {grid.shape[1]} x {grid.shape[0]} cells, {grid.blocked.mean():.0%} blocked: "
          f"build {1e3 * (t1 - t0):.1f} ms, prepare (landmarks) {1e3 * (t2 - t1):.1f} ms\n")
    print("| robots | formation | mean ms | σ ms | min ms | max ms | Python mean ms | "
          "Python / compiled |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for formation in args.formations:
        for n in args.sizes:
            try:
                ms = time_command(grid, n, formation, args.repeat)
            except SwarmError as exc:
                print(f"| {n} | {formation} | {exc} | | | | | |")
                continue
            slow = ""
            if n <= args.python_max and kernels.COMPILED:
                kernels.COMPILED = False
                try:
                    py = statistics.mean(time_command(grid, n, formation, args.repeat))
                finally:
                    kernels.COMPILED = True
                slow = f"{py:.1f} | {py / statistics.mean(ms):.1f}"
            print(f"| {n} | {formation} | {statistics.mean(ms):.1f} | {statistics.stdev(ms):.1f}"
                  f" | {min(ms):.1f} | {max(ms):.1f} | {slow or '- | -'} |", flush=True)


if __name__ == "__main__":
    main()
