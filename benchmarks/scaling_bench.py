"""Benchmark: how a step scales with the threads (issue 36; docs/performance.md, *Scaling*).

1. Swarms: N robots of the reference type (11-ray sonar), kinematic engine, every robot
   driving (``coopsim bench step``'s world, dt 0.02 s), sonar every step or at 10 Hz (the
   ``rate`` parameter: a tenth of the robots cast each step, staggered): step time and
   agent-steps/s (N / step time) at each thread count.
2. Batches: K copies of ``scenarios/learn_avoid.scenario`` x 4 agents (sonar observed) in one
   ``gymnasium.make_vec`` environment: ``step`` time and agent-steps/s (K x 4 / step time), on
   each backend of ``--backends``: ``world`` (every copy in one simulation; a vectorized
   callable task returning zeros, as before the copies backend came) and ``copies`` (one
   template tiled, one compiled step parallel over the copies; lean robots, the scenario's own
   ``[TASK]``: forward speed, computed in the kernel).
3. Pairs (``--paired``): both backends on the same lean batch, one thread, timed in
   alternating blocks in one process (the machine's drift hits both alike): their ratio.
4. Builds (``--build``): seconds to construct the copies backend's batch of K copies (the
   whole ``CopyBatch`` constructor: load, template Simulation, tiling, the first sensing call),
   after one 1-copy build in the same process has paid the imports and loaded the kernel.

Each world is built once; its thread counts are timed in interleaved blocks (1, 2, ..., then
again), so that the machine's load drifts alike for all, and each count's figure is the median
of its blocks. Speed-up = the 1-thread time / this count's; parallel efficiency = speed-up /
threads. The thread count is set with :func:`coopsim.model.threads.use` (what ``--threads``
does); the pool is every core the process may use. Prints the CPU model, the cores and the
load average (before and after): on a shared machine the figures mean little without them.

Usage: python benchmarks/scaling_bench.py [--robots 10000,100000] [--copies 256,1024,4096]
       [--backends world,copies] [--build 4096,32768] [--paired 256,1024,4096]
       [--threads 1,2,4,...] [--steps 20]
       [--rounds 3] [--plot docs/images/scaling.png]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from coopsim.model import threads

ROOT = Path(__file__).resolve().parents[1]
AVOID = str(ROOT / "scenarios" / "learn_avoid.scenario")


@dataclass
class Row:
    """One case at one thread count: step time (ms, median of blocks) and work per step."""

    case: str
    size: int
    threads: int
    ms: float
    agents: int
    base_ms: float = 0.0  # the case's 1-thread time

    @property
    def speedup(self) -> float:
        return self.base_ms / self.ms

    @property
    def efficiency(self) -> float:
        return self.speedup / self.threads

    @property
    def rate(self) -> float:
        """Agent-steps per second."""
        return self.agents / self.ms * 1e3


def machine() -> str:
    """CPU model, cores this process may use, load average."""
    model = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f
                          if ln.startswith("model name")), model)
    except OSError:
        pass
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    return f"CPU: {model}; cores this process may use: {threads.cores()}; load average: {load}"


def _use(n: int) -> None:
    """``n`` threads for the kernels, also for code reading numba's own count."""
    import numba

    threads.use(n)
    numba.set_num_threads(n)


def _timed(call, counts: list[int], steps: int, rounds: int) -> dict[int, float]:
    """Median ms per call of ``call`` at each thread count, over ``rounds`` interleaved
    blocks of ``steps`` calls."""
    blocks: dict[int, list[float]] = {n: [] for n in counts}
    for n in counts:  # warm-up: every kernel version loaded at every count
        _use(n)
        for _ in range(3):
            call()
    for _ in range(rounds):
        for n in counts:
            _use(n)
            t0 = time.perf_counter()
            for _ in range(steps):
                call()
            blocks[n].append((time.perf_counter() - t0) / steps * 1e3)
    return {n: statistics.median(v) for n, v in blocks.items()}


