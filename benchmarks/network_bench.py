"""Network benchmark: the protocol's cost against a raw pyzmq + msgpack REQ/REP echo.

Everything runs as separate processes on this machine, measured in the same run, and is reported
as ratios to the raw echo, so a noisy machine moves both sides together:

* raw: a REP process echoing five-item msgpack messages to a REQ client (round trip p50, p99).
  For reference, a bare Python ROUTER echo on a thread (the least any Python ROUTER server
  costs) is measured alongside it.
* (a) realtime, 10 robots (``coopsim run`` in its own process), one Python client sending motor
  commands (command 100) to the robots in turn: round-trip p50 and p99 against raw.
  Goals: p50 <= 1.5x raw, p99 <= 3x raw.
* (b) lockstep, 1 robot, one Python client (coopsim.client) looping "read sonar, send motors":
  steps per second. Goal: >= 0.5 x 1 / (2 x raw round trip). Shown next to it: the ceiling
  1 / (step time + 2 raw round trips), since every iteration also waits for one step.
* (c) lockstep, 10 robots each driven by its own client process doing the same loop: steps per
  second and speed factor (sim seconds per wall second, dt = 0.01 s).

Latencies are sent in blocks, alternating between the servers; each figure is the median over
the blocks, so a burst of load from elsewhere spoils a block, not the result.

Usage: python benchmarks/network_bench.py [--rounds 20000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
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
MOTORS = [0, "", 100, [], [0.2, 0.2]]
BLOCKS = 20


# --- child processes ------------------------------------------------------------------------------

def _echo_reply(payload: bytes) -> bytes:
    return msgpack.packb([0, "realtime", msgpack.unpackb(payload)[2], [0], [0.0]])


def _echo(port_file: str) -> None:
    """Role 'echo': a REP socket that unpacks and repacks every message (the raw baseline)."""
    sock = zmq.Context().socket(zmq.REP)
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    Path(port_file).write_text(str(port))
    while True:
        sock.send(_echo_reply(sock.recv()))


def _router_echo(port_file: str) -> None:
    """Role 'router': the same echo by a ROUTER polled on a thread, as coopsim's servers are."""
    sock = zmq.Context().socket(zmq.ROUTER)
    port = sock.bind_to_random_port("tcp://127.0.0.1")

    def serve():
        while True:
            if sock.poll(100):
                frames = sock.recv_multipart(zmq.NOBLOCK)
                sock.send_multipart(frames[:-1] + [_echo_reply(frames[-1])], zmq.NOBLOCK)
    threading.Thread(target=serve, daemon=True).start()
    Path(port_file).write_text(str(port))
    while True:
        time.sleep(1)


def _drive(nameserver: str, robot: str, seconds: float) -> None:
    """Role 'drive': read sonar, send motors until ``seconds`` pass; print the iteration count."""
    from coopsim.client import Client

    with Client(nameserver) as client:
        bot = client.robot(robot)
        end, n = time.perf_counter() + seconds, 0
        while time.perf_counter() < end:
            bot.sonar.read()
            bot.motors.set_speeds(0.2, 0.2)
            n += 1
        bot.detach()
    print(n, flush=True)


