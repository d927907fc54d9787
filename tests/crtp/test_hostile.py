"""Bad input from the CRTP side: the documented answer, the server alive, the run stepping."""

from __future__ import annotations

import socket
import struct

import numpy as np
import pytest

from coopsim.crtp import wire

from .crtphelpers import crtp_run, sim_wait, truth, wait_until


class Raw:
    """A bare UDP client of one Crazyflie."""

    def __init__(self, uri: str) -> None:
        host, port = uri.removeprefix("udp://").split(":")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.connect((host, int(port)))
        self.sock.settimeout(0.3)

    def send(self, port: int, channel: int, data: bytes = b"") -> None:
        self.sock.send(bytes((wire.header(port, channel),)) + data)

    def ask(self, port: int, channel: int, data: bytes = b"", want=None, tries: int = 200):
        """Send and return the first answer on (port, channel) starting with ``want``."""
        self.send(port, channel, data)
        for _ in range(tries):
            try:
                got = self.sock.recv(256)
            except socket.timeout:
                return None
            p, c, body = wire.split(got)
            if (p, c) == (port, channel) and (want is None or body.startswith(want)):
                return body
        return None

    def quiet(self) -> bool:
        try:
            self.sock.recv(256)
            return False
        except socket.timeout:
            return True

    def close(self) -> None:
        self.sock.close()


def setting(raw: Raw, data: bytes) -> bytes:
    """A log settings command's answer after its command byte: block id and status."""
    body = raw.ask(wire.LOG, 1, data, want=data[:1])
    return body[1:] if body else body


def test_malformed_unknown_and_oversize_are_dropped_and_counted(tmp_path):
    with crtp_run(tmp_path) as (run, uris):
        fw = run.crtp.firmwares[0]
        raw = Raw(uris[0])
        raw.sock.send(b"")  # empty
        raw.sock.send(b"\x3c" + b"\0" * 64)  # longer than a CRTP packet
        raw.send(1, 0, b"hello")  # port 1: nobody serves it
        raw.send(wire.LOG, 3, b"\x00")  # the log port has no channel 3
        raw.send(wire.GENERIC, 0, b"\x07\x00")  # a position setpoint cut short
        raw.send(wire.GENERIC, 0, bytes((11,)) + b"\0" * 14)  # manual setpoints: not served
        assert raw.quiet()  # the firmware answers none of them
        wait_until(lambda: fw.counts.malformed >= 3 and fw.counts.unknown >= 3)
        # the link still answers
        assert raw.ask(wire.LINK, 1) == b"Bitcraze Crazyflie"
        assert raw.ask(wire.PLATFORM, 1, b"\x00") == bytes((0, wire.PROTOCOL_VERSION))
        before = run.stepper.snapshot.step
        sim_wait(run, 0.2)
        assert run.stepper.snapshot.step > before
        raw.close()


def test_log_block_limits(tmp_path):
    with crtp_run(tmp_path) as (run, uris):
        fw = run.crtp.firmwares[0]
        raw = Raw(uris[0])
        setting(raw, b"\x05")
        every = b"".join(bytes((7,)) + struct.pack("<H", i) for i in range(len(fw.log_toc)))
        # a block of every variable: more than a packet carries (E2BIG, as the firmware)
        assert setting(raw, b"\x06\x01" + every[:27]) == \
            bytes((1, wire.E2BIG))
        z = fw.log_toc.ids["stateEstimate.z"]
        zvar = bytes((7,)) + struct.pack("<H", z)
        assert setting(raw, b"\x06\x01" + zvar) == bytes((1, 0))
        assert setting(raw, b"\x06\x01" + zvar) == bytes((1, wire.EEXIST))
        # raw memory (id 0xFFFF) is not served
        assert setting(raw, b"\x06\x02" + bytes((7, 0xFF, 0xFF))) == bytes((2, wire.ENOENT))
        assert setting(raw, b"\x03\x09\x01") == bytes((9, wire.ENOENT))
        # period 0 (what "1 ms" becomes in units of 10 ms): one packet, then none
        assert setting(raw, b"\x03\x01\x00") == bytes((1, 0))
        first = raw.ask(wire.LOG, 2)
        assert first is not None and first[0] == 1
        assert struct.unpack("<f", first[4:8])[0] == pytest.approx(truth(run, "cf1")[2],
                                                                    abs=1e-3)
        sim_wait(run, 0.1)
        assert fw.counts.log_packets == 1
        # 17 blocks: the 17th has no room (ENOMEM)
        for ident in range(2, 17):
            assert setting(raw, bytes((6, ident))) == bytes((ident, 0))
        assert setting(raw, bytes((6, 17))) == bytes((17, wire.ENOMEM))
        assert setting(raw, b"\x09\x01") == bytes((1, 8))  # ENOEXEC
        raw.close()


