"""Benchmark: coopsim side by side with IR-SIM and VMAS on one task (docs/performance.md,
"Side by side with IR-SIM and VMAS"), every simulator in the same run.

The task: N differential-drive robots (disc radius 0.2 m) start on a grid 1.5 m apart with
seeded random headings, each driving to a goal 1.5 m up and 1.5 m right of its start (the
next diagonal grid point, so the robots move as one without crossing); each carries an 11-beam
range sensor over -90 .. +90 degrees of its heading, 2 m long, read every step; dt = 0.1 s.
Every step each simulator's poses are read, one go-to-goal law computes (forward speed, yaw
rate) for every robot with array operations (forward 0.5 x distance capped at 0.5 m/s, only
when facing within 90 degrees; yaw rate 2 x heading error capped at 1.5 rad/s), and the
simulator steps. What is timed is that loop: read poses, control, step (with its collisions
and the scan of every robot).

- coopsim: one ``Simulation`` on the ``kinematic`` engine (and ``pymunk`` at N <= 100), robots
  of the ``single`` type made lean (``coopsim.env.lean``: only motors and sonar carried);
  speeds to wheel speeds with the robot's axle; stepped by ``Stepper.tick``.
- IR-SIM (``pip install -e '.[bench]'``: the ``bench`` extra, benchmark only): a world written
  as its YAML, robots of ``kinematics: diff`` with a ``lidar2d`` sensor (number 11,
  angle_range pi, range_max 2), ``headless=True`` (no figure: matplotlib is never drawn);
  actions ``[v, w]`` per robot to ``env.step(actions, action_id=...)``.
- VMAS (``pip install torch==2.13.0 vmas``, then ``pip install 'pyglet>=2,<3'`` again: vmas
  pins pyglet<=1.5.27, which coopsim's viewer cannot use; VMAS steps without rendering, so it
  runs beside pyglet 2), CPU: one environment (``num_envs=1``) of N agents
  with ``DiffDrive`` dynamics (Euler) and an 11-ray ``Lidar`` of agents, one substep,
  collisions on; ``env.step`` with one (1, 2) tensor per agent (it computes every agent's
  observation, that is its lidar scan, each step). Skipped when not installed.

A block is ``--steps`` steps, fewer for a simulator whose first step shows that they would
take longer than ``--budget`` seconds (at least one). Results: steps/s and robot-steps/s
(N x steps/s), the median of ``--blocks`` blocks; a simulator not installed is left out.

A second table: K copies of the 4-robot task batched (``--batched K``, default 256): coopsim's
``BatchWorld`` (the ``make_vec`` engine) against VMAS with ``num_envs=K``, VMAS's own way to
scale (its tensors run over the environments).

Usage: COOPSIM_JIT=wait python benchmarks/compare_sims_bench.py [--n 1 10 100 1000]
       [--blocks 3] [--steps 50] [--budget 20] [--only coopsim irsim vmas] [--batched 256]
"""

from __future__ import annotations

import argparse
import importlib.metadata as meta
import math
import os
import statistics
import tempfile
import time

import numpy as np

os.environ.setdefault("MPLBACKEND", "Agg")  # IR-SIM imports matplotlib: never a display

SPACING, RADIUS, RANGE, BEAMS, DT = 1.5, 0.2, 2.0, 11, 0.1
V_MAX, W_MAX = 0.5, 1.5


