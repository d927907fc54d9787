"""Check: every scenario's run as one digest, to compare two checkouts.

For each scenario in ``scenarios/`` and each engine: load it (seed 1), drive every robot with
motors at (0.3, 0.25) m/s, take 150 steps, reset, take 150 more; hash every snapshot's step,
time, poses, velocities, commands, readings, rules and rate stamps. Prints one line per
(scenario, engine): the digest, or why it did not run (a scenario the kinematic engine refuses).

Two checkouts (this one and ``DIR``, e.g. the commit before a change, ``git archive``d):
``PYTHONPATH=DIR python tests/sim/scenario_digests.py`` against this checkout's output.

The flying and arm scenarios need a 3D engine: ``--engines mujoco,aerial`` digests them (the 2D
engines refuse them, a line each).

Usage: python tests/sim/scenario_digests.py [--steps 150] [--only NAME]
           [--engines pymunk,kinematic]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np

import coopsim

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def digest_run(path: Path, engine: str, steps: int) -> str:
    """The digest of ``steps`` steps, a reset and ``steps`` more of scenario ``path``."""
    from coopsim.formats.files import load
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    sim = Simulation(load(str(path)), seed=1, engine=engine)
    st = Stepper(sim, mode="lockstep")
    h = hashlib.sha256()
    for _ in range(2):
        _feed(h, st.sim.snapshot)
        for name in st.sim.snapshot.robots:
            if "motors" in st.sim.world.robot(name).modules:
                st.slots.put(name, "motors", (0.3, 0.25), attach=False)
        for _ in range(steps):
            _feed(h, st.tick())
        st.reset()
    return h.hexdigest()[:16]


def _feed(h, snap) -> None:
    h.update(f"{snap.step} {snap.time!r}".encode())
    for arr in (snap.poses, snap.velocities, snap.object_poses, snap.part_poses):
        h.update(np.ascontiguousarray(arr).tobytes())
    for group in (snap.commands, snap.readings):
        for key in sorted(group):
            h.update(key.encode() + np.ascontiguousarray(group[key]).tobytes())
    h.update(json.dumps(snap.rules, sort_keys=True, default=repr).encode())
    taken = snap.extra.get("taken")
    if taken is not None:
        for key in sorted(taken.steps):
            h.update(key.encode() + np.asarray(taken.steps[key]).tobytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--only", help="one scenario's file name (without .scenario)")
    parser.add_argument("--engines", default="pymunk,kinematic",
                        help="comma-separated engines to run each scenario on")
    args = parser.parse_args()
    print(f"# coopsim from {Path(coopsim.__file__).parent}")
    for path in sorted(SCENARIOS.glob("*.scenario")):
        if args.only and path.stem != args.only:
            continue
        for engine in args.engines.split(","):
            try:
                result = digest_run(path, engine, args.steps)
            except Exception as exc:  # noqa: BLE001 -- a refused scenario is a line too
                result = f"refused: {type(exc).__name__}"
            print(f"{path.stem:28s} {engine:10s} {result}", flush=True)


if __name__ == "__main__":
    main()
