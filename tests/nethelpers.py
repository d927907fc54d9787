"""Helpers of the network tests: a live run on a free port and a raw five-field peer.

The peer speaks the wire protocol with nothing but pyzmq and msgpack, as a client in another
language would, so the servers are tested through their real sockets.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import msgpack
import zmq

from coopsim.app.run import Run, RunOptions

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
NETDATA = Path(__file__).resolve().parent / "data" / "net"
REPLY_WAIT = 30.0  # s; generous: a reply that takes this long is a failure, not a slow machine
# (5 s was exceeded on a machine busy with the whole suite beside two CPU burners)


@contextlib.contextmanager
def live(scenario, start: bool = True, paused: bool = False, **options):
    """A Run on a free name-server port without launched controllers (unless asked).

    With ``paused`` the stepper runs but takes no step until a test steps it or resumes it.
    """
    options = {"port": 0, "controllers": False, **options}
    with Run(scenario, RunOptions(**options)) as run:
        if paused:
            run.stepper.pause()
        if start or paused:
            run.start()
        yield run


class Peer:
    """One REQ or DEALER socket connected to one server.

    Args:
        endpoint: Server endpoint.
        kind: zmq.REQ or zmq.DEALER.
        delimiter: For DEALER: send the empty delimiter frame REQ sockets add.
    """

    def __init__(self, endpoint: str, kind: int = zmq.REQ, delimiter: bool = False) -> None:
        self.ctx = zmq.Context.instance()
        self.endpoint, self.kind, self.delimiter = endpoint, kind, delimiter
        self.sock = self._connect()

    def _connect(self) -> zmq.Socket:
        sock = self.ctx.socket(self.kind)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(self.endpoint)
        return sock

    def reconnect(self) -> None:
        """Start over with a fresh socket (after a dropped connection or a lost reply)."""
        self.sock.close(0)
        self.sock = self._connect()

    def send_frames(self, frames: list[bytes]) -> None:
        """Send raw frames (the delimiter is added for a DEALER that asks for it)."""
        if self.kind == zmq.DEALER and self.delimiter:
            frames = [b""] + frames
        self.sock.send_multipart(frames)

    def receive(self, timeout: float = REPLY_WAIT) -> list:
        """The next reply, decoded to a plain list; AssertionError when none comes."""
        assert self.sock.poll(int(timeout * 1000)), f"no reply from {self.endpoint}"
        frames = self.sock.recv_multipart()
        if self.kind == zmq.DEALER:
            assert frames[:-1] in ([], [b""]), frames
        return msgpack.unpackb(frames[-1], raw=False)

    def raw(self, frame: bytes, timeout: float = REPLY_WAIT) -> list:
        """Send one raw frame and return the decoded reply."""
        self.send_frames([frame])
        return self.receive(timeout)

    def ask(self, command: int, text: str = "", params=(), data=(),
            timeout: float = REPLY_WAIT) -> list:
        """Send one request and return the reply [error, text, command, params, data]."""
        return self.raw(msgpack.packb([0, text, command, list(params), list(data)]), timeout)

    def ok(self, command: int, text: str = "", params=(), data=()) -> list:
        """Like :meth:`ask`, asserting that the reply is a success."""
        reply = self.ask(command, text, params, data)
        assert reply[0] == 0, reply
        return reply

    def close(self) -> None:
        """Close the socket."""
        self.sock.close(0)


def lookup(nameserver: str, name: str) -> str:
    """The endpoint of ``name`` (asserting the name server knows it)."""
    peer = Peer(nameserver)
    try:
        return peer.ok(1, name)[1]
    finally:
        peer.close()


def wait_until(predicate, timeout: float = REPLY_WAIT, every: float = 0.01):
    """Poll ``predicate`` until it returns something truthy; return it or fail."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < end, "condition not reached in time"
        time.sleep(every)


