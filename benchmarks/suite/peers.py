"""Peers side by side: the same closed loop (read the state, control, step) on coopsim and on
the simulator a user would pick instead, alternating in one run; the headline figure is the
ratio coopsim / peer of robot-steps per CPU second (above 1: coopsim is ahead).

- ``Crazyflies``: N Crazyflies at 500 Hz hovering 1 m above their start (N = 1, 10, 100,
  1,000). coopsim: the whole ``Simulation`` on the ``aerial`` engine, the ``flight`` driver
  every step (its whole cascade at 500 Hz, as every shipped scenario flies it:
  :func:`.common.flyers`), imu, mocap and altimeter.
  crazyflow 0.4 (JAX + MuJoCo on the CPU): ``Sim(n_worlds=1, n_drones=N, control=state,
  freq=500, state_freq=100)``, each call ``state_control`` then ``step(5)`` as its README flies
  it. RotorPy 3: its batched torch vehicle (``BatchedMultirotor``, Crazyflie parameters, the
  ``rk4`` integrator it calls the faster) and ``BatchedSE3Control``, one control update then 5
  vehicle steps of 2 ms.
- ``Mujoco``: the same Crazyflies on coopsim's ``mujoco`` engine against raw MuJoCo stepping
  as many free boxes of a Crazyflie's mass with a height law on arrays (N = 1, 10, 100).
- ``Batched``: K copies (256 .. 32,768) of a 4-robot task: coopsim's batched worlds (the
  ``copies`` backend, lean, what ``make_vec`` steps) against VMAS with ``num_envs=K`` (torch
  on the CPU).
- ``Ground``: N differential-drive discs (1 .. 1,000) driving to goals with an 11-beam range
  sensor read every step, dt 0.1 s: coopsim's ``kinematic`` engine against IR-SIM.

The ground task (both ``Batched`` and ``Ground``): discs of radius 0.2 m on a grid 1.5 m
apart with seeded random headings, each to the next diagonal grid point; a go-to-goal law on
arrays (forward 0.5 x distance capped at 0.5 m/s when facing within 90 degrees, yaw rate 2 x
heading error capped at 1.5 rad/s); the sensor 11 beams over -90 .. +90 degrees, 2 m.

How it runs: every side is a worker process (coopsim's in this interpreter, one thread,
``COOPSIM_JIT=wait`` for an older tree; a peer's in the interpreter of
``COOPSIM_PEERS_PYTHON``, default ``/tmp/peers/bin/python``: torch and JAX stay out of
coopsim's environment; torch on one thread, JAX's XLA too: every side on one thread, its process
pinned to one core, :func:`_one_core`). Each builds its
world, warms up, then answers blocks (about ``BUDGET`` s of steps, timed by the process's CPU
time, all its threads, and by the wall) in turn, the order swapped from one round to
the next; the ratio is the median of the rounds' ratios. A peer that is missing skips its
cases with the reason.
``python -m suite.peers`` (from benchmarks/) prints the table without asv.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from .common import SMOKE, Case, build, flyers, grid, sizes, unit

HERE = Path(__file__).resolve().parent
TAG = "@@"  # a worker's reply lines start with this (the code under test may print)
BUDGET = 0.05 if SMOKE else 1.0  # s of steps a block
ROUNDS = 1 if SMOKE else 3
WARM = 0.02 if SMOKE else 0.5  # s of untimed steps after the build (JAX, numba, caches)
SPACING, RADIUS, RANGE, BEAMS, DT, V_MAX, W_MAX = 1.5, 0.2, 2.0, 11, 0.1, 0.5, 1.5


def peer_python() -> str:
    """The peers' interpreter: ``COOPSIM_PEERS_PYTHON``, else /tmp/peers/bin/python (none
    under :data:`SMOKE`: CI proves coopsim's side alone, a peer's build takes a minute)."""
    return os.environ.get("COOPSIM_PEERS_PYTHON", "" if SMOKE else "/tmp/peers/bin/python")


@lru_cache(maxsize=None)
def missing(peer: str) -> str:
    """Why ``peer`` cannot run ('' when it can): the interpreter or the package is missing."""
    python = peer_python()
    if not python or not Path(python).exists():
        return f"{peer}: no interpreter {python!r} (COOPSIM_PEERS_PYTHON; benchmarks/README.md)"
    done = subprocess.run([python, "-c", f"import {peer}"], capture_output=True)
    return f"{peer}: not importable by {python}" if done.returncode else ""


# ---------------------------------------------------------------------- the ground task


def layout(n: int, seed: int = 0):
    """(starts (n, 3) x, y, yaw; goals (n, 2); arena side, m), centred on the origin."""
    rng = np.random.default_rng(seed)
    side = math.ceil(math.sqrt(n))
    i = np.arange(n)
    xy = np.stack([i % side, i // side], axis=1) * SPACING - (side - 1) * SPACING / 2 - 0.75
    starts = np.column_stack([xy, rng.uniform(-math.pi, math.pi, n)])
    return starts, xy + SPACING, (side + 1) * SPACING + 2.0


def control(poses, goals):
    """(n, 2) forward speed m/s, yaw rate rad/s toward ``goals`` (n, 2) from ``poses`` (n, 3)."""
    d = goals - poses[:, :2]
    err = (np.arctan2(d[:, 1], d[:, 0]) - poses[:, 2] + np.pi) % (2 * np.pi) - np.pi
    v = np.where(np.abs(err) < np.pi / 2, np.minimum(0.5 * np.hypot(d[:, 0], d[:, 1]), V_MAX), 0)
    return np.column_stack([v, np.clip(2.0 * err, -W_MAX, W_MAX)])


def ground_spec(n: int):
    """The ground task as a coopsim scenario (``single`` robots, an open floor)."""
    from coopsim.model.specs import FloorSpec, RobotSpec, ScenarioSpec, Settings, WorldSpec

    starts, _, size = layout(n)
    robots = tuple(RobotSpec("single", f"r{i}", (x, y, 0.0), yaw)
                   for i, (x, y, yaw) in enumerate(starts))
    return ScenarioSpec(WorldSpec(FloorSpec(size, size), ()), robots=robots,
                        settings=Settings(dt=DT, mode="lockstep", engine="kinematic"))


# ---------------------------------------------------------------------- the sides
# Each returns (step, physics steps a call, robots, sync): ``sync`` waits for asynchronous
# work (JAX) before a clock is read.


def coopsim_crazyflies(n: int):
    return build(flyers(n)).tick, 1, n, None


def crazyflow_crazyflies(n: int):
    import jax.numpy as jnp
    from crazyflow.control import Control
    from crazyflow.dynamics import Dynamics
    from crazyflow.sim import Sim

    sim = Sim(n_worlds=1, n_drones=n, drone="cf2x_L250", dynamics=Dynamics.first_principles,
              control=Control.state, freq=500, state_freq=100, device="cpu")
    sim.reset()
    cmd = np.zeros((1, n, 16))  # x y z, v, a, quaternion x y z w, body rates
    cmd[..., :3] = np.asarray(sim.data.states.pos) + np.array([0.0, 0.0, 1.0])
    cmd[..., 12] = 1.0
    cmd, per = jnp.asarray(cmd), sim.freq // sim.control_freq

    def step():
        sim.state_control(cmd)
        sim.step(per)
    return step, per, n, lambda: sim.data.states.pos.block_until_ready()


def rotorpy_crazyflies(n: int):
    import torch
    from rotorpy.controllers.quadrotor_control import BatchedSE3Control
    from rotorpy.vehicles.crazyflie_params import quad_params
    from rotorpy.vehicles.multirotor import BatchedMultirotor, BatchedMultirotorParams

    torch.set_num_threads(1)  # one thread, as coopsim's side
    cpu = torch.device("cpu")
    params = BatchedMultirotorParams([quad_params] * n, n, cpu)
    x = torch.nn.functional.pad(torch.tensor(grid(n, 0.5), dtype=torch.double), (0, 1))
    zero = torch.zeros(n, 3, dtype=torch.double)
    hover = math.sqrt(quad_params["mass"] * 9.81 / 4 / quad_params["k_eta"])
    state = {"x": x, "v": zero.clone(), "q": torch.tensor([[0.0, 0, 0, 1]] * n).double(),
             "w": zero.clone(), "wind": zero.clone(),
             "rotor_speeds": torch.full((n, 4), hover, dtype=torch.double)}
    vehicle = BatchedMultirotor(params, n, state, cpu, integrator="rk4")
    controller = BatchedSE3Control(params, n, cpu)
    flat = {"x": x + torch.tensor([0.0, 0, 1]), "x_dot": zero, "x_ddot": zero, "x_dddot": zero,
            "x_ddddot": zero, "yaw": torch.zeros(n).double(), "yaw_dot": torch.zeros(n).double(),
            "yaw_ddot": torch.zeros(n).double()}

    def step():
        nonlocal state
        u = controller.update(0.0, state, flat)
        for _ in range(5):
            state = vehicle.step(state, u, 0.002)
    return step, 5, n, None


def coopsim_ground(n: int):
    from coopsim.env.lean import lean
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    goals = layout(n)[1]
    sim = Simulation(lean(ground_spec(n), ["sonar"]), engine="kinematic")
    stepper, half, wheels = Stepper(sim, mode="lockstep"), sim.robots.axle / 2, \
        sim.commands["motors"]
    snap = stepper.tick()

    def step():
        nonlocal snap
        vw = control(snap.poses, goals)
        wheels[:, 0] = vw[:, 0] - vw[:, 1] * half
        wheels[:, 1] = vw[:, 0] + vw[:, 1] * half
        snap = stepper.tick()
        assert snap.readings["sonar"].shape == (n, BEAMS)
        return snap
    return step, 1, n, None


def irsim_ground(n: int):
    import tempfile

    import irsim
    starts, goals, size = layout(n)
    lines = ["world:", f"  height: {size}", f"  width: {size}", f"  step_time: {DT}",
             f"  offset: [{-size / 2}, {-size / 2}]", "  collision_mode: 'stop'", "robot:"]
    for (x, y, yaw), (gx, gy) in zip(starts, goals):
        lines += ["  - kinematics: {name: 'diff'}",
                  f"    shape: {{name: 'circle', radius: {RADIUS}}}",
                  f"    state: [{x}, {y}, {yaw}]", f"    goal: [{gx}, {gy}, 0]",
                  f"    vel_max: [{V_MAX}, {W_MAX}]", f"    vel_min: [{-V_MAX}, {-W_MAX}]",
                  "    sensors:", f"      - {{name: 'lidar2d', range_min: 0, range_max: "
                  f"{RANGE}, angle_range: {math.pi}, number: {BEAMS}}}"]
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "ground.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        env = irsim.make(str(Path(tmp, "ground.yaml")), headless=True, log_level="WARNING",
                         seed=0)
    robots, ids = env.robot_list, list(range(n))

    def step():
        vw = control(np.array([r.state[:3, 0] for r in robots]), goals)
        env.step([row.reshape(2, 1) for row in vw], action_id=ids)
    return step, 1, n, None


def coopsim_batched(copies: int, n: int = 4):
    """The ``copies`` backend (what ``make_vec`` picks for this task): each copy in its own
    frame, stepped by one compiled call."""
    from coopsim.env.copies import batch_world

    goal = np.tile(layout(n)[1], (copies, 1))
    batch = batch_world(ground_spec(n), copies, observe=["sonar"], lean=True, backend="copies")
    half = batch._shared["axle"] / 2  # noqa: SLF001 -- the axles the kernel steps with

    def step():
        vw = control(np.column_stack([batch.pos, batch.yaw]), goal)
        wheels = np.column_stack([vw[:, 0] - vw[:, 1] * half, vw[:, 0] + vw[:, 1] * half])
        batch.act(np.clip(wheels, -0.6, 0.6).reshape(copies, n, 2))
        assert batch.tick().observation()["sonar"].shape == (copies, n, BEAMS)
    return step, 1, copies * n, None


def vmas_batched(copies: int, n: int = 4):
    import torch
    from vmas import make_env
    from vmas.simulator.core import Agent, Sphere, World
    from vmas.simulator.dynamics.diff_drive import DiffDrive
    from vmas.simulator.scenario import BaseScenario
    from vmas.simulator.sensors import Lidar

    torch.set_num_threads(1)  # one thread, as coopsim's (two: 4x slower on a busy machine)
    starts, goals, _ = layout(n)

    class Task(BaseScenario):
        def make_world(self, batch_dim, device, **kwargs):
            world = World(batch_dim, device, dt=DT, substeps=1)
            for i in range(n):
                world.add_agent(Agent(
                    name=f"r{i}", collide=True, shape=Sphere(RADIUS), u_range=[V_MAX, W_MAX],
                    dynamics=DiffDrive(world, "euler"),
                    sensors=[Lidar(world, angle_start=-math.pi / 2, angle_end=math.pi / 2,
                                   n_rays=BEAMS, max_range=RANGE,
                                   entity_filter=lambda e: isinstance(e, Agent))]))
            return world

        def reset_world_at(self, env_index=None):
            for i, agent in enumerate(self.world.agents):
                pose = torch.tensor(starts[i], dtype=torch.float32)
                pose = pose if env_index is not None else pose.repeat(copies, 1)
                agent.set_pos(pose[..., :2], batch_index=env_index)
                agent.set_rot(pose[..., 2:3], batch_index=env_index)

        def observation(self, agent):
            return agent.sensors[0].measure()

        def reward(self, agent):
            return torch.zeros(self.world.batch_dim)

    env = make_env(Task(), num_envs=copies, device="cpu", continuous_actions=True, seed=0)
    env.reset()
    agents, goal = env.agents, np.tile(goals, (copies, 1))  # env-major rows

    def step():
        pose = torch.cat([torch.stack([a.state.pos for a in agents], dim=1),
                          torch.stack([a.state.rot for a in agents], dim=1)], dim=2)
        vw = torch.tensor(control(pose.reshape(-1, 3).double().numpy(), goal),
                          dtype=torch.float32).reshape(copies, n, 2)
        obs = env.step([vw[:, i] for i in range(n)])[0]
        assert tuple(obs[0].shape) == (copies, BEAMS)
    return step, 1, copies * n, None


def coopsim_mujoco(n: int):
    return build(flyers(n, engine="mujoco")).tick, 1, n, None


def mujoco_flyers(n: int):
    """Raw MuJoCo: ``n`` Crazyflie-sized free boxes (27 g) over a floor at 500 Hz, a height
    law at 100 Hz on arrays (thrust along the world z through ``xfrc_applied``), 5 ``mj_step``
    a call: the 3D engine's floor without coopsim around it."""
    import mujoco

    bodies = "".join(
        f'<body pos="{x} {y} 0.02"><freejoint/><geom type="box" size="0.046 0.046 0.015" '
        f'mass="0.027"/></body>' for x, y in grid(n, 0.5))
    model = mujoco.MjModel.from_xml_string(
        f'<mujoco><option timestep="0.002"/><worldbody><geom type="plane" size="0 0 1"/>'
        f'{bodies}</worldbody></mujoco>')
    data = mujoco.MjData(model)
    z, vz = 7 * np.arange(n) + 2, 6 * np.arange(n) + 2  # qpos / qvel addresses of each z

    def step():
        up = 0.027 * (9.81 + 4.0 * (1.0 - data.qpos[z]) - 2.0 * data.qvel[vz])
        data.xfrc_applied[1:, 2] = np.clip(up, 0.0, 0.6)
        for _ in range(5):
            mujoco.mj_step(model, data)
    return step, 5, n, None


