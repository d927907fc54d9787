"""The ten headline cases of the benchmark suite on two checkouts, by CPU time, processes
alternating (issue 55: "no case slower than the base by more than 1.1x").

    python experiments/headline_ab.py BASE_TREE NEW_TREE [--rounds 3] [--only REGEX]

``coopsim bench compare`` times the same cases with asv, by wall time, and keeps one round's
figure; on a loaded 2-core machine a case's wall time swings 2x between two runs of the same
tree. Every headline case does a fixed amount of work (so many calls, blocks, robots), so the
CPU time of its ``setup`` and ``track_``/``peakmem_`` call (``time.process_time``, all the
process's threads; some cases time their loop in ``setup``) is a load-robust measure of its
cost: this script runs each case in a fresh process per tree per round, BASE then NEW, with the
NEW tree's benchmark suite for both (as ``bench compare`` does), and prints per case the case's
own figure (median over rounds), the call's CPU seconds (median) and NEW / BASE by CPU; the
memory case compares peak RSS instead. Both trees' kernels are compiled (or loaded) at their
smoke size first (``COOPSIM_JIT=wait``). Exit status 1 when a case's CPU ratio exceeds
``--factor``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

def parse(name: str) -> tuple[str, str, str, tuple]:
    """``"step.Step.track_ms('pymunk', 100)"`` -> (module, class, method, params)."""
    head, _, args = name.partition("(")
    module, cls, method = head.split(".")
    params = ast.literal_eval(f"({args[:-1]},)") if args else ()
    return module, cls, method, params


def one(suite: str, name: str) -> dict:
    """Run one case in this process: its figure, the CPU seconds of the timed call, peak RSS."""
    sys.path.insert(1, suite)
    import importlib

    module, cls, method, params = parse(name)
    case = getattr(importlib.import_module(f"suite.{module}"), cls)()
    cpu = time.process_time()  # some cases time their loop in setup (aerial.Flight)
    if hasattr(case, "setup"):
        case.setup(*params)
    figure = getattr(case, method)(*params)
    cpu = time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"figure": figure, "cpu_s": cpu, "rss": rss}


def run(tree: str, suite: str, name: str | None) -> dict | None:
    """This script again in a fresh process for ``tree`` (its coopsim first on sys.path), as
    ``ground_tick.py`` runs itself: ``--one`` a case (its figures), or, ``name`` None,
    ``--warm`` (every headline case once at its smoke size: the kernels compiled or loaded)."""
    env = {k: v for k, v in os.environ.items() if k != "COOPSIM_BENCH_SMOKE"}
    env.update(PYTHONPATH=tree, COOPSIM_JIT="wait")
    if name is None:
        env["COOPSIM_BENCH_SMOKE"] = "1"
    args = ["--warm", suite] if name is None else ["--one", suite, name]
    done = subprocess.run([sys.executable, os.path.abspath(__file__), *args], env=env,
                          cwd="/tmp", capture_output=True, text=True)
    if done.returncode:
        print(f"{tree}: {name or 'warm-up'} failed:\n{done.stderr[-1500:]}", file=sys.stderr)
        return None
    return None if name is None else json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    if sys.argv[1:2] == ["--one"]:  # one case in this process (run())
        print(json.dumps(one(*sys.argv[2:4])))
        return 0
    if sys.argv[1:2] == ["--warm"]:
        sys.path.insert(1, sys.argv[2])
        from suite.common import warm_headline
        warm_headline()
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="a regex over the case names")
    parser.add_argument("--factor", type=float, default=1.1)
    parser.add_argument("--no-warm", action="store_true",
                        help="skip compiling the kernels at smoke size first")
    args = parser.parse_args()
    trees = [os.path.abspath(args.base), os.path.abspath(args.new)]
    suite = os.path.join(trees[1], "benchmarks")
    sys.path.insert(0, suite)
    from suite.common import HEADLINE

    names = [n for n in HEADLINE if re.search(args.only, n)]
    for tree in trees if not args.no_warm else ():
        run(tree, suite, None)
    got = {n: ([], []) for n in names}
    for k in range(args.rounds):
        for name in names:
            for side, tree in enumerate(trees):
                result = run(tree, suite, name)
                if result:
                    got[name][side].append(result)
        print(f"round {k + 1}/{args.rounds} done, load {os.getloadavg()[0]:.2f}",
              file=sys.stderr)
    return report(got, args.factor)


def figure(runs: list[dict]) -> float | None:
    """The case's own figure, median over rounds (None for a ``peakmem_`` case: asv measures
    it)."""
    values = [r["figure"] for r in runs if r["figure"] is not None]
    return round(statistics.median(values), 4) if values else None


def report(got: dict, factor: float) -> int:
    """Print one JSON line a case; 1 when a case is slower than ``factor`` by CPU."""
    worse = 0
    for name, (base, new) in got.items():
        if not base or not new:
            print(json.dumps({"case": name, "error": "failed on a tree"}))
            worse += 1
            continue
        key = "rss" if name.split(".")[2].startswith("peakmem") else "cpu_s"
        med = [statistics.median(r[key] for r in side) for side in (base, new)]
        ratio = med[1] / med[0]
        worse += ratio > factor
        print(json.dumps({
            "case": name, "by": key, "ratio": round(ratio, 3),
            "base": round(med[0], 4), "new": round(med[1], 4),
            "figure_base": figure(base), "figure_new": figure(new),
            "cpu_range_base": [round(min(r["cpu_s"] for r in base), 3),
                               round(max(r["cpu_s"] for r in base), 3)],
            "cpu_range_new": [round(min(r["cpu_s"] for r in new), 3),
                              round(max(r["cpu_s"] for r in new), 3)]}))
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