def controller(script: str, nameserver: str, robot: str, *args: str) -> subprocess.Popen:
    """Start tests/data/net/``script`` as a controller process (stdout piped, text mode)."""
    env = dict(os.environ, COOPSIM_NAMESERVER=nameserver, COOPSIM_ROBOT=robot,
               PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, str(NETDATA / script), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


class Lines:
    """Collects a controller process's stdout lines on a thread (JSON lines decoded)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.items: list = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            line = line.strip()
            self.items.append(json.loads(line) if line.startswith("{") else line)

    def records(self) -> list[dict]:
        """The JSON records so far."""
        return [item for item in list(self.items) if isinstance(item, dict)]

    def wait(self, predicate, timeout: float = REPLY_WAIT) -> list[dict]:
        """Wait until ``predicate(records)`` holds; return the records."""
        return wait_until(lambda: predicate(self.records()) and self.records(), timeout)

    def finish(self, timeout: float = 15.0) -> tuple[int, str]:
        """Wait for the process to end; return its exit code and stderr."""
        code = self.proc.wait(timeout)
        self._thread.join(timeout)
        return code, self.proc.stderr.read()


def run_with_gateway(*args: str) -> tuple[subprocess.Popen, tuple[str, int]]:
    """``coopsim run scenarios/one_robot.scenario --headless --port 0 --no-controllers
    --json-port 0 ARGS...`` and the gateway's address it prints (stderr stays piped)."""
    coopsim = Path(sys.executable).parent / "coopsim"  # the venv's entry point
    proc = subprocess.Popen(
        [coopsim, "run", "scenarios/one_robot.scenario", "--headless", "--port", "0",
         "--no-controllers", "--json-port", "0", *args], cwd=ROOT, stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    seen = [proc.stderr.readline().decode() for _ in range(2)]  # before the name server's
    match = next(filter(None, (re.match(r"json gateway: ([\d.]+):(\d+)", x) for x in seen)), None)
    if match is None:
        proc.kill()
        proc.wait()
        raise AssertionError(f"no gateway address; stderr began: {seen}")
    return proc, (match[1], int(match[2]))


@contextlib.contextmanager
def simulator_process(scenario: Path | None = None, *args: str):
    """``coopsim run SCENARIO --headless --port 0 ARGS`` as a process of its own (to be stopped,
    continued or killed); yields (process, name server endpoint). Default: one robot in
    lockstep, no controllers."""
    scenario = scenario or SCENARIOS / "one_robot.scenario"
    args = args or ("--mode", "lockstep", "--no-controllers")
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "run", str(scenario),
                             "--headless", "--port", "0", *args],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        endpoint = None
        for line in proc.stderr:
            match = re.search(r"name server: (tcp://\S+)", line)
            if match:
                endpoint = match[1]
                break
        assert endpoint, "the simulator did not start"
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep it drained
        yield proc, endpoint
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
        proc.wait()


def until_heard(squads, *subscribers, squad: str = "A") -> int:
    """Send ``hold`` orders to ``squad`` until every subscriber (a raw SUB socket on
    ``/squads/events`` or a :class:`coopsim.client.squads.Subscription`) has heard one, then
    take from each everything up to the last: ZeroMQ's PUB drops what it publishes before a
    subscription has reached it (the slow joiner), so a test waits on hearing, not on a sleep.
    Returns the number of orders sent (the channel counts them as published)."""
    heard: list[set] = [set() for _ in subscribers]
    sent = last = 0
    while not all(heard):
        last = squads.send(squad, "hold").seq
        sent += 1
        for sub, got in zip(subscribers, heard):
            if not got:
                got.update(_heard(sub, 0.2))
    for sub, got in zip(subscribers, heard):  # all connected: each gets the last, none after
        for _ in range(100):
            if last in got:
                break
            got.update(_heard(sub, 5.0))
        else:
            raise AssertionError(f"a subscriber never got order {last}")
    return sent


def _heard(sub, timeout: float) -> list[int]:
    """The sequence numbers of the orders ``sub`` received (waiting up to ``timeout`` s for the
    first)."""
    if isinstance(sub, zmq.Socket):
        from coopsim.net.protocol import Message

        out = []
        while sub.poll(int(timeout * 1000)):
            timeout = 0.0
            out.append(int(Message.from_wire(sub.recv_multipart()[1]).params[0]))
        return out
    return [order.seq for order in sub.poll(timeout)]