def layout(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, float]:
    """(starts (N, 3) x, y, yaw; goals (N, 2); arena side, m), centred on the origin."""
    rng = np.random.default_rng(seed)
    side = math.ceil(math.sqrt(n))
    size = (side + 1) * SPACING + 2.0
    i = np.arange(n)
    xy = np.stack([i % side, i // side], axis=1) * SPACING - (side - 1) * SPACING / 2 - 0.75
    starts = np.column_stack([xy, rng.uniform(-math.pi, math.pi, n)])
    return starts, xy + SPACING, size


def control(poses: np.ndarray, goals: np.ndarray) -> np.ndarray:
    """(N, 2) forward speed m/s, yaw rate rad/s toward ``goals`` from ``poses`` (N, 3)."""
    d = goals - poses[:, :2]
    dist = np.hypot(d[:, 0], d[:, 1])
    err = np.arctan2(d[:, 1], d[:, 0]) - poses[:, 2]
    err = (err + np.pi) % (2 * np.pi) - np.pi
    v = np.where(np.abs(err) < np.pi / 2, np.minimum(0.5 * dist, V_MAX), 0.0)
    return np.column_stack([v, np.clip(2.0 * err, -W_MAX, W_MAX)])


# -- coopsim ----------------------------------------------------------------------------------

def _coopsim_spec(n: int, engine: str):
    """The task as a coopsim scenario (``single`` robots; no walls: the floor is open)."""
    from coopsim.model.specs import FloorSpec, RobotSpec, ScenarioSpec, Settings, WorldSpec

    starts, _, size = layout(n)
    robots = tuple(RobotSpec("single", f"r{i}", (x, y, 0.0), yaw)
                   for i, (x, y, yaw) in enumerate(starts))
    return ScenarioSpec(WorldSpec(FloorSpec(size, size), ()), robots=robots,
                        settings=Settings(dt=DT, mode="lockstep", engine=engine),
                        name=f"compare{n}")


def coopsim_runner(n: int, engine: str):
    """A step function of coopsim on the task, and its check (the scans' shape)."""
    from coopsim.env.lean import lean
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    _, goals, _ = layout(n)
    sim = Simulation(lean(_coopsim_spec(n, engine), ["sonar"]), engine=engine)
    stepper = Stepper(sim, mode="lockstep", speed=0)
    half = sim.robots.axle / 2
    commands = sim.commands["motors"]
    snap = stepper.tick()

    def step():
        nonlocal snap
        vw = control(snap.poses, goals)
        commands[:, 0] = vw[:, 0] - vw[:, 1] * half
        commands[:, 1] = vw[:, 0] + vw[:, 1] * half
        snap = stepper.tick()

    def check():
        scan = snap.readings["sonar"]
        return scan.shape == (n, BEAMS) and np.isfinite(scan).all()
    return step, check, lambda: np.hypot(*(snap.poses[:, :2] - goals).T).mean()


# -- IR-SIM -----------------------------------------------------------------------------------

def irsim_world(n: int, path: str) -> None:
    """IR-SIM's YAML for the task."""
    starts, goals, size = layout(n)
    lines = ["world:", f"  height: {size}", f"  width: {size}", f"  step_time: {DT}",
             f"  offset: [{-size / 2}, {-size / 2}]", "  collision_mode: 'stop'", "robot:"]
    for (x, y, yaw), (gx, gy) in zip(starts, goals):
        lines += ["  - kinematics: {name: 'diff'}",
                  f"    shape: {{name: 'circle', radius: {RADIUS}}}",
                  f"    state: [{x}, {y}, {yaw}]", f"    goal: [{gx}, {gy}, 0]",
                  f"    vel_max: [{V_MAX}, {W_MAX}]", f"    vel_min: [{-V_MAX}, {-W_MAX}]",
                  "    sensors:",
                  f"      - {{name: 'lidar2d', range_min: 0, range_max: {RANGE}, "
                  f"angle_range: {math.pi}, number: {BEAMS}}}"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def irsim_runner(n: int):
    import irsim

    starts, goals, _ = layout(n)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"compare{n}.yaml")
        irsim_world(n, path)
        env = irsim.make(path, headless=True, log_level="WARNING", seed=0)
    robots = env.robot_list
    ids = list(range(n))

    def poses():
        return np.array([r.state[:3, 0] for r in robots])

    def step():
        vw = control(poses(), goals)
        env.step([row.reshape(2, 1) for row in vw], action_id=ids)

    def check():
        scans = [r.sensors[0].get_scan()["ranges"] for r in robots]
        return all(len(s) == BEAMS for s in scans) and len(robots) == n
    return step, check, lambda: np.hypot(*(poses()[:, :2] - goals).T).mean()


# -- VMAS -------------------------------------------------------------------------------------

def vmas_runner(n: int, envs: int = 1):
    import torch
    from vmas import make_env
    from vmas.simulator.core import Agent, Landmark, Sphere, World
    from vmas.simulator.dynamics.diff_drive import DiffDrive
    from vmas.simulator.scenario import BaseScenario
    from vmas.simulator.sensors import Lidar

    starts, goals, _ = layout(n)

    class Task(BaseScenario):
        def make_world(self, batch_dim, device, **kwargs):
            world = World(batch_dim, device, dt=DT, substeps=1)
            for i in range(n):
                agent = Agent(name=f"r{i}", collide=True, shape=Sphere(RADIUS),
                              u_range=[V_MAX, W_MAX], dynamics=DiffDrive(world, "euler"),
                              sensors=[Lidar(world, angle_start=-math.pi / 2,
                                             angle_end=math.pi / 2, n_rays=BEAMS,
                                             max_range=RANGE,
                                             entity_filter=lambda e: isinstance(e, Agent))])
                world.add_agent(agent)
                world.add_landmark(Landmark(name=f"goal{i}", collide=False))
            return world

        def reset_world_at(self, env_index=None):
            rows = 1 if env_index is not None else envs
            for i, agent in enumerate(self.world.agents):
                pose = torch.tensor(np.repeat(starts[i:i + 1], rows, axis=0),
                                    dtype=torch.float32)
                if env_index is not None:
                    pose = pose[0]
                agent.set_pos(pose[..., :2], batch_index=env_index)
                agent.set_rot(pose[..., 2:3], batch_index=env_index)

        def observation(self, agent):
            return agent.sensors[0].measure()

        def reward(self, agent):
            return torch.zeros(self.world.batch_dim)

    torch.set_num_threads(2)
    env = make_env(Task(), num_envs=envs, device="cpu", continuous_actions=True, seed=0)
    env.reset()
    agents = env.agents
    last = {}
    goal = np.tile(goals, (envs, 1))  # env-major rows: (envs x n, 2)

    def poses():  # (envs x n, 3)
        pos = torch.stack([a.state.pos for a in agents], dim=1)
        rot = torch.stack([a.state.rot for a in agents], dim=1)
        return torch.cat((pos, rot), dim=2).reshape(-1, 3).double().numpy()

    def step():
        vw = torch.tensor(control(poses(), goal), dtype=torch.float32).reshape(envs, n, 2)
        last["obs"] = env.step([vw[:, i] for i in range(n)])[0]

    def check():
        return len(last["obs"]) == n and tuple(last["obs"][0].shape) == (envs, BEAMS)
    return step, check, lambda: np.hypot(*(poses()[:, :2] - goal).T).mean()


def coopsim_batch_runner(n: int, copies: int):
    """``copies`` copies of the n-robot task in one coopsim batch (``BatchWorld``, lean)."""
    from coopsim.env.batch import BatchWorld

    starts, goals, _ = layout(n)
    batch = BatchWorld(_coopsim_spec(n, "kinematic"), copies, observe=["sonar"], lean=True,
                       task=lambda snap, rows: (np.zeros(rows.shape), np.zeros(len(rows), bool)))
    goal = (goals[None] + batch.offsets[:, None]).reshape(-1, 2)
    half = batch.sim.robots.axle[batch.rows].reshape(-1) / 2
    snap = batch.tick()

    def step():
        nonlocal snap
        vw = control(snap.poses[batch.rows].reshape(-1, 3), goal)
        wheels = np.column_stack([vw[:, 0] - vw[:, 1] * half, vw[:, 0] + vw[:, 1] * half])
        batch.act(np.clip(wheels, -0.6, 0.6).reshape(copies, n, 2))
        snap = batch.tick()
        batch.observation(snap)

    def check():
        return batch.observation(snap)["sonar"].shape == (copies, n, BEAMS)
    return step, check, lambda: np.hypot(*(snap.poses[batch.rows].reshape(-1, 3)[:, :2]
                                            - goal).T).mean()


# -- measuring --------------------------------------------------------------------------------

def measure(make, blocks: int, steps: int, budget: float) -> dict:
    """Steps/s (median of ``blocks``) of the step function ``make()`` builds."""
    t0 = time.perf_counter()
    step, check, gap = make()
    build = time.perf_counter() - t0
    before = gap()
    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    per = max(1, min(steps, int(budget / max(first, 1e-6))))
    if first < 1.0:  # a cheap step: a few more untimed, past lazy compilation and caches
        for _ in range(3):
            step()
    rates = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(per):
            step()
        rates.append(per / (time.perf_counter() - t0))
    assert check(), "the scans are not what the task asks"
    return {"rate": statistics.median(rates), "steps": per, "build": build,
            "closer": before - gap()}


def version(dist: str) -> str:
    try:
        return meta.version(dist)
    except meta.PackageNotFoundError:
        return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1, 10, 100, 1000])
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--steps", type=int, default=50, help="steps per block (at most)")
    parser.add_argument("--budget", type=float, default=20.0, help="s a block may take")
    parser.add_argument("--only", nargs="+", default=["coopsim", "irsim", "vmas"])
    parser.add_argument("--batched", type=int, default=256, metavar="K",
                        help="copies of the 4-robot task batched (0: skip)")
    args = parser.parse_args()
    if "coopsim" in args.only:
        from coopsim.raycast import auto
        if not auto.wait_ready(600):
            raise SystemExit("the compiled caster did not load (numba missing?)")
    sims = []
    if "coopsim" in args.only:
        sims += [("coopsim kinematic", lambda n: coopsim_runner(n, "kinematic")),
                 ("coopsim pymunk", lambda n: coopsim_runner(n, "pymunk"))]
    if "irsim" in args.only and version("ir-sim"):
        sims.append((f"IR-SIM {version('ir-sim')}", irsim_runner))
    if "vmas" in args.only and version("vmas"):
        sims.append((f"VMAS {version('vmas')} (torch {version('torch')}, CPU)", vmas_runner))
    print(f"coopsim {version('coopsim')}, numpy {version('numpy')}, numba {version('numba')}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| simulator | N | steps/s | robot-steps/s | steps per block | build, s | "
          "closer to goals, m |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for n in args.n:
        for name, make in sims:
            r = measure(lambda: make(n), args.blocks, args.steps, args.budget)
            print(f"| {name} | {n:,} | {r['rate']:,.1f} | {r['rate'] * n:,.0f} | "
                  f"{r['steps']} | {r['build']:.2f} | {r['closer']:.2f} |", flush=True)
    if args.batched:
        batched_table(args)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def batched_table(args) -> None:
    """K copies of the 4-robot task: coopsim's batch against VMAS's ``num_envs`` (VMAS's own
    way to scale: its tensors run over environments)."""
    k, n = args.batched, 4
    print(f"\n{k} copies x {n} robots of the task, batched")
    print("| simulator | copies x robots | batch steps/s | robot-steps/s | steps per block |")
    print("|---|---:|---:|---:|---:|")
    sims = [("coopsim kinematic, BatchWorld (lean)", lambda: coopsim_batch_runner(n, k))]
    if "vmas" in args.only and version("vmas"):
        sims.append((f"VMAS {version('vmas')}, num_envs={k}", lambda: vmas_runner(n, k)))
    for name, make in sims:
        r = measure(make, args.blocks, args.steps, args.budget)
        print(f"| {name} | {k} x {n} | {r['rate']:,.1f} | {r['rate'] * k * n:,.0f} | "
              f"{r['steps']} |", flush=True)


if __name__ == "__main__":
    main()
