"""Benchmark: how well squads keep their formation, and what formation control costs.

1. Shape: every formation of the library x squad sizes x layouts (open floor, one obstacle on
   the way, a corridor narrower than the wide formations). A squad of ``single`` robots (pymunk,
   lockstep, dt 0.05 s) starts in a loose column at x = -6.5 on a 24 x 10 m floor and is sent
   by the ``squad_follow`` driver to a red target at (5, 0), ordered to face +x there (circles
   and half circles with a ``[SQUAD_n] radius`` that fits: :func:`radius_of`). Per run: the RMS formation error while
   travelling (the squad_shape rule's error: RMS distance to the best-fitting formation, every
   step from the first 0.3 m of the centroid's travel until it is within 1 m of the goal), the
   RMS distance to the ordered slots at arrival, the time to arrive (every robot within 0.1 m
   of its slot facing the ordered heading), member collisions (steps with two robots closer
   than their diameters + 0.01 m), breaks (the error over 0.25 m) and, with the obstacle, the
   centroid's travel past the obstacle until the error is back under 0.15 m.
2. Cost: 20 squads of 10 robots (200 robots, one driver) on a 60 x 60 m floor; the driver's
   time per step against the whole step's, same run.

Usage: python studies/formation_study.py [--sizes 3 6 12] [--formations ...]
       [--layouts open obstacle corridor] [--plot DIR] [--only shape|cost]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from coopsim.formats.files import load
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper
from coopsim.swarm.formations import Formation, shape_error

FORMATIONS = ("line", "column", "wedge", "inverse_wedge", "circle", "half_circle")
LAYOUTS = {
    "open": "",
    "obstacle": "[WALL_1]\ntype cylinder\nsize 1.0 1.0 0.5\nposition 0 0 0.25\n",
    "corridor": ("[WALL_1]\ntype box\nsize 3.0 3.5 0.5\nposition 0 2.85 0.25\n"
                 "[WALL_2]\ntype box\nsize 3.0 3.5 0.5\nposition 0 -2.85 0.25\n"),
}  # the corridor: 2.2 m wide between x = -1.5 and 1.5
GOAL = (5.0, 0.0)
FLOOR = 24.0  # m long (10 m wide): a column of 12, 8.8 m long, fits at the start and the goal
SPACING = 0.8
DT = 0.05
LIMIT = 150.0  # s of sim time a run may take
ARC = {"circle": 2 * math.pi, "half_circle": 1.5 * math.pi}  # circle, the paper's 270 deg arc


def radius_of(formation: str, n: int) -> float | None:
    """The ``[SQUAD_n] radius`` of a circle or half circle: neighbours 1.25 x SPACING apart on
    it (the paper's n x spacing, 9.6 m for 12 robots, does not fit the 10 m floor); None for
    the other formations."""
    if formation not in ARC or n < 2:
        return None
    return round(1.25 * SPACING / (2 * math.sin(ARC[formation] / (2 * n))), 3)


def formation_of(formation: str, n: int) -> Formation:
    return Formation(formation, SPACING, radius_of(formation, n))


def scenario_text(formation: str, n: int, layout: str, folder: Path) -> Path:
    """Write the world and scenario of one run into ``folder``; return the scenario."""
    (folder / "bench.world").write_text(f"[FLOOR]\nsize {FLOOR} 10 0.1\n{LAYOUTS[layout]}")
    rows = []
    per_column = 6
    for k in range(n):
        col, row = divmod(k, per_column)
        y = (row - (min(n, per_column) - 1) / 2) * 0.9
        rows.append(f"[ROBOT_{k + 1}]\ntype single\nname r{k + 1}\n"
                    f"position {-6.5 - 0.9 * col:.2f} {y:.2f} 0\n"
                    "driver squad_follow color red heading 0\n")
    names = " ".join(f"r{k + 1}" for k in range(n))
    radius = radius_of(formation, n)
    radius_line = "" if radius is None else f"radius {radius}\n"
    text = (f"[WORLD]\nfile bench.world\n\n[TARGET]\nred {GOAL[0]} {GOAL[1]} 0\n\n"
            + "\n".join(rows) +
            f"\n[SQUAD_1]\nname S\nrobots {names}\nformation {formation}\nspacing {SPACING}\n"
            f"{radius_line}\n[SETTINGS]\nmode lockstep\ndt {DT}\nseed 1\n")
    path = folder / "bench.scenario"
    path.write_text(text)
    return path


def run_case(formation: str, n: int, layout: str) -> dict:
    """One run; the figures of the module docstring."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = load(str(scenario_text(formation, n, layout, Path(tmp))))
    stepper = Stepper(Simulation(spec), mode="lockstep")
    offsets = formation_of(formation, n).offsets(n)
    start = None
    travel, errors, collisions, breaks, broke = 0.0, [], 0, 0, False
    passed_at, reform_travel, arrived_at, last = None, None, None, None
    radius = 0.2
    while stepper.snapshot.time < LIMIT:
        snap = stepper.tick()
        pos = snap.poses[:, :2]
        centre = pos.mean(axis=0)
        if start is None:
            start = centre.copy()
        if last is not None:
            travel += float(np.hypot(*(centre - last)))
        last = centre
        heading = math.atan2(float(np.sin(snap.poses[:, 2]).sum()),
                             float(np.cos(snap.poses[:, 2]).sum()))
        err = float(np.sqrt(np.mean(shape_error(pos, offsets, heading) ** 2)))
        d = np.hypot(pos[:, None, 0] - pos[None, :, 0], pos[:, None, 1] - pos[None, :, 1])
        d[np.diag_indices(n)] = np.inf
        collisions += int(d.min() < 2 * radius + 0.01)
        moving = np.hypot(*(centre - start)) > 0.3 and np.hypot(*(centre - GOAL)) > 1.0
        if moving:
            errors.append(err)
            if err > 0.25 and not broke:
                breaks, broke = breaks + 1, True
            elif err < 0.1:
                broke = False
        if layout == "obstacle" and passed_at is None and centre[0] > 0.5:
            passed_at = travel
        if passed_at is not None and reform_travel is None and err <= 0.15:
            reform_travel = travel - passed_at
        if arrived_at is None and _arrived(snap, offsets, formation):
            arrived_at = snap.time
            break
    final = _final_error(stepper.snapshot, offsets)
    return {"formation": formation, "n": n, "layout": layout,
            "rms_travel": float(np.sqrt(np.mean(np.square(errors)))) if errors else None,
            "rms_arrival": final, "time": arrived_at, "collision_steps": collisions,
            "breaks": breaks, "reform_travel": reform_travel}


def _goal_slots(offsets: np.ndarray) -> np.ndarray:
    """The ordered slots at the goal (heading along +x, the path's last leg here)."""
    return np.asarray(GOAL) + offsets


def _final_error(snap, offsets) -> float:
    from scipy.optimize import linear_sum_assignment
    slots = _goal_slots(offsets)
    pos = snap.poses[:, :2]
    cost = np.hypot(pos[:, None, 0] - slots[None, :, 0], pos[:, None, 1] - slots[None, :, 1])
    r, c = linear_sum_assignment(cost)
    return float(np.sqrt(np.mean(cost[r, c] ** 2)))


def _arrived(snap, offsets, formation: str) -> bool:
    yaw_ok = np.all(np.abs((snap.poses[:, 2] + np.pi) % (2 * np.pi) - np.pi) < math.radians(10))
    return bool(yaw_ok and _final_error(snap, offsets) <= 0.1)


def cost(squads: int = 20, size: int = 10, steps: int = 200) -> dict:
    """Driver time per step against the whole step, 200 robots in 20 squads."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "big.world").write_text("[FLOOR]\nsize 60 60 0.1\n")
        rows, squads_text = [], []
        for q in range(squads):
            y0 = -27 + q * 2.8
            names = []
            for k in range(size):
                name = f"q{q}r{k}"
                names.append(name)
                rows.append(f"[ROBOT_{len(rows) + 1}]\ntype single\nname {name}\n"
                            f"position {-25 + 0.9 * k:.2f} {y0:.2f} 0\n"
                            "driver squad_follow color red heading 0\n")
            squads_text.append(f"[SQUAD_{q + 1}]\nname S{q}\nrobots {' '.join(names)}\n"
                               f"formation wedge\nspacing 0.8\n")
        text = ("[WORLD]\nfile big.world\n\n[TARGET]\nred 20 0 0\n\n" + "\n".join(rows)
                + "\n" + "\n".join(squads_text) + "\n[SETTINGS]\nmode lockstep\ndt 0.05\n")
        (folder / "big.scenario").write_text(text)
        spec = load(str(folder / "big.scenario"))
    sim = Simulation(spec)
    stepper = Stepper(sim, mode="lockstep")
    for _ in range(5):
        stepper.tick()  # the first decomposition (planning) is not control
    drivers = sim.drivers
    original = drivers.run
    spent = []

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        out = original(*args, **kwargs)
        spent.append(time.perf_counter() - t0)
        return out
    drivers.run = timed
    t0 = time.perf_counter()
    for _ in range(steps):
        stepper.tick()
    whole = (time.perf_counter() - t0) / steps
    control = statistics.median(spent)
    return {"robots": squads * size, "squads": squads, "control_ms": control * 1e3,
            "step_ms": whole * 1e3, "share": control / whole}


def plot(results: list[dict], folder: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    folder.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, layout in zip(axes, LAYOUTS):
        rows = [r for r in results if r["layout"] == layout]
        for formation in FORMATIONS:
            pts = [(r["n"], r["rms_travel"]) for r in rows
                   if r["formation"] == formation and r["rms_travel"] is not None]
            if pts:
                ax.plot(*zip(*pts), marker="o", label=formation)
        ax.axhline(0.25, color="gray", linestyle="--", linewidth=0.8)
        ax.set_title(f"{layout}: RMS formation error while travelling")
        ax.set_xlabel("squad size")
    axes[0].set_ylabel("m")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(folder / "formation_travel.png", dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[3, 6, 12])
    parser.add_argument("--formations", nargs="+", default=list(FORMATIONS))
    parser.add_argument("--layouts", nargs="+", default=list(LAYOUTS))
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--only", choices=("shape", "cost"))
    args = parser.parse_args()
    results = []
    if args.only in (None, "shape"):
        for layout in args.layouts:
            for formation in args.formations:
                for n in args.sizes:
                    r = run_case(formation, n, layout)
                    results.append(r)
                    print(json.dumps(r), flush=True)
        if args.plot:
            plot(results, args.plot)
    if args.only in (None, "cost"):
        print("cost", json.dumps(cost()), flush=True)


if __name__ == "__main__":
    main()