SIDES = {("crazyflies", "coopsim"): coopsim_crazyflies,
         ("mujoco", "coopsim"): coopsim_mujoco, ("mujoco", "mujoco"): mujoco_flyers,
         ("crazyflies", "crazyflow"): crazyflow_crazyflies,
         ("crazyflies", "rotorpy"): rotorpy_crazyflies,
         ("ground", "coopsim"): coopsim_ground, ("ground", "irsim"): irsim_ground,
         ("batched", "coopsim"): coopsim_batched, ("batched", "vmas"): vmas_batched}


# ---------------------------------------------------------------------- worker and duel


def serve(case: str, side: str, size: int) -> None:
    """A worker: build the side's world, warm it up, then one block per line of stdin."""
    step, per, robots, sync = SIDES[case, side](size)
    n = 0
    for seconds in (WARM, BUDGET / 4):  # warm up (the first calls compile), then calibrate
        calls, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds or calls < 2:
            step()
            calls += 1
        (sync or int)()
        n = max(1, int(BUDGET * calls / (time.perf_counter() - t0)))
    print(TAG + json.dumps({"calls": n}), flush=True)
    for _ in sys.stdin:
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(n):
            step()
        (sync or int)()
        steps = n * per * robots
        print(TAG + json.dumps({"cpu": steps / (time.process_time() - c0),
                                "wall": steps / (time.perf_counter() - w0)}), flush=True)