def swarm(n: int, rate: float, counts: list[int], steps: int, rounds: int) -> list[Row]:
    """The swarm case of ``n`` robots, sonar at ``rate`` Hz (0: every step)."""
    from coopsim.app.bench import _driving, make_caster, swarm_scenario
    from coopsim.model.specs import ParamSetting
    from coopsim.sim.simulation import Simulation

    spec = swarm_scenario(n, 0)
    if rate:
        param = (ParamSetting("sonar", "rate", float(rate)),)
        spec = replace(spec, robots=tuple(replace(r, params=param) for r in spec.robots))
    sim = Simulation(spec, engine="kinematic", caster=make_caster("jit"))
    stepper = _driving(sim, "lockstep", 0)
    ms = _timed(stepper.tick, counts, steps, rounds)
    case = f"swarm, sonar {'every step' if not rate else f'at {rate:g} Hz'}"
    return [Row(case, n, k, v, n, ms[counts[0]]) for k, v in ms.items()]


def batch(copies: int, counts: list[int], steps: int, rounds: int,
          backend: str = "world") -> list[Row]:
    """``copies`` copies of learn_avoid x 4 agents in one vector environment on ``backend``."""
    import gymnasium

    import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0

    agents = [f"r{i}" for i in range(1, 5)]

    def task(snap, rows):
        return np.zeros(rows.shape), np.zeros(rows.shape[0], bool)

    kw = (dict(task=task) if backend == "world" else dict(lean=True))
    vec = gymnasium.make_vec("coopsim/Scenario-v0", num_envs=copies, scenario=AVOID,
                             robot=agents, observe=["sonar"], backend=backend, **kw)
    vec.reset(seed=0)
    actions = np.tile([0.3, 0.28], (copies, len(agents), 1))
    ms = _timed(lambda: vec.step(actions), counts, steps, rounds)
    vec.close()
    return [Row(f"learn_avoid x 4 agents ({backend})", copies, k, v, copies * len(agents),
                ms[counts[0]]) for k, v in ms.items()]


def paired(copies: int, steps: int, rounds: int) -> str:
    """The two backends at ``copies`` x 4, one thread, timed in alternating blocks (world,
    copies, world, ...) in this one process: the median of the blocks' ratios."""
    import gymnasium

    import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0

    agents = [f"r{i}" for i in range(1, 5)]
    envs = {b: gymnasium.make_vec("coopsim/Scenario-v0", num_envs=copies, scenario=AVOID,
                                  robot=agents, observe=["sonar"], lean=True, backend=b)
            for b in ("world", "copies")}
    actions = np.tile([0.3, 0.28], (copies, len(agents), 1))
    _use(1)
    ms: dict[str, list[float]] = {b: [] for b in envs}
    for env in envs.values():
        env.reset(seed=0)
        for _ in range(3):
            env.step(actions)
    for _ in range(rounds):
        for b, env in envs.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                env.step(actions)
            ms[b].append((time.perf_counter() - t0) / steps * 1e3)
    ratio = statistics.median(w / c for w, c in zip(ms["world"], ms["copies"]))
    return (f"{copies:,} copies x 4, 1 thread, lean, sonar, learn_avoid's [TASK]: world "
            f"{statistics.median(ms['world']):.2f} ms, copies {statistics.median(ms['copies']):.2f}"
            f" ms a step (medians of {rounds} alternating blocks of {steps}); world / copies, "
            f"median of the pairs: {ratio:.2f}x")


def builds(sizes: list[int]) -> list[tuple[int, float, float]]:
    """(K, seconds, MiB of the batch's arrays) of the copies backend's constructor at each K,
    after a 1-copy build (imports, the kernel loaded)."""
    from coopsim.env.copies import CopyBatch

    agents = [f"r{i}" for i in range(1, 5)]
    CopyBatch(AVOID, 1, agents, ["sonar"], lean=True)
    out = []
    for k in sizes:
        t0 = time.perf_counter()
        b = CopyBatch(AVOID, k, agents, ["sonar"], lean=True)
        seconds = time.perf_counter() - t0
        arrays = [v for v in vars(b).values() if isinstance(v, np.ndarray)]
        arrays += [v for d in (b._shared, b._scratch) for v in d.values()]
        out.append((k, seconds, sum(a.nbytes for a in arrays) / 2**20))
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
        print(f"build {k:,} copies x 4: {seconds:.3f} s, arrays {out[-1][2]:.0f} MiB, "
              f"process peak RSS {peak:.0f} MiB", flush=True)
        del b
    return out


