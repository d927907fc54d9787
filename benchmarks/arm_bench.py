"""Benchmark: arms on the ``mujoco`` engine (issue 34), each figure against a baseline measured
in the same run.

Rows (each timed in blocks of ``--steps`` steps after a warm-up; median and best block):

* ``one arm, engine``: one 6-joint arm laid out like an ABB IRB 120 on a pedestal, dt 0.001 s
  (1 kHz physics), a new set point every step (each joint on a sine, 0.4 rad, 0.5 Hz) then
  :meth:`MujocoEngine.step`: the engine's step with the servo set; goal >= 10x real time.
* ``one arm, mj_step``: ``mujoco.mj_step`` alone on the same model, built with the engine's
  own builders (the floor under what coopsim adds per step).
* ``one arm, Simulation``: the same arm as a robot of a whole :class:`Simulation` (a robot type
  registered by this script, no modules: set points straight to the engine), each step its
  phases (commands, actuation, physics, sensing, rules, snapshot).
* ``one ground robot, Simulation``: the baseline, the reference robot (``single``, its
  sensors) alone on the mujoco engine at the same dt.
* ``100 arms, engine``: 100 such arms on a 10 x 10 grid of 0.6 m tables (static boxes,
  1.5 m apart), each pedestal on its own table, dt 0.002 s (500 Hz), all 100 set at once every
  step (one batched :meth:`MujocoEngine.set_arm_targets`); goal >= 1x real time.
* ``100 ground robots, engine``: the baseline, 100 reference chassis driven in circles on
  the same floor and dt.
* ``100 arms, Simulation`` and ``100 ground robots, Simulation``: the same counts as robots
  of whole Simulations (arms on the floor, 1.5 m apart, all set every step; the reference
  robots with their sensors, undriven), dt 0.002 s.

Real time is steps/s x dt; each row also by this process's CPU time (what a step costs when
the machine is shared). Usage: python benchmarks/arm_bench.py [--steps 500] [--blocks 5]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import mujoco
import numpy as np

from coopsim.model.arm import MAX_JOINTS, ArmSpec, LinkSpec
from coopsim.model.plugins import ROBOT_TYPES
from coopsim.model.robot_type import Assembly, BodySpec, MemberSpec, RobotType, ShapeSpec
from coopsim.model.specs import (FloorSpec, ObjectSpec, RobotSpec, ScenarioSpec, Settings,
                                 WorldSpec)
from coopsim.physics import mujoco_arms as ma
from coopsim.physics import mujoco_build as mb
from coopsim.physics.mujoco_engine import MujocoEngine
from coopsim.plugins.robots.single import chassis
from coopsim.sim.simulation import Simulation

SIDE, TABLE, SPACING = 20.0, 0.6, 1.5  # m: the floor, a table's height, the grid's pitch


def irb(key: str = "arm") -> ArmSpec:
    """A 6-joint arm laid out like an ABB IRB 120 (0.58 m reach, 3 kg payload)."""
    y, x, z = (0.0, 1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)
    limits = ((-2.87, 2.87), (-1.92, 1.92), (-1.92, 1.22), (-2.79, 2.79), (-2.09, 2.09),
              (-6.98, 6.98))
    rows = (("joint_1", (0, 0, 0.29), z, 4.36, 80.0, 3.0, 0.06),
            ("joint_2", (0, 0, 0), y, 4.36, 80.0, 3.0, 0.05),
            ("joint_3", (0, 0, 0.27), y, 4.36, 40.0, 2.0, 0.045),
            ("joint_4", (0.07, 0, 0.07), x, 5.58, 10.0, 1.0, 0.035),
            ("joint_5", (0.302, 0, 0), y, 5.58, 10.0, 0.5, 0.03),
            ("joint_6", (0.072, 0, 0), x, 7.33, 5.0, 0.2, 0.025))
    links = tuple(LinkSpec(k, o, axis=a, limits=lim, max_speed=s, max_effort=e, mass=m,
                           radius=r) for (k, o, a, s, e, m, r), lim in zip(rows, limits))
    return ArmSpec(key, links, tool=(0.06, 0.0, 0.0), mount=(0.0, 0.0, 0.1),
                   home=(0.0, 0.6, -0.3, 0.0, 0.5, 0.0), payload=3.0, reach=0.58)


def fixed(name: str, x: float, y: float, z: float = 0.0) -> Assembly:
    """One member on a static pedestal body ``base`` at (x, y), its origin ``z`` m up."""
    body = BodySpec("base", "static", 0.0, (ShapeSpec("circle", radius=0.08),), (x, y), 0.0,
                    z=z, height=0.05)
    return Assembly((MemberSpec(name, "base", (), 0.08, refs={"arm": "arm"}),), (body,),
                    arms=(irb(),))


class BenchArm(RobotType):
    """This script's robot type: :func:`fixed` at the section's position."""

    label = "bench_arm"
    description = "an IRB 120-like arm on a pedestal (benchmarks/arm_bench.py)"
    modules = ()

    @classmethod
    def build(cls, spec: RobotSpec) -> Assembly:
        return fixed(spec.name, spec.position[0], spec.position[1])


HOME = np.zeros(MAX_JOINTS)
HOME[:6] = irb().start


def set_points(k: int, dt: float, count: int) -> np.ndarray:
    """(count, MAX_JOINTS) set points at step ``k``: every joint on a sine about home."""
    row = HOME + 0.4 * math.sin(2 * math.pi * 0.5 * k * dt)
    return row[None, :] if count == 1 else np.broadcast_to(row, (count, MAX_JOINTS))


def timed(step, steps: int, blocks: int, warmup: int = 50) -> tuple[float, float, float]:
    """Median and best steps/s by the wall clock, and the median by this process's CPU time,
    over ``blocks`` blocks of ``steps`` calls of ``step(k)`` (on a machine shared with other
    jobs the CPU figure is what the step costs, the wall figure what it got)."""
    k = 0
    for _ in range(warmup):
        step(k)
        k += 1
    rates, cpu = [], []
    for _ in range(blocks):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            step(k)
            k += 1
        rates.append(steps / (time.perf_counter() - t0))
        cpu.append(steps / max(time.process_time() - c0, 1e-9))
    return statistics.median(rates), max(rates), statistics.median(cpu)


def one_arm_engine(dt: float):
    engine = MujocoEngine(FloorSpec(SIDE, SIDE))
    handles = engine.add_assembly(fixed("a", 0.0, 0.0), 1)
    engine.set_robots([handles.robots["a"]], [""])
    arm, zero = handles.arms["arm"], np.zeros((1, MAX_JOINTS))

    def step(k: int) -> None:
        engine.set_arm_targets([arm], set_points(k, dt, 1), zero)
        engine.step(dt)
    return engine, step


def one_arm_mj_step(dt: float):
    """``mj_step`` alone on the model the engine builds for :func:`one_arm_engine` (made here
    with the engine's own builders, its integrator and substep), the arm held at home."""
    spec = mb.new_spec(FloorSpec(SIDE, SIDE))
    assembly = fixed("a", 0.0, 0.0)
    base = mb.assembly_body(spec, "1:base", "robot a", assembly.bodies[0],
                            assembly.members[0], 1)
    arm = ma.build(spec, assembly.arms[0], base, "2:arm", "robot a's arm arm")
    spec.option.integrator = int(mujoco.mjtIntegrator.mjINT_IMPLICITFAST)
    spec.option.timestep = dt
    model = spec.compile()
    data = mujoco.MjData(model)
    arm.bind(model)
    arm.restore(data)
    return lambda k: mujoco.mj_step(model, data)


def simulation(type_label: str, dt: float, n: int = 1):
    """A whole Simulation of ``n`` robots of ``type_label`` on a square grid on the mujoco
    engine; its step (every arm set at once, as a batch driver would)."""
    side = int(np.ceil(np.sqrt(n)))
    robots = tuple(RobotSpec(type_label, f"r{i}", ((i % side - (side - 1) / 2) * SPACING,
                                                   (i // side - (side - 1) / 2) * SPACING,
                                                   0.0), 0.0) for i in range(n))
    scenario = ScenarioSpec(WorldSpec(FloorSpec(SIDE, SIDE)), robots=robots,
                            settings=Settings(dt=dt, mode="lockstep", seed=0), name="bench")
    sim = Simulation(scenario, engine="mujoco")
    engine = sim.world.engine
    arms = [s.handles.arms["arm"] for s in sim.world.sections.values() if s.handles.arms]
    zero = np.zeros((len(arms), MAX_JOINTS))

    def step(k: int) -> None:
        if arms:
            engine.set_arm_targets(arms, set_points(k, dt, len(arms)), zero)
        sim.command({})
        sim.actuate()
        sim.physics()
        sim.sense()
        sim.apply_rules()
    return step


def hundred_arms(dt: float, n: int = 100):
    """``n`` arms, each on its own table of a square grid, all set every step."""
    engine = MujocoEngine(FloorSpec(SIDE, SIDE))
    side = int(np.ceil(np.sqrt(n)))
    robots, arms = [], []
    for i in range(n):
        x, y = (i % side - (side - 1) / 2) * SPACING, (i // side - (side - 1) / 2) * SPACING
        engine.add_object(ObjectSpec(f"table{i}", "box", (0.5, 0.5, TABLE), (x, y, TABLE / 2),
                                     0.0, 0.0))
        handles = engine.add_assembly(fixed(f"a{i}", x, y, TABLE), i + 1)
        robots.append(handles.robots[f"a{i}"])
        arms.append(handles.arms["arm"])
    engine.set_robots(robots, [""] * n)
    zero = np.zeros((n, MAX_JOINTS))

    def step(k: int) -> None:
        engine.set_arm_targets(arms, set_points(k, dt, n), zero)
        engine.step(dt)
    return step


def hundred_ground(dt: float, n: int = 100):
    """The baseline: ``n`` reference chassis on the same grid, driven in circles."""
    engine = MujocoEngine(FloorSpec(SIDE, SIDE))
    side = int(np.ceil(np.sqrt(n)))
    robots = []
    for i in range(n):
        x, y = (i % side - (side - 1) / 2) * SPACING, (i // side - (side - 1) / 2) * SPACING
        body, member = chassis(f"g{i}", "chassis", x, y, 0.0)
        robots.append(engine.add_assembly(Assembly((member,), (body,)), i + 1).robots[f"g{i}"])
    engine.set_robots(robots, ["differential"] * n)
    rows, forward, turn = np.arange(n), np.full(n, 0.3), np.full(n, 0.5)

    def step(k: int) -> None:
        engine.drive(rows, forward, turn)
        engine.step(dt)
    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--blocks", type=int, default=5)
    args = parser.parse_args()
    if BenchArm.label not in ROBOT_TYPES:
        ROBOT_TYPES.register(BenchArm.label)(BenchArm)
    print(f"mujoco {mujoco.__version__}; load average {os.getloadavg()[0]:.1f}")
    print("\n| row | dt s | steps/s (median) | best | real time | vs baseline | "
          "steps/s by CPU time | real time by CPU | vs baseline by CPU |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    s, b = args.steps, args.blocks
    one = timed(one_arm_engine(0.001)[1], s, b)
    raw = timed(one_arm_mj_step(0.001), s, b)
    whole = timed(simulation(BenchArm.label, 0.001), s, b)
    ground = timed(simulation("single", 0.001), s, b)
    arms = timed(hundred_arms(0.002), max(1, s // 5), b)
    cars = timed(hundred_ground(0.002), max(1, s // 5), b)
    sim_arms = timed(simulation(BenchArm.label, 0.002, 100), max(1, s // 10), b, warmup=10)
    sim_cars = timed(simulation("single", 0.002, 100), max(1, s // 10), b, warmup=10)
    for label, dt, (median, best, cpu), base in (
            ("one arm, engine", 0.001, one, raw), ("one arm, mj_step", 0.001, raw, raw),
            ("one arm, Simulation", 0.001, whole, ground),
            ("one ground robot, Simulation", 0.001, ground, ground),
            ("100 arms, engine", 0.002, arms, cars),
            ("100 ground robots, engine", 0.002, cars, cars),
            ("100 arms, Simulation", 0.002, sim_arms, sim_cars),
            ("100 ground robots, Simulation", 0.002, sim_cars, sim_cars)):
        print(f"| {label} | {dt} | {median:,.0f} | {best:,.0f} | {median * dt:.1f}x | "
              f"{median / base[0]:.2f} | {cpu:,.0f} | {cpu * dt:.1f}x | {cpu / base[2]:.2f} |")


if __name__ == "__main__":
    main()