def _one_core() -> None:
    """Pin the worker about to start, and every thread it will make, to one core (the
    highest this process may use; Linux): JAX's XLA keeps a second thread busy whatever its
    flags say (1.6 cores by the wall), so "one thread a side" holds by the affinity, and
    a block's wall time is comparable across sides."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})


class Worker:
    """One side's worker process; ``block()`` -> its robot-steps/s by CPU and by the wall."""

    def __init__(self, case: str, side: str, size: int):
        env = dict(os.environ, COOPSIM_JIT="wait", COOPSIM_THREADS="1", MPLBACKEND="Agg",
                   XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
                   PYTHONPATH=os.pathsep.join([str(HERE.parents[1]), str(HERE.parent)]))
        python = sys.executable if side == "coopsim" else peer_python()
        if side != "coopsim":
            env["PYTHONPATH"] = str(HERE.parent)  # the peer's environment has no coopsim
        self.proc = subprocess.Popen(
            [python, "-m", "suite.peers", "--serve", case, side, str(size)], env=env,
            cwd=str(HERE.parent), text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            preexec_fn=_one_core)
        self.calls = self.reply()["calls"]

    def reply(self) -> dict:
        for line in self.proc.stdout:
            if line.startswith(TAG):
                return json.loads(line[len(TAG):])
        raise RuntimeError(f"worker {self.proc.args} ended with {self.proc.wait()}")

    def block(self) -> dict:
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        return self.reply()

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:  # it hangs: end it
            self.proc.kill()
            self.proc.wait()


