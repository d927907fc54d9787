"""A/B benchmark of the one-robot lockstep loop: this checkout against another one, interleaved.

Two ``coopsim run`` processes (one robot, lockstep, no controllers) run side by side: one from
this checkout, one from ``--source DIR`` (e.g. an export of the commit before a change). One
client (coopsim.client, from this checkout) loops "read sonar, send motors" against each in
turn, in blocks of ``--block`` steps; each side's figure is the median of its blocks' steps per
second, so load from elsewhere on the machine spoils single blocks, not the comparison.

Usage: python benchmarks/lockstep_ab_bench.py --source DIR [--blocks 30] [--block 200]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from coopsim.client import Client  # noqa: E402

WORLD = "[FLOOR]\nsize 10 10 0.1\n"
SCENARIO = ("[WORLD]\nfile w.world\n[SETTINGS]\nmode lockstep\ndt 0.01\n"
            "[ROBOT_1]\ntype single\nname robot1\nposition -3 0 0\n")


def start(source: Path, folder: Path) -> tuple[subprocess.Popen, str]:
    """A simulator from ``source``; its name server endpoint."""
    env = dict(os.environ, PYTHONPATH=str(source))
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "run", str(folder / "s.scenario"),
                             "--headless", "--port", "0", "--no-controllers"], cwd=source,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found: list[str] = []
    ready = threading.Event()

    def read():
        for line in proc.stderr:
            match = re.search(r"name server: (tcp://\S+)", line)
            if match:
                found.append(match[1])
                ready.set()
    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(120):
        proc.kill()
        raise SystemExit(f"the simulator from {source} did not start")
    return proc, found[0]


def block(bot, steps: int) -> float:
    """Steps per second of ``steps`` iterations of the loop."""
    started = time.perf_counter()
    for _ in range(steps):
        bot.sonar.read()
        bot.motors.set_speeds(0.1, 0.1)
    return steps / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="the other checkout")
    parser.add_argument("--blocks", type=int, default=30)
    parser.add_argument("--block", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "w.world").write_text(WORLD)
        (folder / "s.scenario").write_text(SCENARIO)
        sides = {"this": ROOT, "other": args.source.resolve()}
        procs = {name: start(source, folder) for name, source in sides.items()}
        rates: dict[str, list[float]] = {name: [] for name in sides}
        try:
            clients = {name: Client(endpoint) for name, (_, endpoint) in procs.items()}
            bots = {name: c.robot("robot1") for name, c in clients.items()}
            for bot in bots.values():
                block(bot, 20)  # warm up
            order = list(bots)
            for _ in range(args.blocks):
                for name in order:
                    rates[name].append(block(bots[name], args.block))
                order.reverse()  # neither side always goes first
            for c in clients.values():
                c.close()
        finally:
            for proc, _ in procs.values():
                proc.terminate()
                proc.wait(10)
    this, other = (statistics.median(rates[n]) for n in ("this", "other"))
    print("| lockstep loop, 1 robot, 1 client | steps/s (median of blocks) |")
    print("|---|---:|")
    print(f"| this checkout ({ROOT}) | {this:.0f} |")
    print(f"| other ({args.source}) | {other:.0f} |")
    print(f"| ratio this / other | {this / other:.3f} |")


if __name__ == "__main__":
    main()
