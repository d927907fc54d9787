"""Benchmark: the goals of issue 41 (the step as a plan), this checkout against a base tree in
the same run, and the crazyflow peer (docs/performance.md, *The step as a plan*).

Each case is built once per tree in a worker process of its own (``PYTHONPATH`` and
``sys.path`` = that tree, so the two trees never share imports; ``COOPSIM_JIT=wait``: every
kernel compiled or loaded before timing; ``COOPSIM_THREADS=1`` unless the case sets threads).
The parent asks the workers for blocks in turn, swapping which tree goes first every round. A
block runs ``--steps // 5`` untimed warm-up steps (at least 10), then ``--steps`` steps timed by
the process's CPU time (``time.process_time``, all its threads) and by the wall. A figure is the
median over the rounds; ``cur/base`` is the median of the rounds' ratios of CPU time per step
(below 1: this checkout is faster). Cores and load average are printed before and after each
case. The worlds are those of the benchmarks the issue's figures came from (imported, not
copied, from the tree under test).

Cases (``--cases``, default all):
  cf1        1 Crazyflie, scenarios/crazyflie.scenario: mujoco, 500 Hz, ``flight`` driver every
             step, imu, mocap, altimeter; x real time = dt / CPU per step (goal >= 10)
  cf1000     1,000 Crazyflies, ``aerial``, 500 Hz, ``flight`` hover at 100 Hz
             (flight_goals_bench.swarm), one thread (goal >= 2x real time)
  cf1000_rt  the same in real-time mode through the Stepper for ``--seconds``: % late (< 1 %)
  arm1       1 IRB 120 + ``arm_pick`` at 1 kHz (arm_goals_bench.arms; goal >= 3x real time)
  arm100     100 IRB 120 + ``arm_pick`` at 500 Hz (goal >= 0.5x real time)
  gym        one Gymnasium env step over scenarios/learn_goal.scenario, kinematic (goal >=
             20,000 env-steps/s by CPU) and the small-world tick, one ``single`` robot
             (small_world_bench.stepper, kinematic; goal <= 20 us)
  kin100k    100,000 kinematic robots, sonar every step (``coopsim bench step``'s world), 1 and
             2 threads: speed-up by the wall (goal >= 1.6)
  kin10k     10,000 kinematic robots, same world (goal: cur/base <= 1)
  pym5k      5,000 pymunk robots, same world (goal: cur/base <= 1)
  calls      Python calls per step (``sys.setprofile`` 'call' events over 10 steps / 10) at 1
             and 1,000 Crazyflies (cf1000's world; goal: the same count, O(module kinds))
  crazyflow  drone-steps/s by CPU of crazyflow (``Sim(control="state")``, 500 Hz, its state
             controller at 100 Hz, one world of N drones, hovering: ``state_control`` then
             ``step(5)`` as its README does; run by ``--peer``'s Python, JAX on the CPU)
             and of coopsim's whole Simulation (cf1000's world, N drones) at N = 1, 10, 100,
             1,000 (goal: coopsim / crazyflow >= 1)

Usage: python benchmarks/step_plan_bench.py --base /tmp/base [--ref round11-base]
           [--cases cf1,gym,...] [--steps N] [--rounds 5] [--seconds 10] [--cap K]
           [--peer /tmp/peers/bin/python] [--json OUT]
``--base`` is a folder holding the base tree; when it is missing it is made with
``git archive REF`` of this checkout. ``--cap K`` caps every robot count at K (smoke tests).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TAG = "@@"  # a worker's reply lines start with this (the code under test may print)
CASES = ("cf1", "cf1000", "cf1000_rt", "arm1", "arm100", "gym", "kin100k", "kin10k", "pym5k",
         "calls", "crazyflow")
STEPS = {"cf1": 1000, "cf1000": 200, "cf1000_rt": 0, "arm1": 1000, "arm100": 100,
         "gym": 2000, "kin100k": 10, "kin10k": 40, "pym5k": 30, "calls": 10, "crazyflow": 100}
PEER_SIZES = (1, 10, 100, 1000)
CALL_STEPS = 10  # a multiple of the hover driver's period (every 5 steps)
WARM = 10  # warm-up steps at least: two controller periods (JAX compiles on the first of each)


# ---------------------------------------------------------------- worker side: blocks


def timing(step, dt: float = 0.0, robots: int = 1, before=None, sync=None, per: int = 1):
    """A block function over ``step`` (``per`` physics steps of ``dt`` s for ``robots``):
    ``steps`` -> CPU and wall ms a physics step after the warm-up. ``before`` runs first (e.g.
    set threads); ``sync`` waits for asynchronous work (JAX)."""
    def block(steps: int) -> dict:
        if before:
            before()
        calls = max(1, steps // per)
        for _ in range(max(WARM, calls // 5)):
            step()
        if sync:
            sync()
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            step()
        if sync:
            sync()
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        return {"cpu_ms": cpu / (calls * per) * 1e3, "wall_ms": wall / (calls * per) * 1e3,
                "dt": dt, "robots": robots}
    return block


def counting(step):
    """A block function: Python function calls ('call' events) and calls of C functions
    ('c_call': builtins, numpy's functions and methods) per step over :data:`CALL_STEPS`."""
    def block(steps: int) -> dict:
        for _ in range(CALL_STEPS):
            step()  # the first steps build and compile
        seen = {"call": 0, "c_call": 0}

        def profile(frame, event, arg):
            if event in seen:
                seen[event] += 1
        sys.setprofile(profile)
        try:
            for _ in range(CALL_STEPS):
                step()
        finally:
            sys.setprofile(None)
        return {"calls": seen["call"] / CALL_STEPS, "c_calls": seen["c_call"] / CALL_STEPS}
    return block


def lockstep(spec):
    """A lockstep Stepper over the ScenarioSpec ``spec``."""
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    return Stepper(Simulation(spec), mode="lockstep")


def swarm(n: int):
    """The stepper of ``n`` hovering Crazyflies (flight_goals_bench's swarm, aerial, 500 Hz)."""
    import flight_goals_bench

    return lockstep(flight_goals_bench.swarm(n, True))


def build_cf1(args) -> dict:
    from coopsim.formats.files import load

    spec = load(str(Path(args.tree) / "scenarios" / "crazyflie.scenario"))
    return {"1 Crazyflie, mujoco, flight": timing(lockstep(spec).tick, spec.settings.dt)}


def build_cf1000(args) -> dict:
    n = cap(1000, args)
    return {f"{n} Crazyflies, aerial, 1 thread": timing(swarm(n).tick, 0.002, n)}


def build_cf1000_rt(args) -> dict:
    import flight_goals_bench

    n = cap(1000, args)

    def block(steps: int) -> dict:
        row = flight_goals_bench.realtime(n, args.seconds, True)
        cells = [c.strip() for c in row.strip("|").split("|")]
        return {"steps": int(cells[2]), "late_pct": float(cells[4]), "rt": float(cells[5]),
                "p50_ms": float(cells[6]), "p99_ms": float(cells[8])}
    return {f"{n} Crazyflies, real time {args.seconds:g} s": block}


def arm_case(n: int, dt: float):
    import arm_goals_bench

    st = lockstep(arm_goals_bench.arms(n, True, dt=dt, mode="lockstep"))
    return timing(st.tick, dt, n)


def build_arm1(args) -> dict:
    return {"1 IRB 120, arm_pick, 1 kHz": arm_case(1, 0.001)}


def build_arm100(args) -> dict:
    n = cap(100, args)
    return {f"{n} IRB 120, arm_pick, 500 Hz": arm_case(n, 0.002)}


def build_gym(args) -> dict:
    import gymnasium
    import numpy as np
    import small_world_bench
    from coopsim.raycast.jitcast import JitRayCaster

    import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0

    env = gymnasium.make("coopsim/Scenario-v0", engine="kinematic",
                         scenario=str(Path(args.tree) / "scenarios" / "learn_goal.scenario"))
    env = env.unwrapped
    env.reset(seed=0)
    action = np.array([0.3, 0.28])

    def env_step():
        if env.step(action)[3]:  # truncated: start again
            env.reset()
    tick = small_world_bench.stepper(1, "kinematic", JitRayCaster()).tick
    return {"learn_goal env step, kinematic": timing(env_step),
            "small-world tick, 1 single robot": timing(tick, 0.02)}


def ground(n: int, engine: str):
    """``coopsim bench step``'s world of ``n`` driving robots (sonar every step) on ``engine``."""
    from coopsim.app.bench import _driving, make_caster, swarm_scenario
    from coopsim.sim.simulation import Simulation

    sim = Simulation(swarm_scenario(n, 0), engine=engine, caster=make_caster("jit"))
    return _driving(sim, "lockstep", 0)


def build_kin100k(args) -> dict:
    from scaling_bench import _use

    n = cap(100_000, args)
    st = ground(n, "kinematic")
    return {f"{n} kinematic, {k} thread(s)": timing(st.tick, 0.02, n, lambda k=k: _use(k))
            for k in (1, 2)}


def build_kin10k(args) -> dict:
    n = cap(10_000, args)
    return {f"{n} kinematic": timing(ground(n, "kinematic").tick, 0.02, n)}


def build_pym5k(args) -> dict:
    n = cap(5_000, args)
    return {f"{n} pymunk": timing(ground(n, "pymunk").tick, 0.02, n)}


def build_calls(args) -> dict:
    return {f"{n} Crazyflies": counting(swarm(n).tick) for n in sorted({1, cap(1000, args)})}


def build_crazyflow(args) -> dict:
    """coopsim's side of the peer case: N hovering Crazyflies, the whole Simulation."""
    return {f"N = {n}": timing(swarm(n).tick, 0.002, n) for n in peer_sizes(args)}


def build_peer(args) -> dict:
    """crazyflow's side, as its README flies it: one world of N drones, each call sets the
    state controller's command (a hover 1 m above the start) and steps the physics 500 / 100
    = 5 times (one compiled scan); run with ``--peer``'s Python."""
    import jax.numpy as jnp
    import numpy as np
    from crazyflow.control import Control
    from crazyflow.dynamics import Dynamics
    from crazyflow.sim import Sim

    out = {}
    for n in peer_sizes(args):
        sim = Sim(n_worlds=1, n_drones=n, drone="cf2x_L250", dynamics=Dynamics.first_principles,
                  control=Control.state, freq=500, state_freq=100, device="cpu")
        sim.reset()
        cmd = np.zeros((1, n, 16))  # x y z, v, a, quaternion x y z w, body rates
        cmd[..., :3] = np.asarray(sim.data.states.pos) + np.array([0.0, 0.0, 1.0])
        cmd[..., 12] = 1.0
        per = sim.freq // sim.control_freq

        def step(sim=sim, cmd=jnp.asarray(cmd), per=per):
            sim.state_control(cmd)
            sim.step(per)
        out[f"N = {n}"] = timing(step, 1.0 / sim.freq, n, per=per,
                                 sync=lambda sim=sim: sim.data.states.pos.block_until_ready())
    return out


def cap(n: int, args) -> int:
    return min(n, args.cap) if args.cap else n


def peer_sizes(args) -> list[int]:
    return sorted({cap(n, args) for n in PEER_SIZES})


def worker(args) -> None:
    """Serve one case for one tree: build it, say ready, then one block per line of stdin."""
    if args.tree:  # the tree under test first, its benchmarks/ importable, never this file's
        sys.path[:1] = [args.tree, str(Path(args.tree) / "benchmarks")]
    blocks = globals()["build_peer" if args.peer_side else f"build_{args.worker}"](args)
    if args.tree:  # kernels warmed in the background by the build: ready before timing
        from coopsim.model import compiled
        from coopsim.raycast import auto

        for wait in (getattr(auto, "wait_ready", None), getattr(compiled, "wait_late", None)):
            if wait:  # either may be gone from a later tree
                wait(600)
    print(TAG + json.dumps(sorted(blocks)), flush=True)
    for _ in sys.stdin:
        print(TAG + json.dumps({k: f(args.steps) for k, f in blocks.items()}), flush=True)


# ---------------------------------------------------------------- parent side


class Worker:
    """One worker process of one case for one tree (or the peer)."""

    def __init__(self, case: str, tree: str | None, args, python: str = sys.executable):
        env = dict(os.environ, COOPSIM_JIT="wait")
        env.pop("PYTHONPATH", None)
        if tree:
            env["PYTHONPATH"] = tree
        if case != "kin100k":
            env["COOPSIM_THREADS"] = "1"
        cmd = [python, str(Path(__file__).resolve()), "--worker", case,
               "--steps", str(args.steps or STEPS[case]), "--seconds", str(args.seconds),
               "--cap", str(args.cap)] + (["--tree", tree] if tree else ["--peer-side"])
        self.proc = subprocess.Popen(cmd, env=env, cwd=tree or None, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.labels = self._reply()

    def _reply(self):
        for line in self.proc.stdout:
            if line.startswith(TAG):
                return json.loads(line[len(TAG):])
        raise RuntimeError(f"worker {self.proc.args} ended with {self.proc.wait()}")

    def block(self) -> dict:
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        return self._reply()

    def close(self) -> None:
        try:
            self.proc.stdin.close()  # the worker's loop ends
            self.proc.wait(60)
        except (OSError, subprocess.TimeoutExpired):  # it died, or hangs: end it
            self.proc.kill()
            self.proc.wait()


def machine() -> dict:
    return {"cores": len(os.sched_getaffinity(0)), "load": [round(v, 2) for v in
                                                            os.getloadavg()]}


def run_case(case: str, sides: dict, args) -> dict:
    """Rounds of blocks of ``case`` from every side (name -> (tree, python)), alternating the
    order; the per-round figures of each side and label."""
    before = machine()
    workers = {}
    try:
        for name, (tree, python) in sides.items():
            workers[name] = Worker(case, tree, args, python)
        rounds = {name: [] for name in workers}
        for r in range(args.rounds):
            for name in (list(workers) if r % 2 == 0 else list(workers)[::-1]):
                rounds[name].append(workers[name].block())
    finally:
        for w in workers.values():
            w.close()
    return {"case": case, "before": before, "after": machine(), "rounds": rounds}


def median(rounds: list[dict], label: str, key: str) -> float:
    return statistics.median(r[label][key] for r in rounds)


def figure(rounds: list[dict], label: str) -> dict:
    """Medians of a side's figures of ``label``, plus the speed they mean."""
    keys = rounds[0][label]
    out = {k: median(rounds, label, k) for k in keys}
    if "cpu_ms" in out:
        out["steps_per_s"] = 1e3 / out["cpu_ms"]
        out["robot_steps_per_s"] = out["robots"] * out["steps_per_s"]
        if out["dt"]:
            out["x_real_time"] = out["dt"] * 1e3 / out["cpu_ms"]
    return out


def summarise(result: dict) -> dict:
    """Per label: each side's figures and the median of the rounds' cur/base CPU ratios."""
    rounds = result["rounds"]
    labels = rounds["current"][0]
    out = {}
    for label in labels:
        row = {side: figure(r, label) for side, r in rounds.items() if label in r[0]}
        if "cpu_ms" in row["current"] and "base" in row:
            row["ratio"] = statistics.median(
                c[label]["cpu_ms"] / b[label]["cpu_ms"]
                for c, b in zip(rounds["current"], rounds["base"]))
        out[label] = row
    return out


def fmt(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


XRT = "x real time (CPU)"
# case, a word of the label (or ""), the goal, the figure, its key, its scale, >= or <=, target
GOALS = (
    ("cf1", "", ">= 10x real time", XRT, "x_real_time", 1, ">=", 10),
    ("cf1000", "", ">= 2x real time", XRT, "x_real_time", 1, ">=", 2),
    ("arm1", "", ">= 3x real time", XRT, "x_real_time", 1, ">=", 3),
    ("arm100", "", ">= 0.5x real time", XRT, "x_real_time", 1, ">=", 0.5),
    ("cf1000_rt", "", "< 1 % of steps late", "% late", "late_pct", 1, "<=", 1),
    ("gym", "env", ">= 20,000 env-steps/s", "env-steps/s (CPU)", "steps_per_s", 1, ">=", 2e4),
    ("gym", "tick", "<= 20 us", "us a tick (CPU)", "cpu_ms", 1e3, "<=", 20),
    ("kin10k", "", "not slower than base", "ms a step (CPU)", "cpu_ms", 1, "", None),
    ("pym5k", "", "not slower than base", "ms a step (CPU)", "cpu_ms", 1, "", None),
    ("calls", "", "O(module kinds), the same at 1 and 1,000", "Python calls a step", "calls", 1,
     "", None),
)


def met(value: float, op: str, target) -> str:
    if target is None:
        return ""
    return "met" if (value >= target if op == ">=" else value <= target) else "missed"


def goals(case: str, rows: dict) -> list[tuple]:
    """(goal, figure, base, current, met?, label) rows of one case's goals."""
    def get(label, side, key, scale=1.0):
        return rows[label].get(side, {}).get(key, float("nan")) * scale
    out = []
    for label in rows:
        for c, word, text, name, key, scale, op, target in GOALS:
            if c == case and word in label:
                cur = get(label, "current", key, scale)
                out.append((f"{label}: {text}", name, get(label, "base", key, scale), cur,
                            met(cur, op, target), label))
        if case == "crazyflow":
            peer = get(label, "crazyflow", "robot_steps_per_s")
            base, cur = (get(label, s, "robot_steps_per_s") / peer for s in ("base", "current"))
            out.append((f"crazyflow {label}: coopsim / crazyflow >= 1",
                        f"drone-steps/s (CPU) over crazyflow's {fmt(peer)}", base, cur,
                        met(cur, ">=", 1.0), label))
    if case == "kin100k":
        one, two = list(rows)
        base, cur = (get(one, s, "wall_ms") / get(two, s, "wall_ms") for s in ("base", "current"))
        out.append((f"{two.split(',')[0]}: 2 threads >= 1.6x 1 thread", "speed-up (wall)",
                    base, cur, met(cur, ">=", 1.6), two))
    return out


def report(result: dict) -> list[str]:
    """Markdown rows of a case: every label's figures, then its goals."""
    rows = summarise(result)
    load = f"{result['before']['load'][0]:.1f} -> {result['after']['load'][0]:.1f}"
    lines = []
    for label, row in rows.items():
        for side, f in row.items():
            if side == "ratio":
                continue
            shown = ", ".join(f"{k} {fmt(v)}" for k, v in f.items() if k not in ("dt", "robots"))
            lines.append(f"| {result['case']} | {label} | {side} | {shown} | "
                         f"{fmt(row['ratio']) if 'ratio' in row else ''} | {load} |")
    result["goals"] = goals(result["case"], rows)
    result["summary"] = rows
    return lines


def goal_table(results: list[dict]) -> str:
    out = ["| goal | figure | base | current | cur/base CPU | goal met? | load (1 min) |",
           "|---|---|---:|---:|---:|---|---|"]
    for res in results:
        for text, name, base, cur, verdict, label in res["goals"]:
            ratio = res["summary"][label].get("ratio")
            out.append(f"| {text} | {name} | {fmt(base)} | {fmt(cur)} | "
                       f"{fmt(ratio) if ratio else ''} | {verdict} | "
                       f"{res['before']['load'][0]:.1f} -> {res['after']['load'][0]:.1f} |")
    return "\n".join(out)


def base_tree(args) -> str:
    """The base folder, made from ``git archive REF`` when missing."""
    base = Path(args.base).resolve()
    if not base.exists():
        base.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.ref],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
    return str(base)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="/tmp/base-step-plan")
    ap.add_argument("--ref", default="round11-base")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--steps", type=int, default=0, help="timed steps a block (0: per case)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=10.0, help="cf1000_rt's run, s")
    ap.add_argument("--cap", type=int, default=0, help="cap every robot count (smoke tests)")
    ap.add_argument("--peer", default="/tmp/peers/bin/python", help="Python with crazyflow")
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--tree", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--peer-side", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    sides = {"current": (str(ROOT), sys.executable), "base": (base_tree(args), sys.executable)}
    print(f"current {ROOT}, base {sides['base'][0]}; {machine()}\n\n| case | measure | tree | "
          "figures (medians of rounds; ms a step by CPU and wall) | cur/base CPU | load |\n"
          "|---|---|---|---|---:|---|", flush=True)
    results = []
    for case in args.cases.split(","):
        here = dict(sides)
        if case == "crazyflow":
            if not Path(args.peer).exists():
                print(f"| crazyflow | skipped: no {args.peer} (pip install crazyflow there) |")
                continue
            here["crazyflow"] = (None, args.peer)
        try:
            results.append(run_case(case, here, args))
        except (RuntimeError, OSError, ValueError, KeyError) as exc:  # a worker died: say so
            print(f"| {case} | failed: {exc} (its traceback above) |", flush=True)
            continue
        print("\n".join(report(results[-1])), flush=True)
    print("\n" + goal_table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
