"""CPU a step of one Python controller in lockstep over ZeroMQ, split by process and thread,
beside the wire's floor, checkouts alternating (issue 55: "lockstep at the wire's speed",
docs/performance.md).

    python experiments/lockstep_wire.py TREE[:one] [TREE[:one] ...] [--rounds 4] [--steps 3000]

Each round runs, in turn, the floor and one ``coopsim run`` per tree (one ``single`` robot,
lockstep, dt 0.01 s, headless, its own process, that tree's coopsim first on sys.path):

- the floor: a raw ROUTER echo in its own process (``recv_multipart``, msgpack in and out,
  ``send_multipart``) and a REQ socket here with the client's options (REQ_RELAXED,
  REQ_CORRELATE), two round trips a step as the loop sends, then one;
- the loop: ``bot.sonar.read()``, ``bot.motors.set_speeds(0.2, 0.2)`` (``net.Lockstep``'s),
  300 steps warm, then one block of ``--steps``, the client run in a child process of its own;
  ``TREE:one`` runs that tree's one-request loop instead (protocol 13's exchange:
  ``bot.exchange("motors.set_speeds", ("sonar",))`` called with (0.2, 0.2), one round trip a
  step, ``net.LockstepExchange``'s).

CPU comes from /proc (user + system, every thread), per step, per process, and per thread
kind: libzmq's I/O thread (``ZMQbg/IO/0``) apart from the rest (the stepper's thread: the
tick, the hub, Python); the loop's wall time a step too. One JSON line a measurement, with
the load.
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

ECHO = r"""
import msgpack, sys, zmq
s = zmq.Context().socket(zmq.ROUTER)
print(s.bind_to_random_port("tcp://127.0.0.1"), flush=True)
while True:
    f = s.recv_multipart()
    m = msgpack.unpackb(f[-1])
    s.send_multipart(f[:-1] + [msgpack.packb([0, "lockstep", m[2], [1], [0.01]])])
"""

CLIENT = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from lockstep_wire import threads
from coopsim.client import Client
steps, one = int(sys.argv[3]), sys.argv[4] == "one"
with Client(sys.argv[2]) as client:
    bot = client.robot("robot1")
    if one:  # protocol 13: one round trip a step
        ex = bot.exchange("motors.set_speeds", ("sonar",))
        def step():
            ex(0.2, 0.2)
    else:
        def step():
            bot.sonar.read(); bot.motors.set_speeds(0.2, 0.2)
    for _ in range(300):
        step()
    print("go", flush=True)  # the parent marks the server's CPU, and again at the block's end
    before, t0 = threads(0), time.perf_counter()
    for _ in range(steps):
        step()
    after, wall = threads(0), time.perf_counter() - t0
    print(json.dumps([before, after, wall]), flush=True)
    sys.stdin.readline()  # detached only once the parent has marked: no free steps counted
    bot.detach()
"""


def threads(pid: int) -> dict:
    """CPU s so far of process ``pid`` (0: this one) by thread kind: ``io`` (libzmq's I/O
    threads) and ``rest``."""
    out = {"io": 0.0, "rest": 0.0}
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid or 'self'}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue  # the thread ended
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        out["io" if name.startswith("ZMQbg/IO") else "rest"] += \
            (int(fields[11]) + int(fields[12])) / tick
    return out


def _per_step(before: dict, after: dict, steps: int) -> dict:
    return {k: round((after[k] - before[k]) * 1e6 / steps, 1) for k in before}


def floor(round_trips: int, steps: int) -> dict:
    """µs of CPU a step of the raw echo and its client, ``round_trips`` a step."""
    import msgpack
    import zmq

    echo = subprocess.Popen([sys.executable, "-c", ECHO], stdout=subprocess.PIPE, text=True)
    try:
        sock = zmq.Context.instance().socket(zmq.REQ)
        sock.setsockopt(zmq.REQ_RELAXED, 1)
        sock.setsockopt(zmq.REQ_CORRELATE, 1)
        sock.connect(f"tcp://127.0.0.1:{echo.stdout.readline().strip()}")
        frames = [msgpack.packb([0, "", 300, [], []]),
                  msgpack.packb([0, "", 100, [], [0.2, 0.2]])][-round_trips:]

        def loop(n):
            for _ in range(n):
                for frame in frames:
                    sock.send(frame)
                    msgpack.unpackb(sock.recv())
        loop(300)
        c0, s0 = threads(0), threads(echo.pid)
        loop(steps)
        c1, s1 = threads(0), threads(echo.pid)
        sock.close(0)
    finally:
        echo.kill()
        echo.wait()
    return {"case": f"floor{round_trips}", "client": _per_step(c0, c1, steps),
            "server": _per_step(s0, s1, steps)}


def loop(tree: str, steps: int) -> dict:
    """µs of CPU a step of the lockstep loop against checkout ``tree`` (``PATH:one``: its
    one-request loop)."""
    root, _, kind = tree.partition(":")
    # PYTHONPATH picks the tree, so both processes start in an empty folder: ``-m`` and
    # ``-c`` put the working folder first on sys.path, and run from a checkout they would
    # import that checkout's coopsim whatever PYTHONPATH says
    env = dict(os.environ, PYTHONPATH=root, COOPSIM_JIT="wait")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "one.scenario"
        path.write_text(f"[WORLD]\nfile {Path(root) / 'worlds' / 'empty.world'}\n[SETTINGS]\n"
                        "mode lockstep\ndt 0.01\n[ROBOT_1]\ntype single\nname robot1\n"
                        "position -4 -3 0\n")
        run = subprocess.Popen([sys.executable, "-m", "coopsim", "run", str(path), "--port",
                                "0", "--headless", "--no-controllers"], env=env, text=True,
                               cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            nameserver = next(m.group(1) for line in run.stderr
                              if (m := re.search(r"name server: (\S+)", line)))
            threading.Thread(target=run.stderr.read, daemon=True).start()  # never blocks it
            client = subprocess.Popen([sys.executable, "-c", CLIENT, str(Path(__file__).parent),
                                       nameserver, str(steps), kind or "two"], env=env,
                                      text=True, cwd=folder, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE)
            assert client.stdout.readline().strip() == "go", "the client did not start"
            s0 = threads(run.pid)
            marks = json.loads(client.stdout.readline())
            s1 = threads(run.pid)
            client.communicate("\n")
        finally:
            run.terminate()
            run.wait(20)
    return {"case": "loop", "tree": tree, "client": _per_step(*marks[:2], steps),
            "server": _per_step(s0, s1, steps), "wall_us": round(marks[2] * 1e6 / steps, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=3000)
    args = parser.parse_args()
    for r in range(args.rounds):
        trees = args.trees if r % 2 == 0 else args.trees[::-1]
        for job in [lambda: floor(2, args.steps), lambda: floor(1, args.steps)] + \
                [lambda t=t: loop(t, args.steps) for t in trees]:
            out = job()
            out["load"] = os.getloadavg()[0]
            print(json.dumps(out), flush=True)
            time.sleep(0.1)


if __name__ == "__main__":
    main()