def _child(role: str, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, __file__, "--role", role, *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _echo_server(role: str, folder: str) -> tuple[subprocess.Popen, str]:
    port_file = Path(folder) / role
    echo = _child(role, str(port_file))
    while not port_file.exists() or not port_file.read_text():
        time.sleep(0.01)
    return echo, f"tcp://127.0.0.1:{port_file.read_text()}"


def _scenario(robots: int, mode: str, folder: str) -> Path:
    lines = ["[WORLD]", f"file {ROOT / 'worlds' / 'empty.world'}", "[SETTINGS]", f"mode {mode}",
             f"dt {DT}"]
    for i in range(robots):
        lines += [f"[ROBOT_{i + 1}]", "type single", f"name robot{i + 1}",
                  f"position {-4 + 0.8 * i:.1f} -3 0"]
    path = Path(folder) / f"bench{robots}.scenario"
    path.write_text("\n".join(lines) + "\n")
    return path


def _simulator(robots: int, mode: str, folder: str,
               extra: tuple = ()) -> tuple[subprocess.Popen, str]:
    """``coopsim run`` on a scenario of ``robots`` robots (``extra`` options); return it and its
    name server."""
    # COOPSIM_JIT=wait: the compiled sensing from the first step (a run otherwise casts with
    # numpy for its first second or so, while the kernels load: coopsim/raycast/auto.py)
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "run",
                             str(_scenario(robots, mode, folder)), "--port", "0", "--headless",
                             "--no-controllers", *extra], cwd=ROOT, text=True,
                            env=dict(os.environ, COOPSIM_JIT="wait"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for line in proc.stderr:
        found = re.search(r"name server: (\S+)", line)
        if found:
            return proc, found.group(1)
    raise RuntimeError("coopsim run did not print its name server")


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# --- measurements ---------------------------------------------------------------------------------

class _Prober:
    """REQ sockets to some endpoints; sends motor commands to them in turn and times each.
    ``configure`` is called with each socket before it connects (e.g. CurveZMQ keys)."""

    def __init__(self, ctx: zmq.Context, endpoints: list[str], configure=None) -> None:
        self.socks = []
        for endpoint in endpoints:
            sock = ctx.socket(zmq.REQ)
            sock.setsockopt(zmq.LINGER, 0)
            if configure is not None:
                configure(sock)
            sock.connect(endpoint)
            self.socks.append(sock)
        self.frame, self.blocks, self._i = msgpack.packb(MOTORS), [], 0

    def run(self, rounds: int, keep: bool = True) -> None:
        """Time a block of ``rounds`` round trips (kept, unless warming up)."""
        times = []
        for _ in range(rounds):
            sock = self.socks[self._i % len(self.socks)]
            self._i += 1
            start = time.perf_counter()
            sock.send(self.frame)
            reply = msgpack.unpackb(sock.recv())
            times.append(time.perf_counter() - start)
            assert reply[0] == 0, reply
        if keep:
            self.blocks.append(times)

    def figures(self) -> dict:
        """p50 and p99 round trip (s), each the median over the blocks."""
        cuts = [statistics.quantiles(block, n=100) for block in self.blocks]
        return {"p50": statistics.median(c[49] for c in cuts),
                "p99": statistics.median(c[98] for c in cuts)}

    def close(self) -> None:
        """Close the sockets."""
        for sock in self.socks:
            sock.close()


def measure_latency(rounds: int, robots: int = 10) -> dict[str, dict]:
    """Raw echo, bare ROUTER echo and (a), interleaved in blocks; figures by name."""
    from coopsim.client import Client

    with tempfile.TemporaryDirectory() as folder:
        servers = [_echo_server("echo", folder), _echo_server("router", folder)]
        sim, nameserver = _simulator(robots, "realtime", folder)
        ctx = zmq.Context()
        try:
            with Client(nameserver) as client:
                endpoints = [client.lookup(f"/robot{i + 1}") for i in range(robots)]
            probers = {"raw": _Prober(ctx, [servers[0][1]]),
                       "router": _Prober(ctx, [servers[1][1]]), "coopsim": _Prober(ctx, endpoints)}
            for prober in probers.values():
                prober.run(rounds // 10, keep=False)
            for _ in range(BLOCKS):
                for prober in probers.values():
                    prober.run(rounds // BLOCKS)
            for prober in probers.values():
                prober.close()
        finally:
            ctx.term()
            for proc, _ in servers:
                proc.kill()
                proc.wait()
            _stop(sim)
    return {name: prober.figures() for name, prober in probers.items()}


def measure_lockstep(robots: int, seconds: float) -> dict:
    """(b)/(c): lockstep steps/s with one driving client process per robot."""
    from coopsim.client import Client

    with tempfile.TemporaryDirectory() as folder:
        sim, nameserver = _simulator(robots, "lockstep", folder)
        try:
            drivers = [_child("drive", nameserver, f"robot{i + 1}", str(seconds + 2.0))
                       for i in range(robots)]
            with Client(nameserver) as client:
                _wait_attached(client, robots)
                start = client.sim().status()
                time.sleep(seconds)
                end = client.sim().status()
            for driver in drivers:
                driver.wait(seconds + 30)
        finally:
            _stop(sim)
    steps = (end["step"] - start["step"]) / (end["wall"] - start["wall"])
    return {"steps_per_s": steps, "speed": steps * DT}


def _wait_attached(client, robots: int, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while client.sim().status()["attached"] < robots:
        if time.monotonic() > end:
            raise RuntimeError("the driving clients did not attach")
        time.sleep(0.05)


def measure_step(robots: int = 1, steps: int = 500) -> float:
    """Median wall time (s) of one step of the (b) scenario, in this process, no network."""
    from coopsim.formats.files import load
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    from coopsim.raycast import auto as casters

    casters.wait_ready(600)  # the compiled sensing, as the simulator process has it
    with tempfile.TemporaryDirectory() as folder:
        stepper = Stepper(Simulation(load(_scenario(robots, "lockstep", folder))),
                          mode="lockstep")
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        stepper.tick()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# --- report ---------------------------------------------------------------------------------------

def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs"


def _verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def run_all(rounds: int, seconds: float) -> list[tuple[str, str, str, str]]:
    """Measure everything; return table rows (what, figure, ratio, goal and verdict)."""
    lat = measure_latency(rounds)
    one, ten, step = measure_lockstep(1, seconds), measure_lockstep(10, seconds), measure_step()
    raw, router, coop = lat["raw"], lat["router"], lat["coopsim"]
    goal = 0.5 / (2 * raw["p50"])
    ceiling = 1.0 / (step + 2 * raw["p50"])
    return [
        ("raw REQ/REP echo, p50 / p99", f"{_us(raw['p50'])} / {_us(raw['p99'])}", "1 / 1",
         "baseline"),
        ("bare Python ROUTER echo thread, p50 / p99", f"{_us(router['p50'])} / "
         f"{_us(router['p99'])}", f"{router['p50'] / raw['p50']:.2f} / "
         f"{router['p99'] / raw['p99']:.2f}", "reference: the least a Python ROUTER costs"),
        ("(a) realtime, 10 robots: motor round trip p50", _us(coop["p50"]),
         f"{coop['p50'] / raw['p50']:.2f}", f"<= 1.5: {_verdict(coop['p50'] <= 1.5 * raw['p50'])}"),
        ("(a) realtime, 10 robots: motor round trip p99", _us(coop["p99"]),
         f"{coop['p99'] / raw['p99']:.2f}", f"<= 3: {_verdict(coop['p99'] <= 3 * raw['p99'])}"),
        ("(b) lockstep, 1 robot, 1 client: steps/s", f"{one['steps_per_s']:.0f}",
         f"{one['steps_per_s'] / goal:.2f} of the goal",
         f">= {goal:.0f}: {_verdict(one['steps_per_s'] >= goal)}"),
        ("(b) ceiling: 1 / (step + 2 raw round trips)", f"{ceiling:.0f} (step {_us(step)})",
         f"{one['steps_per_s'] / ceiling:.2f} of it", "reference"),
        ("(c) lockstep, 10 robots, 10 client processes: steps/s", f"{ten['steps_per_s']:.0f}",
         f"speed {ten['speed']:.2f}x real time", "reported"),
    ]


def format_table(rows) -> str:
    """The rows as a Markdown table."""
    lines = ["| measurement | figure | ratio to raw | goal |", "|---|---:|---:|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: print the Markdown table (or run as one of the benchmark's child roles)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20000,
                        help=f"round trips per latency figure, in {BLOCKS} blocks")
    parser.add_argument("--seconds", type=float, default=5.0, help="wall time per lockstep test")
    parser.add_argument("--role", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args(argv)
    roles = {"echo": _echo, "router": _router_echo}
    if args.role == "drive":
        _drive(rest[0], rest[1], float(rest[2]))
    elif args.role:
        roles[args.role](*rest)
    if args.role:
        return 0
    load = os.getloadavg()[0]
    print(format_table(run_all(args.rounds, args.seconds)))
    print(f"\nload average before the run: {load:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
