"""The floor of one lockstep round trip by transport: CPU of both processes a round trip over
ZeroMQ on tcp:// (the wire today), ZeroMQ on ipc:// and a plain TCP socket without ZeroMQ,
alternating (issue 55: what an ipc:// endpoint or a transport without libzmq's I/O threads
would save; docs/performance.md, *What limits each figure*).

    python experiments/wire_floors.py [--rounds 6] [--trips 5000]

Each case is an echo in a process of its own answering a 40-byte msgpack request of the
exchange's shape with a reply of the lockstep reply's shape, and a client here sending one
request at a time: ZeroMQ's REQ against a ROUTER (``zmq_tcp``, ``zmq_ipc``), or a TCP socket
with TCP_NODELAY and a 4-byte length before each message (``raw_tcp``: no I/O thread on either
side, each process's one thread reads and writes its socket itself). CPU from /proc of both
processes (user + system, every thread), µs a round trip, 300 round trips warm; one JSON line a
round, the cases' order turned each round, with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

import msgpack
import zmq

from lockstep_wire import threads

ZMQ_ECHO = r"""
import msgpack, sys, zmq
s = zmq.Context().socket(zmq.ROUTER)
s.bind(sys.argv[1])
print(s.get(zmq.LAST_ENDPOINT).decode(), flush=True)
while True:
    f = s.recv_multipart()
    m = msgpack.unpackb(f[-1])
    s.send_multipart(f[:-1] + [msgpack.packb([0, "lockstep", m[2], [1], [0.01]])])
"""

RAW_ECHO = r"""
import msgpack, socket, struct
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1)
print(listener.getsockname()[1], flush=True)
c, _ = listener.accept()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while True:
    head = c.recv(4)
    if not head:
        break
    m = msgpack.unpackb(c.recv(struct.unpack("<I", head)[0]))
    out = msgpack.packb([0, "lockstep", m[2], [1], [0.01]])
    c.sendall(struct.pack("<I", len(out)) + out)
"""

REQUEST = msgpack.packb([0, "", 6, [100, 200], [0.2, 0.2]])


def _client(kind: str, address: str):
    """(one round trip, close) for a client of ``kind`` connected to ``address``."""
    if kind == "raw_tcp":
        sock = socket.create_connection(("127.0.0.1", int(address)))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        framed = struct.pack("<I", len(REQUEST)) + REQUEST

        def trip():
            sock.sendall(framed)
            msgpack.unpackb(sock.recv(struct.unpack("<I", sock.recv(4))[0]))
        return trip, sock.close
    zsock = zmq.Context.instance().socket(zmq.REQ)
    zsock.connect(address)

    def ztrip():
        zsock.send(REQUEST)
        msgpack.unpackb(zsock.recv())
    return ztrip, lambda: zsock.close(0)


def case(kind: str, trips: int, folder: str) -> float:
    """µs of CPU (both processes) a round trip of ``kind``."""
    if kind == "raw_tcp":
        args = [RAW_ECHO]
    else:
        bind = "tcp://127.0.0.1:*" if kind == "zmq_tcp" else f"ipc://{folder}/echo"
        args = [ZMQ_ECHO, bind]
    echo = subprocess.Popen([sys.executable, "-c", *args], stdout=subprocess.PIPE, text=True)
    try:
        trip, close = _client(kind, echo.stdout.readline().strip())
        for _ in range(300):
            trip()
        c0, s0 = threads(0), threads(echo.pid)
        for _ in range(trips):
            trip()
        c1, s1 = threads(0), threads(echo.pid)
        close()
    finally:
        echo.kill()
        echo.wait()
    return round(sum(c1[k] - c0[k] + s1[k] - s0[k] for k in c0) * 1e6 / trips, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--trips", type=int, default=5000)
    args = parser.parse_args()
    kinds = ["zmq_tcp", "zmq_ipc", "raw_tcp"]
    with tempfile.TemporaryDirectory() as folder:
        for r in range(args.rounds):
            out = {k: case(k, args.trips, folder) for k in (kinds if r % 2 == 0 else kinds[::-1])}
            out["load"] = round(os.getloadavg()[0], 2)
            print(json.dumps(out), flush=True)
            time.sleep(0.1)


if __name__ == "__main__":
    main()
