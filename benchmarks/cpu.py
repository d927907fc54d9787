"""The suite's cases by CPU time, one case a process: the worker of ``coopsim bench compare``.

    python benchmarks/cpu.py --list REGEX       # the cases' names (asv's form), one a line
    python benchmarks/cpu.py --warm NAME...     # each named case's class once at smoke size
    python benchmarks/cpu.py --one NAME         # one case in this process: one JSON line

``coopsim bench compare`` runs this file in a fresh process per case, per commit, in each of its
``--rounds``, with that commit's tree first on ``PYTHONPATH`` (the app never imports the suite). Why
CPU time: every case does a fixed amount of work (so many calls, blocks, robots), so the CPU seconds
of its ``setup`` and its timed call (``time.process_time``, every thread of the process, plus the
CPU of the processes it started and waited for) measure its cost whatever else the machine runs; the
wall clock on a loaded 2-core machine swung a case 2x between two runs of the same tree. A
``peakmem_`` case is compared by the process's peak RSS instead.

A name is asv's: ``module.Class.method`` with the parameters as asv writes them, e.g.
``step.Step.track_ms('kinematic', 10000)``.
"""

from __future__ import annotations

import ast
import importlib
import itertools
import json
import os
import re
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from smoke import PREFIXES, suite_cases  # noqa: E402 - after its folder is on the path


def combos(owner) -> list[tuple]:
    """Every combination of a case class's ``params`` (asv's rule: a list of lists is crossed,
    a flat list is one parameter)."""
    params = getattr(owner, "params", ())
    if not params:
        return [()]
    if isinstance(params[0], (list, tuple)):
        return list(itertools.product(*params))
    return [(p,) for p in params]


def names(regex: str = "") -> list[str]:
    """Every case of the suite whose asv name ``regex`` finds, in the suite's order (a
    ``timeraw_`` case times a fresh interpreter: not run this way)."""
    out = []
    for module, cls, methods in suite_cases():
        where = module.__name__.split(".", 1)[1]
        for method in methods:
            if method.startswith("timeraw_"):
                continue
            if cls is None:
                out.append(f"{where}.{method}")
                continue
            for combo in combos(cls):
                args = f"({', '.join(repr(p) for p in combo)})" if combo else ""
                out.append(f"{where}.{cls.__name__}.{method}{args}")
    return [n for n in out if re.search(regex, n)]


def parse(name: str) -> tuple[str, str, str, tuple]:
    """``"step.Step.track_ms('pymunk', 100)"`` -> (module, class, method, params)."""
    head, _, args = name.partition("(")
    module, cls, method = head.split(".")
    params = ast.literal_eval(f"({args[:-1]},)") if args else ()
    return module, cls, method, params


def _cpu() -> float:
    """CPU seconds of this process (every thread) and of its waited-for children."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def one(name: str) -> dict:
    """Run the case ``name`` in this process: ``figure`` (what asv would record: a ``track_``
    method's value, a ``time_`` method's seconds, None for ``peakmem_``/``mem_``) and its
    ``unit`` (the method's ``@unit``), ``cpu_s`` (setup and call), ``wall_s`` (the same stretch
    by the clock) and ``rss`` (peak, bytes)."""
    module, cls, method, params = parse(name)
    owner = getattr(importlib.import_module(f"suite.{module}"), cls)
    case = owner()
    cache = [case.setup_cache()] if hasattr(case, "setup_cache") else []
    cpu, wall = _cpu(), time.perf_counter()  # some cases time their loop in setup
    if hasattr(case, "setup"):
        case.setup(*cache, *params)
    try:
        t0 = time.perf_counter()
        value = getattr(case, method)(*cache, *params)
        took = time.perf_counter() - t0
    finally:
        if hasattr(case, "teardown"):
            case.teardown(*cache, *params)
    cpu, wall = _cpu() - cpu, time.perf_counter() - wall
    figure = value if method.startswith("track_") else took if method.startswith("time_") \
        else None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    unit = getattr(getattr(owner, method), "unit", "s" if method.startswith("time_") else None)
    return {"case": name, "figure": figure, "unit": unit, "cpu_s": cpu, "wall_s": wall,
            "rss": rss}


def warm(wanted: list[str]) -> None:
    """Run the class of every case in ``wanted`` once for each of its smoke-size parameters
    (``COOPSIM_BENCH_SMOKE=1`` must be set before the suite is imported): numba compiles, or
    loads from its cache, every kernel those cases use, before anything is timed."""
    from suite.common import SMOKE

    assert SMOKE, "--warm needs COOPSIM_BENCH_SMOKE=1"
    for head in dict.fromkeys(n.split("(")[0].rsplit(".", 1)[0] for n in wanted):
        module, cls = head.split(".")
        owner = getattr(importlib.import_module(f"suite.{module}"), cls)
        for combo in combos(owner):
            case = owner()
            cache = [case.setup_cache()] if hasattr(case, "setup_cache") else []
            try:
                if hasattr(case, "setup"):
                    case.setup(*cache, *combo)
            except NotImplementedError:  # a combination the case skips
                continue
            try:
                for method in (m for m in dir(case) if m.startswith(PREFIXES)
                               and not m.startswith("timeraw_")):
                    getattr(case, method)(*cache, *combo)
            finally:
                if hasattr(case, "teardown"):
                    case.teardown(*cache, *combo)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--list"]:
        print("\n".join(names(argv[1] if len(argv) > 1 else "")))
    elif argv[:1] == ["--warm"]:
        warm(argv[1:])
    elif argv[:1] == ["--one"] and len(argv) == 2:
        try:
            print(json.dumps(one(argv[1])))
        except NotImplementedError as why:  # the case skips these parameters
            print(json.dumps({"case": argv[1], "skipped": str(why)}))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    os.environ.setdefault("COOPSIM_JIT", "wait")
    sys.exit(main(sys.argv[1:]))