def duel(case: str, peer: str, size: int) -> dict:
    """Rounds of blocks of coopsim and ``peer`` in turn; medians of robot-steps/s (CPU and
    wall) of each and of the rounds' coopsim/peer ratios by CPU."""
    workers = {}
    try:
        for side in ("coopsim", peer):
            workers[side] = Worker(case, side, size)
        rounds = {side: [] for side in workers}
        for r in range(ROUNDS):
            for side in (list(workers) if r % 2 == 0 else list(workers)[::-1]):
                rounds[side].append(workers[side].block())
    finally:
        for w in workers.values():
            w.close()
    out = {f"{side} {k}": statistics.median(b[k] for b in blocks)
           for side, blocks in rounds.items() for k in ("cpu", "wall")}
    out["ratio"] = statistics.median(c["cpu"] / p["cpu"]
                                     for c, p in zip(rounds["coopsim"], rounds[peer]))
    return out


# ---------------------------------------------------------------------- asv cases


class Duel(Case):
    """The base of the peers' cases (no case itself: its figure is named ``track_ratio`` in
    each subclass, which sets ``case`` and the parameters)."""

    case, rounds, timeout = "", 1, 1200

    def setup(self, peer, size):
        if missing(peer):
            if SMOKE:  # coopsim's side still runs: the case's code is proved
                step = SIDES[self.case, "coopsim"](size)[0]
                step(), step()
            raise NotImplementedError(missing(peer))  # asv: skipped, with the reason
        self.figures = duel(self.case, peer, size)

    @unit("coopsim/peer")
    def ratio(self, peer, size):
        """The headline: above 1, coopsim is ahead (a fall is the regression here)."""
        return self.figures["ratio"]


