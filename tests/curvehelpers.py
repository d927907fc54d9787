"""Helpers of the CurveZMQ tests: keys folders, a non-loopback address, handshake outcomes.

``lan()`` gives the tests an address that is not loopback when it can: one end of a veth pair
whose other end lives in a network namespace made here for the purpose (needs root and
``ip netns``; the address range 198.18.0.0/15 is the one set aside for such tests). Where that
cannot be had it falls back to 127.0.0.2, a second loopback address, with Curve on all the same;
``Lan.netns`` is then None and the tests that need a second namespace skip.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import zmq
from zmq.utils.monitor import recv_monitor_message

from coopsim.net.security import ClientKeys, create_keys

HANDSHAKE_WAIT = 10.0  # s for a handshake to end one way or the other; generous for a busy box
_OUTCOMES = {zmq.EVENT_HANDSHAKE_SUCCEEDED: "ok",
             zmq.EVENT_HANDSHAKE_FAILED_AUTH: "denied",  # ZAP said no (status 400)
             zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL: "protocol",  # e.g. no keys: NULL vs CURVE
             zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL: "failed"}  # e.g. a wrong server key


@dataclass(frozen=True)
class Lan:
    """A non-loopback address of this machine (``host``) and the namespace at the other end of
    its veth pair (``netns``, reached at ``peer``); or 127.0.0.2 and None."""

    host: str
    netns: str | None = None
    peer: str | None = None

    def in_netns(self, *argv: str) -> list[str]:
        """``argv`` run inside the other namespace."""
        return ["ip", "netns", "exec", self.netns, *argv]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=20)


_LANS = itertools.count()


@contextlib.contextmanager
def lan():
    """Yield a :class:`Lan`; remove the namespace (and with it the veth pair) afterwards.

    Each call gets names and a /30 of its own: the kernel removes a deleted namespace's
    interfaces in the background, so the previous call's may still be there.
    """
    pid, n = os.getpid(), next(_LANS)
    ns, host_if, ns_if = f"coopsim-test-{pid}-{n}", f"cs{pid}x{n % 100}h", f"cs{pid}x{n % 100}n"
    base = ((pid * 16 + n) % 32768) * 4  # one /30 of 198.18.0.0/15 per call
    prefix = f"198.{18 + (base >> 16)}.{(base >> 8) & 255}."
    host, peer = f"{prefix}{(base & 255) + 1}", f"{prefix}{(base & 255) + 2}"
    made = False
    try:
        if os.geteuid() != 0 or shutil.which("ip") is None:
            raise OSError("not root, or no ip command")
        _remove_stale()
        _ip("netns", "add", ns)
        made = True
        _ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if, "netns", ns)
        _ip("addr", "add", f"{host}/30", "dev", host_if)
        _ip("link", "set", host_if, "up")
        for args in (("addr", "add", f"{peer}/30", "dev", ns_if), ("link", "set", ns_if, "up"),
                     ("link", "set", "lo", "up"), ("route", "add", "default", "via", host)):
            _ip("-n", ns, *args)
        address = Lan(host, ns, peer)
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        address = Lan("127.0.0.2")
    try:
        yield address
    finally:
        if made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)


def _remove_stale() -> None:
    """Delete the namespaces of test processes that were killed before they could."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=20)
    for line in listed.stdout.splitlines():
        found = re.match(r"coopsim-test-(\d+)-\d+", line)
        if found and not Path(f"/proc/{found.group(1)}").exists():
            subprocess.run(["ip", "netns", "del", found.group(0)], capture_output=True, timeout=20)


@pytest.fixture(scope="module")
def net():
    """A test module's :class:`Lan` (import this fixture into the module)."""
    with lan() as address:
        yield address


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """A test module's keys folder (see :func:`make_keys`)."""
    return make_keys(tmp_path_factory.mktemp("keys"))


def make_keys(folder: Path) -> Path:
    """A keys folder with clients ``alice`` (authorized) and ``mallory`` (key pair made, then
    her public key taken out of the authorized folder: a well-formed key the server does not
    list)."""
    create_keys(folder, ("alice", "mallory"))
    (folder / "authorized" / "mallory.key").unlink()
    return folder


def key_cases(folder: Path) -> dict[str, ClientKeys | None]:
    """The clients every server is tried with, by name: none, wrong server key, unlisted, listed."""
    alice = ClientKeys.load(folder / "clients" / "alice")
    other_server = ClientKeys(zmq.curve_keypair()[0], alice.public, alice.secret)
    return {"no keys": None, "wrong server key": other_server,
            "unlisted key": ClientKeys.load(folder / "clients" / "mallory"), "listed key": alice}


#: The handshake outcomes each case may end in: a client without Curve, or with another server's
#: key, fails the handshake itself (libzmq reports it as a protocol error or without detail,
#: depending on where it stops); a well-formed unlisted key is refused by the ZAP handler.
EXPECTED = {"no keys": {"protocol", "failed"}, "wrong server key": {"protocol", "failed"},
            "unlisted key": {"denied"}, "listed key": {"ok"}}


def handshake(endpoint: str, keys: ClientKeys | None, kind: int = zmq.REQ,
              request: bytes | None = None, listen: bool = True):
    """Connect a ``kind`` socket with ``keys``, send ``request`` (REQ) or subscribe (SUB), and
    wait for the handshake's outcome (``ok``, ``denied``, ``protocol``, ``failed``).

    Returns:
        (outcome, reply frames or None): the reply is waited for only after an ``ok``; after a
        failed handshake whatever arrived within a short look is returned (it must be None).
        ``listen`` False: no reply is waited for after an ``ok`` (a stream that publishes only
        on events would keep the wait to its end).
    """
    ctx = zmq.Context()
    sock = ctx.socket(kind)
    sock.linger = 0
    if keys is not None:
        keys.apply(sock)
    monitor = sock.get_monitor_socket()
    try:
        if kind == zmq.SUB:
            sock.subscribe(b"")
        sock.connect(endpoint)
        if request is not None:
            try:  # a refused handshake may come first: then there is nowhere to send
                sock.send(request, zmq.NOBLOCK)
            except zmq.Again:
                pass
        outcome = _outcome(monitor)
        wait = (HANDSHAKE_WAIT if listen else 0.0) if outcome == "ok" else 0.3
        reply = sock.recv_multipart() if sock.poll(int(wait * 1000)) else None
        return outcome, reply
    finally:
        sock.disable_monitor()
        monitor.close(0)
        sock.close(0)
        ctx.term()


def _outcome(monitor: zmq.Socket) -> str | None:
    deadline = time.monotonic() + HANDSHAKE_WAIT
    while time.monotonic() < deadline:
        if monitor.poll(100):
            event = recv_monitor_message(monitor)["event"]
            if event in _OUTCOMES:
                return _OUTCOMES[event]
    return None


