"""The goal figure of a described quadrotor: a URDF quadrotor with its rotors named
(examples/descriptions/nanoquad.scenario) flies the ``flight`` driver's eight; its mean
horizontal error (the distance in x-y from the reference the driver sends with each command)
over the laps after the take-off hold, printed with the largest and the vertical one.

    PYTHONPATH=. python studies/imported_eight.py [--seconds 19] [--scenario PATH]

Goal: mean horizontal error within 0.1 m (docs/robots.md, "Your own robot").
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from coopsim.formats.files import load
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "examples" / "descriptions" / "nanoquad.scenario"


def fly(path: Path, seconds: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(positions (k, 3) m, references (k, 3) m, dt s, take-off hold s) of one run."""
    spec = load(str(path))
    stepper = Stepper(Simulation(spec), mode="lockstep")
    dt = spec.settings.dt
    where, refs = [], []
    for _ in range(int(round(seconds / dt))):
        snap = stepper.tick()
        where.append(snap.pose3d[0, :3].copy())
        refs.append(snap.commands["rotors"][0, 5:8].copy())
    takeoff = dict(spec.robots[0].drivers[0].settings).get("takeoff", 3.0)
    return np.array(where), np.array(refs), dt, float(takeoff)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", type=Path, default=SCENARIO)
    parser.add_argument("--seconds", type=float, default=19.0)
    args = parser.parse_args()
    where, refs, dt, takeoff = fly(args.scenario, args.seconds)
    lap = slice(int(round(takeoff / dt)), None)
    flat = np.linalg.norm(where[lap, :2] - refs[lap, :2], axis=1)
    up = np.abs(where[lap, 2] - refs[lap, 2])
    print(f"{args.scenario.name}: {args.seconds:g} s at dt {dt:g} s; after the {takeoff:g} s "
          f"hold: mean horizontal error {flat.mean() * 1000:.1f} mm (goal < 100 mm), max "
          f"{flat.max() * 1000:.1f} mm; mean vertical {up.mean() * 1000:.1f} mm; span x "
          f"{np.ptp(where[lap, 0]):.2f} m, y {np.ptp(where[lap, 1]):.2f} m")


if __name__ == "__main__":
    main()