def test_params_read_only_and_unknown(tmp_path):
    with crtp_run(tmp_path) as (run, uris):
        fw = run.crtp.firmwares[0]
        raw = Raw(uris[0])
        ident = fw.param_toc.ids["deck.bcFlow2"]
        head = struct.pack("<H", ident)
        # a write to a read-only parameter is answered with the value it keeps
        assert raw.ask(wire.PARAM, 2, head + b"\x00", want=head) == head + b"\x01"
        assert fw.params["deck.bcFlow2"] == 1
        bad = struct.pack("<H", 999)
        assert raw.ask(wire.PARAM, 1, bad, want=bad) == bad + bytes((wire.ENOENT,))
        est = struct.pack("<H", fw.param_toc.ids["posCtlPid.xyVelMax"])
        nan = struct.pack("<f", float("nan"))
        got = raw.ask(wire.PARAM, 2, est + nan, want=est)
        assert struct.unpack("<f", got[2:])[0] == 1.0  # a NaN is not stored
        raw.close()


@pytest.mark.slow
def test_absurd_setpoints_and_a_second_client(tmp_path):
    with crtp_run(tmp_path) as (run, uris):
        fw = run.crtp.firmwares[0]
        first, second = Raw(uris[0]), Raw(uris[0])
        start = truth(run, "cf1")
        for _ in range(3):
            first.send(wire.GENERIC, 0, struct.pack("<Bffff", 7, float("nan"), 0, 0.5, 0))
        wait_until(lambda: fw.counts.malformed >= 3)
        sim_wait(run, 0.05)  # steps decided after the NaNs arrived
        assert fw.mode in ("idle", "none") and not fw.engaged  # a NaN setpoint moves nothing
        # a position a kilometre away: flown at the firmware's velocity limit (1 m/s)
        for _ in range(50):
            first.send(wire.GENERIC, 0, struct.pack("<Bffff", 7, 1e30, 0.0, 0.5, 0.0))
            sim_wait(run, 0.02)
        speed = np.linalg.norm(run.stepper.snapshot.twist3d[0, 0:2])
        assert speed < 1.3
        # the second client is refused while the first holds the link (null packets answered)
        assert second.ask(wire.LINK, 1) is None
        second.sock.send(wire.NULL)
        assert second.sock.recv(16) == wire.NULL
        assert fw.counts.refused >= 1
        # the first client vanishes: the watchdog levels it, then stops the motors
        wait_until(lambda: fw.mode == "attitude")
        wait_until(lambda: fw.mode == "off")
        wait_until(lambda: truth(run, "cf1")[2] < 0.05)
        assert truth(run, "cf1")[0] - start[0] < 5.0
        first.close()
        second.close()


@pytest.mark.slow
def test_coopsim_run_crtp_process_and_scan(tmp_path):
    """``coopsim run --crtp`` as a process: its start-up line lists the URIs, cflib's scan
    finds them (ports 19850-19859 on 127.0.0.1), /sim state lists them."""
    import os
    import re
    import subprocess
    import sys

    import cflib.crtp
    from coopsim.client import Client

    from .crtphelpers import free_ports, scenario_file

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.bind(("127.0.0.1", wire.BASE_PORT))
        probe.close()
        base = wire.BASE_PORT
    except OSError:  # another run holds the scanned ports: serve beside them, scan nothing
        probe.close()
        base = free_ports(2)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.Popen(
        [sys.executable, "-m", "coopsim", "run", str(scenario_file(tmp_path, 2)), "--headless",
         "--port", "0", "--crtp", "--crtp-port", str(base)], cwd=root, text=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=root))
    try:
        crtp = nameserver = None
        for line in proc.stderr:
            crtp = crtp or re.search(r"crtp: cf1 (udp://\S+), cf2 (udp://\S+)", line)
            nameserver = nameserver or re.search(r"name server: (tcp://\S+)", line)
            if crtp and nameserver:
                break
        assert crtp and nameserver, "the run did not start"
        uris = [crtp[1], crtp[2]]
        assert uris == [f"udp://127.0.0.1:{base}", f"udp://127.0.0.1:{base + 1}"]
        if base == wire.BASE_PORT:
            found = [uri for uri, _ in cflib.crtp.scan_interfaces()]
            assert set(uris) <= set(found)
        with Client(nameserver[1]) as c:
            state = c.sim().state()["crtp"]["crazyflies"]
        assert [state["cf1"]["uri"], state["cf2"]["uri"]] == uris
    finally:
        proc.kill()
        proc.wait()