class Crazyflies(Duel):
    """coopsim / peer drone-steps per CPU second, N Crazyflies at 500 Hz (goal: > 1)."""

    case, param_names = "crazyflies", ("peer", "drones")
    params = (["crazyflow", "rotorpy"], sizes(1, 10, 100, 1000, smoke=2))
    track_ratio = Duel.ratio


class Mujoco(Duel):
    """coopsim on its ``mujoco`` engine (the whole Simulation: ``flight``, sensors) / raw
    MuJoCo's ``mj_step`` loop, drone-steps per CPU second, N Crazyflies at 500 Hz: what
    coopsim costs around the 3D engine it wraps (below 1 by construction; a fall is the
    regression)."""

    case, param_names = "mujoco", ("peer", "drones")
    params = (["mujoco"], sizes(1, 10, 100, smoke=2))
    track_ratio = Duel.ratio


class Batched(Duel):
    """coopsim's batched copies / VMAS robot-steps per CPU second, K copies x 4 robots."""

    case, param_names = "batched", ("peer", "copies")
    params = (["vmas"], sizes(256, 2048, 32768, smoke=4))
    track_ratio = Duel.ratio


class Ground(Duel):
    """coopsim kinematic / IR-SIM robot-steps per CPU second, N robots, 11-beam scans."""

    case, param_names = "ground", ("peer", "robots")
    params = (["irsim"], sizes(1, 10, 100, 1000, smoke=2))
    track_ratio = Duel.ratio