def table(rows: list[Row]) -> str:
    """Markdown table of the rows."""
    out = ["| case | robots / copies | threads | step ms | agent-steps/s | speed-up "
           "| efficiency |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r.case} | {r.size:,} | {r.threads} | {r.ms:.2f} | {r.rate:,.0f} | "
                   f"{r.speedup:.2f}x | {100 * r.efficiency:.0f} % |")
    return "\n".join(out)


def plot(rows: list[Row], path: str, title: str) -> None:
    """Speed-up against threads (every case, and the ideal), and agent-steps/s."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110)
    cases = list(dict.fromkeys((r.case, r.size) for r in rows))
    top = max(r.threads for r in rows)
    left.plot([1, top], [1, top], "k--", linewidth=0.8, label="ideal")
    for case, size in cases:
        mine = [r for r in rows if (r.case, r.size) == (case, size)]
        label = f"{case}, {size:,}"
        ts = [r.threads for r in mine]
        left.plot(ts, [r.speedup for r in mine], "o-", label=label)
        right.plot(ts, [r.rate for r in mine], "o-", label=label)
    for ax in (left, right):
        ax.set_xlabel("threads")
        ax.set_xticks(sorted({r.threads for r in rows}))
        ax.grid(alpha=0.3)
    left.set_ylabel("speed-up over 1 thread")
    right.set_ylabel("agent-steps/s")
    right.set_yscale("log")
    left.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _counts(text: str | None) -> list[int]:
    """The thread counts: given, else 1, 2, 4, ... and the cores."""
    if text:
        return [int(v) for v in text.split(",")]
    cores, out, n = threads.cores(), [], 1
    while n < cores:
        out.append(n)
        n *= 2
    return out + [cores]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default="10000,100000", help="swarm sizes ('' none)")
    parser.add_argument("--rates", default="0,10", help="sonar rates, Hz (0: every step)")
    parser.add_argument("--copies", default="256,1024,4096", help="batch sizes ('' none)")
    parser.add_argument("--backends", default="world,copies", help="batch backends")
    parser.add_argument("--paired", default="",
                        help="copies counts to time both backends at in alternating blocks")
    parser.add_argument("--build", default="4096,32768",
                        help="copies backend build sizes ('' none)")
    parser.add_argument("--threads", help="thread counts (default 1, 2, 4, ..., the cores)")
    parser.add_argument("--steps", type=int, default=20, help="steps per block")
    parser.add_argument("--rounds", type=int, default=3, help="blocks per thread count")
    parser.add_argument("--plot", help="PNG of the speed-ups and rates")
    args = parser.parse_args()
    os.environ.setdefault("COOPSIM_JIT", "wait")
    counts = _counts(args.threads)
    before = machine()
    print(before, flush=True)
    rows: list[Row] = []
    for n in (int(v) for v in args.robots.split(",") if v):
        for rate in (float(v) for v in args.rates.split(",")):
            rows += swarm(n, rate, counts, args.steps, args.rounds)
            print(table(rows[-len(counts):]), flush=True)
    for k in (int(v) for v in args.copies.split(",") if v):
        for backend in (v for v in args.backends.split(",") if v):
            rows += batch(k, counts, args.steps, args.rounds, backend)
            print(table(rows[-len(counts):]), flush=True)
    builds([int(v) for v in args.build.split(",") if v])
    for k in (int(v) for v in args.paired.split(",") if v):
        print(paired(k, args.steps, args.rounds), flush=True)
    after = machine()
    print(after)
    print(table(rows))
    if args.plot:
        plot(rows, args.plot, f"{before.split(';')[0]}, {threads.cores()} cores; "
                              f"load before {before.rsplit(':', 1)[1].strip()}, "
                              f"after {after.rsplit(':', 1)[1].strip()}")
        print(f"figure: {args.plot}")


if __name__ == "__main__":
    main()
