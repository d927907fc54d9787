"""Why a lockstep step's tick costs about twice a free run's: the same tick, and a plain Python
work item beside it, timed by thread CPU after no pause, after a blocking pause and after a
busy pause of the same length (issue 55: "lockstep at the wire's speed", docs/performance.md,
*What limits each figure*).

    python experiments/paused_tick.py [--pause-us 300] [--blocks 7] [--ticks 1000] [--pin CPU]

A network controller's lockstep step has the stepper's thread wait (blocked in ``poll``) for
the controller's next command between two ticks; a free run ticks back to back. This takes the
network away: one process ticks ``scenarios/one_robot.scenario``'s bare stepper (no network,
nobody attached, the way ``benchmarks/suite/wholerun.tick_us`` does) and, before each tick,
either nothing (``none``), ``time.sleep(pause)`` (``sleep``: the thread blocks as it does
waiting for a command) or a Python loop on ``perf_counter`` for as long (``spin``: the thread
keeps its core). Only the tick is timed (``time.thread_time`` around it), blocks of the three
kinds alternating; a fixed plain work item (a Python loop over a dict and numpy calls, no
coopsim) is timed the same way. ``--pin CPU`` pins the process to one core first
(``os.sched_setaffinity``). One JSON line: the medians of the blocks, µs, and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _work():
    """A fixed plain work item (~20 µs quiet): dict look-ups, float maths, numpy calls."""
    import numpy as np

    a, d = np.linspace(0.0, 1.0, 64), {i: str(i) for i in range(200)}

    def work() -> float:
        s = 0.0
        for i in range(60):
            s += float(np.sin(a[i % 64])) + len(d[i])
        return s + float(np.cumsum(a)[-1])
    return work


def _tick():
    """The one-robot scenario's bare ``Stepper.tick`` (no network), warm."""
    sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
    from coopsim.app.run import Run, RunOptions
    from suite.wholerun import _loaded, _spec

    stepper = Run(_spec("one_robot"), RunOptions(mode="lockstep", network=False,
                                                 controllers=False)).stepper
    _loaded()
    for _ in range(200):
        stepper.tick()
    return stepper.tick


def block(fn, kind: str, pause: float, n: int) -> float:
    """µs of thread CPU a call of ``fn`` over ``n`` calls, each after a pause of ``kind``."""
    tt, clock, sleep, total = time.thread_time, time.perf_counter, time.sleep, 0.0
    for _ in range(n):
        if kind == "sleep":
            sleep(pause)
        elif kind == "spin":
            end = clock() + pause
            while clock() < end:
                pass
        t0 = tt()
        fn()
        total += tt() - t0
    return total / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pause-us", type=float, default=300.0)
    parser.add_argument("--blocks", type=int, default=7)
    parser.add_argument("--ticks", type=int, default=1000)
    parser.add_argument("--pin", type=int, default=None, help="pin the process to this CPU")
    args = parser.parse_args()
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})
    pause, out = args.pause_us * 1e-6, {}
    for name, fn in (("tick", _tick()), ("work", _work())):
        got = {k: [] for k in ("none", "sleep", "spin")}
        for b in range(args.blocks):
            for kind in (list(got) if b % 2 == 0 else list(got)[::-1]):
                got[kind].append(block(fn, kind, pause, args.ticks))
        out.update({f"{name}_{k}_us": round(statistics.median(v), 1) for k, v in got.items()})
        out[f"{name}_sleep_over_none"] = round(out[f"{name}_sleep_us"] / out[f"{name}_none_us"], 2)
    out.update(pause_us=args.pause_us, pin=args.pin, load=round(os.getloadavg()[0], 2))
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
