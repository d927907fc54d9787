"""CPU time a step of a headless lockstep ``coopsim run`` nobody listens to, against its bare
tick, checkouts alternating (issue 55: one robot <= 50 µs a step; one Crazyflie >= 10x real
time; docs/performance.md, the whole-run row).

    python experiments/whole_run.py BASE_TREE NEW_TREE [--rounds 4] [--cases one_robot crazyflie]

Each round runs one process per tree, in turn (``COOPSIM_JIT=wait``, the kernels' threads
pinned to 1); each process, for each case (``scenarios/<case>.scenario``, or ``flyers_<n>``:
benchmarks/suite/common.py), times ``--blocks`` blocks of ``--steps`` steps of the run as
``coopsim run`` builds it (``suite.wholerun.whole_us``: its servers up, nobody attached, the
progress watcher following it) beside as many bare ``Stepper.tick`` calls of the same world
(``tick_us``), by the process's CPU time (every thread), and prints one JSON line: the medians,
µs a step, x real time by that CPU, the run over its tick, the load. After the last round, one
line per tree and case: the median over its processes and their range.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys


def measure(root: str, cases: list[str], steps: int, blocks: int) -> dict:
    """This process's figures for checkout ``root`` (its coopsim first on sys.path)."""
    sys.path[:0] = [root, os.path.join(root, "benchmarks")]
    from suite.common import threads
    from suite.wholerun import _spec, tick_us, whole_us

    threads(1)
    out = {"root": root}
    for case in cases:
        spec = _spec(case)
        whole, tick = [], []
        for _ in range(blocks):  # in turn: load from elsewhere spoils a block, not the ratio
            whole.append(whole_us(spec, steps))
            tick.append(tick_us(spec, steps))
        w, t = statistics.median(whole), statistics.median(tick)
        out[case] = {"whole_us": round(w, 1), "tick_us": round(t, 1),
                     "x_real_time": round(spec.settings.dt * 1e6 / w, 2),
                     "over_tick": round(w / t, 3)}
    out["load"] = round(os.getloadavg()[0], 2)
    return out


def summary(rows: list[dict], cases: list[str]) -> list[str]:
    """One line per tree and case: median and range of its processes' whole and tick µs."""
    lines = []
    for root in dict.fromkeys(r["root"] for r in rows):
        mine = [r for r in rows if r["root"] == root]
        loads = [r["load"] for r in mine]
        for case in cases:
            w = [r[case]["whole_us"] for r in mine]
            t = [r[case]["tick_us"] for r in mine]
            lines.append(f"{root} {case}: whole {statistics.median(w):.1f} µs a step "
                         f"({min(w):.1f}-{max(w):.1f}), tick {statistics.median(t):.1f} "
                         f"({min(t):.1f}-{max(t):.1f}), {len(mine)} processes, "
                         f"load {min(loads):.2f}-{max(loads):.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", help="checkouts to alternate (their roots)")
    parser.add_argument("--rounds", type=int, default=4, help="processes per tree")
    parser.add_argument("--cases", nargs="+", default=["one_robot", "crazyflie"])
    parser.add_argument("--steps", type=int, default=2000, help="steps a block")
    parser.add_argument("--blocks", type=int, default=5, help="blocks a process, each figure")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process: one tree
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.cases, args.steps, args.blocks)), flush=True)
        return
    env, rows = dict(os.environ, COOPSIM_JIT="wait"), []
    for _ in range(args.rounds):
        for tree in map(os.path.abspath, args.trees):
            done = subprocess.run(
                [sys.executable, __file__, "--one", tree, "--cases", *args.cases,
                 "--steps", str(args.steps), "--blocks", str(args.blocks)],
                env=dict(env, PYTHONPATH=tree), check=True, stdout=subprocess.PIPE, text=True)
            print(done.stdout, end="", flush=True)
            rows.append(json.loads(done.stdout.splitlines()[-1]))
    print("\n".join(summary(rows, args.cases)))


if __name__ == "__main__":
    main()
