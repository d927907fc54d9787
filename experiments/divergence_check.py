"""Study: what the divergence check costs the engines' step (issue 45, item 2), same run.

The load: N Crazyflie-sized free bodies (27 g) at 1-3 m over a floor big enough for them, each
holding m g of thrust give or take 2 % (they drift, never touch the floor: nothing diverges),
dt = 0.002 s. Timed: the engine's step alone, in blocks of ``--steps`` steps (median block).

* ``aerial``: what the engine's step does on one thread (the step's kernel
  ``aerial_kernels.step_rows`` from one state buffer into the other, the check's
  ``aerial_kernels.check_rows``) against the step's kernel in place alone (the baseline);
* ``mujoco``: ``MujocoEngine.step`` with its guard (every MuJoCo substep: the largest |qvel|
  and a sum of qpos; every step: the free bodies' positions) against the same step with the
  guard's methods replaced by no-ops (the baseline).

The ratio is checked / baseline time per step (1.00: free).

Usage: python experiments/divergence_check.py [--robots 10000] [--mujoco-robots 200]
[--steps 200] [--blocks 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from coopsim.model.robot_type import Assembly, BodySpec, MemberSpec, ShapeSpec
from coopsim.model.specs import FloorSpec
from coopsim.physics import aerial_kernels as k

MASS, INERTIA = 0.027, (1.4e-5, 1.4e-5, 2.17e-5)


def _flyers(n: int, side: float):
    rng = np.random.default_rng(1)
    out = []
    for i in range(n):
        x, y = rng.uniform(-side / 2 + 1, side / 2 - 1, 2)
        body = BodySpec("b", "dynamic", MASS, (ShapeSpec("circle", radius=0.05),), (x, y), 0.0,
                        free=True, z=float(rng.uniform(1, 3)), height=0.03, inertia=INERTIA)
        out.append(Assembly((MemberSpec(f"f{i}", "b", (), 0.05, drive="rotors"),), (body,)))
    return out


def _engine(cls, n: int):
    side = max(10.0, 2.0 * np.sqrt(n))
    engine = cls(FloorSpec(side, side))
    robots = [engine.add_assembly(a, i + 1).robots[f"f{i}"] for i, a in enumerate(_flyers(n,
                                                                                       side))]
    engine.set_robots(robots, ["rotors"] * n)
    rows = np.arange(n)
    thrust = MASS * 9.81 * np.random.default_rng(2).uniform(0.98, 1.02, n)
    engine.apply_wrench(rows, np.column_stack([np.zeros((n, 2)), thrust]),
                        np.full((n, 3), 1e-7))
    return engine


def _time(checked, baseline, steps: int, blocks: int) -> tuple[float, float]:
    """Median seconds per step of each over ``blocks`` blocks, the two alternating block by
    block (a busy machine slows both alike)."""
    checked(steps), baseline(steps)  # warm-up (compilation, caches)
    times: tuple[list, list] = ([], [])
    for _ in range(blocks):
        for fn, out in ((checked, times[0]), (baseline, times[1])):
            t = time.perf_counter()
            fn(steps)
            out.append((time.perf_counter() - t) / steps)
    return statistics.median(times[0]), statistics.median(times[1])


def aerial(n: int, steps: int, blocks: int) -> tuple[float, float]:
    from coopsim.physics.aerial import AerialEngine

    engine = _engine(AerialEngine, n)
    engine.step(0.002)

    bad, what, start = np.zeros(n, np.int64), np.zeros(n), np.zeros((n, 13))

    buffers = [engine.state, start]

    def checked(m):  # as engine.step does it, on one thread (it may share rows among threads)
        for _ in range(m):
            buffers.reverse()  # the step reads the last state, writes the other buffer
            k.step_rows(buffers[0], engine.wrench, engine.cmd, engine.param, engine.kind,
                        engine._half, 0.002, buffers[1])
            k.check_rows(buffers[0], engine._half, bad, what, buffers[1])

    def unchecked(m):  # in place: each row read from itself
        for _ in range(m):
            k.step_rows(engine.state, engine.wrench, engine.cmd, engine.param, engine.kind,
                        engine._half, 0.002, engine.state)
    return _time(checked, unchecked, steps, blocks)


def mujoco(n: int, steps: int, blocks: int) -> tuple[float, float]:
    from coopsim.physics import mujoco_health as mh
    from coopsim.physics.mujoco_engine import MujocoEngine

    engine = _engine(MujocoEngine, n)

    guard = {name: getattr(mh.Guard, name) for name in ("begin", "substep", "step")}
    none = {"begin": lambda self, data: None, "substep": lambda self, data: mh._NONE,
            "step": lambda self, data: mh._NONE}

    def run(methods):
        def steps(m):
            for name, fn in methods.items():
                setattr(mh.Guard, name, fn)
            for _ in range(m):
                engine.step(0.002)
        return steps
    try:
        return _time(run(guard), run(none), steps, blocks)
    finally:
        for name, fn in guard.items():
            setattr(mh.Guard, name, fn)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", type=int, default=10000)
    ap.add_argument("--mujoco-robots", type=int, default=200)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--blocks", type=int, default=5)
    a = ap.parse_args()
    print(f"{'engine':<8} {'robots':>7} {'checked us/step':>16} {'baseline us/step':>17} "
          f"{'ratio':>6}")
    for label, n, fn in (("aerial", a.robots, aerial), ("mujoco", a.mujoco_robots, mujoco)):
        checked, base = fn(n, a.steps, a.blocks)
        print(f"{label:<8} {n:>7} {checked * 1e6:>16.1f} {base * 1e6:>17.1f} "
              f"{checked / base:>6.2f}")


if __name__ == "__main__":
    main()