def main(argv=None) -> None:
    """``--serve CASE SIDE SIZE`` (a worker), or ``[CASE:PEER:SIZE ...]``: a markdown table."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"]:
        return serve(argv[1], argv[2], int(argv[3]))
    picks = [a.split(":") for a in argv] or [
        (c.case, p, s) for c in (Crazyflies, Mujoco, Batched, Ground) for p in c.params[0]
        for s in c.params[1]]
    print(f"load {os.getloadavg()[0]:.1f}; robot-steps/s, medians of {ROUNDS} rounds\n"
          "| case | peer | size | coopsim CPU | peer CPU | coopsim wall | peer wall | "
          "coopsim/peer (CPU) |\n|---|---|---:|---:|---:|---:|---:|---:|", flush=True)
    for case, peer, size in picks:
        if missing(peer):
            print(f"| {case} | {peer} | {size} | skipped: {missing(peer)} |||||", flush=True)
            continue
        f = duel(case, peer, int(size))
        print(f"| {case} | {peer} | {int(size):,} | {f['coopsim cpu']:,.0f} | "
              f"{f[peer + ' cpu']:,.0f} | {f['coopsim wall']:,.0f} | {f[peer + ' wall']:,.0f} "
              f"| {f['ratio']:.3g} |", flush=True)
    print(f"load after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
