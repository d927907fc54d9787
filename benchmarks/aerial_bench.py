"""Benchmark: the ``aerial`` engine's step against raw MuJoCo's on the same free bodies, same run.

The load: N Crazyflie-sized free bodies (27 g, inertia 1.4e-5, 1.4e-5, 2.17e-5 kg m^2) spread
over a 30 m x 30 m floor at 1-3 m, each holding a constant body-frame wrench (m g of thrust
give or take 2 %, small torques: they drift and turn slowly, never touch the floor), dt =
0.002 s (500 Hz). What is timed is the engine's step alone (``AerialEngine.step``;
``mujoco.mj_step``): no wrench setting, no state read-out. The numba kernels are compiled (or
loaded from numba's cache) and run for the warm-up steps before any timing.

Rows, each timed in blocks of ``--steps`` steps (median and best block, steps/s):

* ``aerial`` as shipped (one thread below ``aerial_kernels.PARALLEL_MIN`` rows);
* ``aerial, 2 threads``: the parallel kernel forced on two threads;
* ``aerial, numpy``: the numpy twin;
* ``mujoco``: one MjModel holding the N bodies (free joints, Euler integrator, contacts
  disabled: the same physics), ``mj_step`` on one thread.

The ratio column is each row's steps/s over MuJoCo's; real time is steps/s / 500.

Usage: python benchmarks/aerial_bench.py [--robots 1000] [--steps 500] [--blocks 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

from coopsim.model import threads as policy

policy.use(2)  # before numba loads: a pool of at least two threads

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from coopsim.model.robot_type import Assembly, BodySpec, MemberSpec, ShapeSpec  # noqa: E402
from coopsim.model.specs import FloorSpec  # noqa: E402
from coopsim.physics import aerial_kernels  # noqa: E402
from coopsim.physics.aerial import AerialEngine  # noqa: E402

DT = 0.002  # s: 500 Hz
MASS, INERTIA, RADIUS, HEIGHT = 0.027, (1.4e-5, 1.4e-5, 2.17e-5), 0.05, 0.03
SIDE = 30.0  # m, the floor's side


def load(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start positions (n, 3) m and yaws (n,) rad, and the held wrenches (n, 6) N, N m."""
    rng = np.random.default_rng(seed)
    pos = np.column_stack([rng.uniform(-SIDE / 2 + 1, SIDE / 2 - 1, (n, 2)),
                           rng.uniform(1.0, 3.0, n)])
    wrench = np.zeros((n, 6))
    wrench[:, 2] = MASS * 9.81 * rng.uniform(0.98, 1.02, n)
    wrench[:, 3:] = rng.normal(0.0, 1e-8, (n, 3))
    return pos, rng.uniform(-np.pi, np.pi, n), wrench


def aerial(n: int, kernels: str) -> AerialEngine:
    """The load on an aerial engine, wrenches held."""
    pos, yaw, wrench = load(n)
    engine = AerialEngine(FloorSpec(SIDE, SIDE), kernels=kernels)
    handles = []
    for k in range(n):
        body = BodySpec("body", "dynamic", MASS, (ShapeSpec("circle", radius=RADIUS),),
                        (pos[k, 0], pos[k, 1]), yaw[k], free=True, z=pos[k, 2], height=HEIGHT,
                        inertia=INERTIA)
        made = engine.add_assembly(Assembly((MemberSpec(f"cf{k}", "body", (), RADIUS,
                                                        drive="rotors"),), (body,)), k + 1)
        handles.append(made.robots[f"cf{k}"])
    engine.set_robots(handles, ["rotors"] * n)
    engine.apply_wrench(np.arange(n), wrench[:, :3], wrench[:, 3:])
    return engine


def mujoco_model(n: int):
    """The load as one MuJoCo model: (model, data, step), the force rotated once at the start
    and held as the free joints' generalized force (the step alone is timed either way)."""
    pos, yaw, wrench = load(n)
    bodies = "".join(
        f'<body pos="{p[0]:.17g} {p[1]:.17g} {p[2]:.17g}" euler="0 0 {y:.17g}"><freejoint/>'
        f'<inertial pos="0 0 0" mass="{MASS}" diaginertia="{INERTIA[0]} {INERTIA[1]} '
        f'{INERTIA[2]}"/></body>' for p, y in zip(pos, yaw))
    xml = (f'<mujoco><compiler angle="radian"/><option timestep="{DT}" integrator="Euler">'
           f'<flag contact="disable"/></option><worldbody>{bodies}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qfrc_applied[:] = wrench.ravel()  # level bodies: the body's z is the world's
    return lambda: mujoco.mj_step(model, data)


def timed(step, steps: int, blocks: int, warmup: int) -> tuple[float, float]:
    """Median and best steps/s over ``blocks`` blocks of ``steps`` steps, after ``warmup``."""
    for _ in range(warmup):
        step()
    rates = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        rates.append(steps / (time.perf_counter() - t0))
    return statistics.median(rates), max(rates)


def rows(n: int, steps: int, blocks: int) -> list[tuple[str, float, float]]:
    """(label, median steps/s, best steps/s) of every row of the module's list."""
    out = []
    shipped = aerial_kernels.PARALLEL_MIN
    for label, kernels, threads, minimum in (
            ("aerial (as shipped)", "numba", 1, shipped),
            ("aerial, 2 threads", "numba", 2, 0),
            ("aerial, numpy", "numpy", 1, shipped)):
        policy.use(threads)
        aerial_kernels.PARALLEL_MIN = minimum
        engine = aerial(n, kernels)
        out.append((label, *timed(lambda: engine.step(DT), steps, blocks, warmup=50)))
    aerial_kernels.PARALLEL_MIN = shipped
    policy.use(1)
    out.append(("mujoco (mj_step, 1 thread)", *timed(mujoco_model(n), steps, blocks, 50)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1000])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--blocks", type=int, default=7)
    args = parser.parse_args()
    print(f"dt {DT} s; numba threads available: {policy.count()}")
    for n in args.robots:
        table = rows(n, args.steps, args.blocks)
        reference = table[-1][1]
        print(f"\n{n} free bodies\n\n| engine | steps/s (median) | best | real time | "
              "vs MuJoCo |\n|---|---|---|---|---|")
        for label, median, best in table:
            print(f"| {label} | {median:,.0f} | {best:,.0f} | {median * DT:.1f}x | "
                  f"{median / reference:.1f}x |")


if __name__ == "__main__":
    main()
