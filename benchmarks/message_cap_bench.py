"""Memory benchmark: what a request of many frames costs a live run, and what stays behind.

libzmq's MAXMSGSIZE limits each frame, not a message, and a ROUTER sees only whole multipart
messages, so a request of 1,500 frames of 60 kB (90 MB) is received whole before any server
code runs (docs/reliability.md, *Message size*). This measures the simulator process's resident
memory (VmRSS) while such requests arrive and 2 s after they were refused:

* one request of ``--frames`` x ``--frame-bytes`` to ``/sim``;
* four such requests at once, to ``/sim``, ``/robot1``, the name server and ``/sim``.

Figures are MB and ratios to the RSS of the same idle run measured just before. Run it with
``--source DIR`` (another checkout, e.g. ``git archive`` of an older commit) to compare code.

Usage: python benchmarks/message_cap_bench.py [--frames 1500] [--frame-bytes 60000]
       [--source DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import zmq

from load_bench import ROOT, lookup, start_simulator, stop, write_scenario

SETTLE = 2.0  # s after the replies before "after" is read


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid``, MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


class Peak:
    """Samples a process's RSS every 5 ms on a thread; ``stop()`` returns the largest seen."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mb(self.pid))
            time.sleep(0.005)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def flood(ctx: zmq.Context, endpoints: list[str], frames: int, size: int) -> list[list]:
    """Send one request of ``frames`` frames to each endpoint at once; return the replies."""
    socks = []
    chunk = b"z" * size
    for endpoint in endpoints:
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.SNDHWM, 0)
        sock.connect(endpoint)
        socks.append(sock)
    time.sleep(0.2)  # connected
    for sock in socks:
        sock.send_multipart([chunk] * frames)
    replies = []
    for sock in socks:
        if not sock.poll(120_000):
            raise RuntimeError("no reply to a flood request")
        replies.append(sock.recv_multipart()[-1][:80])
        sock.close()
    return replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=1500)
    parser.add_argument("--frame-bytes", type=int, default=60_000)
    parser.add_argument("--source", type=Path, default=ROOT)
    a = parser.parse_args()
    ctx = zmq.Context()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        proc, nameserver = start_simulator(write_scenario(10, folder), a.source.resolve())
        try:
            time.sleep(3.0)
            sim, robot = lookup(ctx, nameserver, "/sim"), lookup(ctx, nameserver, "/robot1")
            for label, targets in (("1 request to /sim", [sim]),
                                   ("4 requests at once", [sim, robot, nameserver, sim])):
                idle = rss_mb(proc.pid)
                peak = Peak(proc.pid)
                replies = flood(ctx, targets, a.frames, a.frame_bytes)
                high = peak.stop()
                time.sleep(SETTLE)
                after = rss_mb(proc.pid)
                rows.append((label, idle, high, after, replies[0]))
        finally:
            stop(proc)
    ctx.term()
    mb = a.frames * a.frame_bytes / 1e6
    print(f"requests of {a.frames} frames x {a.frame_bytes} bytes ({mb:.0f} MB each); "
          f"simulator (10 robots, realtime) from {a.source}\n")
    print("| flood | idle RSS MB | peak MB | peak / idle | after 2 s MB | after / idle |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, idle, high, after, _ in rows:
        print(f"| {label} | {idle:.0f} | {high:.0f} | {high / idle:.2f}x | {after:.0f} | "
              f"{after / idle:.2f}x |")
    print(f"\nreply: {rows[0][4]!r}")


if __name__ == "__main__":
    main()
