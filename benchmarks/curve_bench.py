"""CurveZMQ benchmark: what keys cost a request, against the same run without keys.

Two ``coopsim run`` processes (10 robots, realtime, dt 0.01 s, on 127.0.0.1), one plain and one
with ``--keys``, are measured in the same run: this process's REQ socket per robot sends
motor commands (command 100) to the robots in turn; blocks alternate between the two runs, and
each figure is the median over the blocks, so load from elsewhere spoils a block, not the ratio.
Also timed: a new connection's first round trip (connect, handshake (Curve's includes the ZAP
check), request, reply).

Usage: python benchmarks/curve_bench.py [--rounds 20000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import zmq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from network_bench import BLOCKS, _Prober, _simulator, _stop  # noqa: E402

from coopsim.client import Client  # noqa: E402
from coopsim.net.security import ClientKeys, create_keys  # noqa: E402

ROBOTS = 10
FIRST = 200  # new connections timed per run


def _first_round_trip(endpoint: str, keys: ClientKeys | None, count: int) -> float:
    """Median wall time of connect + first request + reply on a fresh socket, s."""
    times = []
    for _ in range(count):
        with Client(endpoint, keys=keys) as client:
            start = time.perf_counter()
            client.hello()
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        create_keys(Path(folder) / "keys")
        keys = ClientKeys.load(Path(folder) / "keys" / "clients" / "client")
        plain, plain_ns = _simulator(ROBOTS, "realtime", folder)
        curve, curve_ns = _simulator(ROBOTS, "realtime", folder,
                                     extra=("--keys", str(Path(folder) / "keys")))
        ctx = zmq.Context()
        try:
            with Client(plain_ns) as a, Client(curve_ns, keys=keys) as b:
                ends = ([a.lookup(f"/robot{i + 1}") for i in range(ROBOTS)],
                        [b.lookup(f"/robot{i + 1}") for i in range(ROBOTS)])
            probers = {"plain": _Prober(ctx, ends[0]),
                       "curve": _Prober(ctx, ends[1], configure=keys.apply)}
            for prober in probers.values():
                prober.run(args.rounds // 10, keep=False)
            for _ in range(BLOCKS):
                for prober in probers.values():
                    prober.run(args.rounds // BLOCKS)
            figures = {name: p.figures() for name, p in probers.items()}
            for prober in probers.values():
                prober.close()
            first = {"plain": _first_round_trip(plain_ns, None, FIRST),
                     "curve": _first_round_trip(curve_ns, keys, FIRST)}
        finally:
            ctx.term()
            _stop(plain)
            _stop(curve)
    print("| measurement | plain | curve | ratio |\n|---|---:|---:|---:|")
    for q in ("p50", "p99"):
        p, c = figures["plain"][q] * 1e6, figures["curve"][q] * 1e6
        print(f"| motor command round trip, {q} | {p:.0f} µs | {c:.0f} µs | {c / p:.2f} |")
    p, c = first["plain"] * 1e3, first["curve"] * 1e3
    print(f"| new connection's first round trip, median | {p:.2f} ms | {c:.2f} ms | "
          f"{c / p:.2f} |")


if __name__ == "__main__":
    main()
