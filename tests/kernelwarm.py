"""Compile the kernels only the suite uses into numba's on-disk cache, once.

Run by tests/conftest.py after ``coopsim warmup`` (every kernel a run uses), before the xdist
workers start. Why: the tests' own worlds (``coopsim bench step``'s at one and two threads, an
A* search with its smoothing, the batch casters as tests/env/test_learning_batch.py compares
them) compile versions a run does not; on a fresh checkout the workers compiled the same
kernels at once (test_kinematic.py's first tests took 330 s of a loaded machine: 24 s of CPU
cold against 1.7 s from the cache). Any failure changes nothing: the tests then compile what
they need.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _bench(*args: str) -> None:
    from coopsim.app.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(["bench", "step", "--steps", "2", *args],
                 standalone_mode=False)
        except SystemExit:
            pass


def _swarm() -> None:
    from coopsim.swarm.astar import find_path
    from coopsim.swarm.grid import Grid

    blocked = np.zeros((40, 40), bool)
    blocked[10:30, 20] = True
    find_path(Grid(blocked, 0.05, (0.0, 0.0)), (0.2, 1.0), (1.8, 1.0))


def _batch() -> None:
    """The batched environments' copy caster beside the world caster, as
    tests/env/test_learning_batch.py compares them (their second signatures: 300 s of a loaded
    machine in that test)."""
    try:
        import gymnasium

        import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0
    except ImportError:
        return  # coopsim[learning] is not installed: no test needs these kernels
    from coopsim.env import batchcast
    from coopsim.plugins.modules.sonar import ANGLES
    from coopsim.raycast.jitcast import JitRayCaster, fan_directions

    env = gymnasium.make_vec("coopsim/Scenario-v0", num_envs=9, scenario=str(
        ROOT / "scenarios" / "learn_avoid.scenario"), robot=["r1", "r2", "r3", "r4"],
        observe=["sonar"], lean=True, backend="world")
    caster, sim = env.batch.caster, env.batch.sim
    env.reset(seed=0)
    env.step(np.tile([0.5, 0.3], (9, 4, 1)))
    radius, group = np.ascontiguousarray(sim.robots.radius), sim.robots.group.astype(np.int64)
    pose = np.ascontiguousarray(sim.snapshot.poses)
    heading, fan = fan_directions(pose[:, 2], ANGLES)
    moving = (np.ascontiguousarray(np.column_stack([pose[:, :2], radius])), np.zeros((0, 4)),
              group, np.zeros(0, np.int64))
    reach = np.full(len(pose), 2.0)
    caster.fan(pose, heading, fan, reach, radius, group, moving)
    JitRayCaster.fan(caster, pose, heading, fan, reach, radius, group, moving)
    env.close()


def main() -> None:
    for threads in ("1", "2"):
        _bench("--robots", "3,300", "--engine", "kinematic", "--threads", threads)
        _bench("--robots", "3", "--engine", "aerial", "--robot-type", "crazyflie",
               "--threads", threads)
    _swarm()
    from coopsim.physics.aerial import raykernel as aerial_raykernel

    aerial_raykernel._load()  # the aerial engine's range sensing (tests/physics/test_aerial_rays)
    try:
        _batch()
    except Exception as exc:  # noqa: BLE001 -- the test compiles them then, as before
        print(f"kernelwarm: the batch casters were not compiled: {exc!r}", file=sys.stderr)


if __name__ == "__main__":
    main()
