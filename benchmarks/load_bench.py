"""Load benchmark: 200 concurrent clients against one live run of 100 robots in real time.

``coopsim run`` runs in its own process (100 ``single`` robots, realtime, dt = 0.01 s); the
clients are threads, each with its own REQ socket (real TCP on 127.0.0.1), spread over a few
client processes. Two loads, one after the other, each for ``--seconds``:

* **robot**: every client drives the same robot, ``robot1``: sonar read (200), then set_speeds
  (100), again and again (each request counted).
* **state**: every client asks ``/sim`` for ``state`` (23), the whole layout with its poses.

Each load is preceded by its baseline in the same run: one client alone for a few seconds.
Reported per row: answers per second, round-trip p50 and p99, errors (error replies and
timeouts), and the run's own figures over the load: real-time factor (sim seconds per wall
second, from /sim status before and after) and missed deadlines. Goal: ``/sim state`` >= 2,000
answers/s under 200 clients.

Usage: python benchmarks/load_bench.py [--clients 200] [--seconds 30] [--robots 100]
       [--procs 4] [--source DIR]   (DIR: another checkout to run the simulator from, e.g. to
       measure the code before a change with the same clients)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import msgpack
import zmq

ROOT = Path(__file__).resolve().parent.parent
DT = 0.01
TIMEOUT_MS = 10_000
LOADS = {  # name -> (port, requests sent in turn)
    "robot": ("/robot1", [[0, "", 200, [], []], [0, "", 100, [], [0.0, 0.0]]]),
    "state": ("/sim", [[0, "", 23, [], []]]),
}


# --- the simulator --------------------------------------------------------------------------------

def write_scenario(robots: int, folder: str, mode: str = "realtime") -> Path:
    """``robots`` single robots 1.5 m apart on a square floor large enough for them."""
    side = max(1, int(robots ** 0.5 + 0.999))
    size = side * 1.5 + 2.0
    world = Path(folder) / "floor.world"
    world.write_text(f"[FLOOR]\nsize {size:.1f} {size:.1f} 0.1\n")
    lines = ["[WORLD]", f"file {world}", "[SETTINGS]", f"mode {mode}", f"dt {DT}"]
    for i in range(robots):
        x, y = -size / 2 + 1.0 + 1.5 * (i % side), -size / 2 + 1.0 + 1.5 * (i // side)
        lines += [f"[ROBOT_{i + 1}]", "type single", f"name robot{i + 1}",
                  f"position {x:.2f} {y:.2f} 0"]
    path = Path(folder) / f"load{robots}.scenario"
    path.write_text("\n".join(lines) + "\n")
    return path


def start_simulator(scenario: Path, source: Path) -> tuple[subprocess.Popen, str]:
    """``coopsim run`` (from the checkout ``source``) headless; return it and its name server.
    Its stderr is drained on a thread so the status line never blocks it."""
    env = dict(os.environ, PYTHONPATH=str(source))
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "run", str(scenario), "--port",
                             "0", "--headless", "--no-controllers"], cwd=source, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        found = re.search(r"name server: (\S+)", line)
        if found:
            threading.Thread(target=_drain, args=(proc.stderr,), daemon=True).start()
            return proc, found.group(1)
    raise RuntimeError("coopsim run did not print its name server")


def _drain(stream) -> None:
    for _ in stream:
        pass


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def ask(ctx: zmq.Context, endpoint: str, request: list) -> list:
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, TIMEOUT_MS)
    sock.connect(endpoint)
    try:
        sock.send(msgpack.packb(request))
        return msgpack.unpackb(sock.recv())
    finally:
        sock.close()


def lookup(ctx: zmq.Context, nameserver: str, name: str) -> str:
    return ask(ctx, nameserver, [0, name, 1, [], []])[1]


def sim_figures(ctx: zmq.Context, sim: str) -> tuple[float, float, int]:
    """(sim time, wall clock, missed deadlines) from /sim status."""
    reply = ask(ctx, sim, [0, "", 1, [], []])
    return reply[4][0], time.perf_counter(), reply[3][3]


# --- the clients ----------------------------------------------------------------------------------

def client_process(endpoint: str, load: str, threads: int, start: float, seconds: float) -> None:
    """Role 'clients': ``threads`` clients from ``start`` (time.time()) for ``seconds``; print
    one JSON line: latencies (µs), answers, errors."""
    ctx = zmq.Context()
    requests = [msgpack.packb(r) for r in LOADS[load][1]]
    results = []

    def one() -> None:
        lat, errors = [], 0
        sock = _req(ctx, endpoint)
        time.sleep(max(0.0, start - time.time()))
        end = time.perf_counter() + seconds
        i = 0
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            sock.send(requests[i % len(requests)])
            i += 1
            try:
                reply = msgpack.unpackb(sock.recv())
            except zmq.Again:
                errors += 1
                sock.close()
                sock = _req(ctx, endpoint)
                continue
            lat.append(int((time.perf_counter() - t0) * 1e6))
            errors += reply[0] != 0
        sock.close()
        results.append((lat, errors))

    workers = [threading.Thread(target=one) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    latencies = [x for lat, _ in results for x in lat]
    print(json.dumps({"lat": latencies, "errors": sum(e for _, e in results)}), flush=True)
    ctx.term()


def _req(ctx: zmq.Context, endpoint: str) -> zmq.Socket:
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, TIMEOUT_MS)
    sock.connect(endpoint)
    return sock


def run_load(ctx, nameserver: str, load: str, clients: int, procs: int,
             seconds: float) -> dict:
    """One row: ``clients`` clients over ``procs`` processes for ``seconds``."""
    endpoint = lookup(ctx, nameserver, LOADS[load][0])
    sim = lookup(ctx, nameserver, "/sim")
    procs = max(1, min(procs, clients))
    start = time.time() + 1.0 + 0.02 * clients  # every client connected before it begins
    children = []
    for k in range(procs):
        threads = clients // procs + (k < clients % procs)
        children.append(subprocess.Popen(
            [sys.executable, __file__, "--role", "clients", endpoint, load, str(threads),
             repr(start), str(seconds)], stdout=subprocess.PIPE, text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT))))
    time.sleep(max(0.0, start - time.time()))
    before = sim_figures(ctx, sim)
    outs = [json.loads(c.communicate()[0]) for c in children]
    after = sim_figures(ctx, sim)
    lat = sorted(x for out in outs for x in out["lat"])
    return {"load": load, "clients": clients, "answers_per_s": len(lat) / seconds,
            "p50_ms": _pct(lat, 50) / 1000, "p99_ms": _pct(lat, 99) / 1000,
            "errors": sum(out["errors"] for out in outs),
            "rtf": (after[0] - before[0]) / (after[1] - before[1]),
            "missed": after[2] - before[2]}


def _pct(values: list, q: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(len(values) * q / 100))]


def table(rows: list[dict]) -> str:
    out = ["| load | clients | answers/s | vs 1 client | p50 ms | p99 ms | errors | sim RTF "
           "| missed deadlines |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    base = {}
    for r in rows:
        base.setdefault(r["load"], r["answers_per_s"])
        out.append(f"| {r['load']} | {r['clients']} | {r['answers_per_s']:,.0f} | "
                   f"{r['answers_per_s'] / base[r['load']]:.2f}x | {r['p50_ms']:.2f} | "
                   f"{r['p99_ms']:.2f} | {r['errors']} | {r['rtf']:.2f} | {r['missed']} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--role")
    parser.add_argument("args", nargs="*")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--baseline-seconds", type=float, default=5.0)
    parser.add_argument("--robots", type=int, default=100)
    parser.add_argument("--procs", type=int, default=4)
    parser.add_argument("--loads", default="robot,state")
    parser.add_argument("--source", type=Path, default=ROOT)
    a = parser.parse_args()
    if a.role == "clients":
        endpoint, load, threads, start, seconds = a.args
        client_process(endpoint, load, int(threads), float(start), float(seconds))
        return
    ctx = zmq.Context()
    with tempfile.TemporaryDirectory() as folder:
        proc, nameserver = start_simulator(write_scenario(a.robots, folder), a.source.resolve())
        rows = []
        try:
            time.sleep(2.0)  # past start-up
            for load in a.loads.split(","):
                rows.append(run_load(ctx, nameserver, load, 1, 1, a.baseline_seconds))
                rows.append(run_load(ctx, nameserver, load, a.clients, a.procs, a.seconds))
        finally:
            stop(proc)
    print(f"{a.robots} robots, realtime, dt {DT} s; {a.clients} clients in {a.procs} "
          f"processes, {a.seconds:g} s per load (baselines: 1 client, {a.baseline_seconds:g} s); "
          f"simulator from {a.source}\n")
    print(table(rows))
    state = [r for r in rows if r["load"] == "state" and r["clients"] == a.clients]
    if state:
        rate = state[0]["answers_per_s"]
        print(f"\n/sim state under {a.clients} clients: {rate:,.0f} answers/s "
              f"(goal >= 2,000: {'met' if rate >= 2000 else 'missed'})")
    ctx.term()


if __name__ == "__main__":
    main()
