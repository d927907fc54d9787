"""The CRTP server: every Crazyflie of a run on its own UDP port (``coopsim run --crtp``).

The Crazyflies (robots of type ``crazyflie``, in section order) answer on ports 19850, 19851...
(the ports cflib's ``scan_interfaces()`` probes), on 127.0.0.1 unless ``--bind`` says
otherwise, which needs ``--insecure``: CRTP has no authentication. One thread receives every
datagram and answers it from the Crazyflie's :class:`~coopsim.crtp.firmware.Firmware`; a hook
on the stepper, after each step, reads the snapshot (the state is the Crazyflie's estimate),
runs each flying Crazyflie's control (the cascade of :mod:`coopsim.swarm.flight`, the flight
driver's, all Crazyflies in one call) and puts the propeller speeds into its ``rotors``
command slot, as a network client's motion command, then sends the log blocks due at that
step's sim time. The server never touches the engine.

**Who holds a Crazyflie.** Its link belongs to the first client address that speaks to it, until
that client has been silent for :data:`LINK_LEASE` s or has sent a zero-thrust setpoint (what
cflib's ``close_link`` sends last); meanwhile datagrams from any other address are dropped
(counted as ``refused``; a null packet is answered to anyone, so scans still find it). Its
motors belong to the server (one owner per Crazyflie, :class:`~coopsim.sim.slots.Owner`): a
network client that owns the robot first keeps it, and the CRTP side's commands are then
refused (the console says so), as between two network clients.
"""

from __future__ import annotations

import logging
import selectors
import socket
import threading
import time

import numpy as np

from ..model.errors import CoopsimError, NotAllowedError
from ..model.statedoc import DocKey
from ..sim.slots import Owner
from . import wire
from .firmware import Firmware

log = logging.getLogger(__name__)

LINK_LEASE = 3.0  #: s of silence after which another client may take a Crazyflie's link
WAKE = 0.1  #: s the server thread waits at most between two looks at its stop flag
BURST = 256  #: datagrams taken from one socket before the next socket's turn
RECV = 256  #: bytes read of a datagram (longer ones are cut, then dropped as oversize)
ROTORS = "rotors"


#: The keys of ``/sim state``'s ``crtp`` (docs/reference/state.md is generated from them).
CRTP_KEYS = (
    DocKey("bind", "string", "the address the UDP ports are bound to"),
    DocKey("errors", "integer", "datagrams whose handling or sending failed (the first is "
           "logged)"),
    DocKey("crazyflies", "robot -> object", "each Crazyflie's link", fields=(
        DocKey("uri", "string", "the URI cflib opens (`udp://127.0.0.1:19850`)"),
        DocKey("port", "integer", "its UDP port"),
        DocKey("client", "string or null", "`HOST:PORT` of the client holding the link"),
        DocKey("mode", "string", "its firmware's mode"),
        DocKey("emergency", "boolean", "an emergency stop holds it"),
        DocKey("received", "integer", "packets received"),
        DocKey("sent", "integer", "packets sent"),
        DocKey("unknown", "integer", "packets to a port or channel that is not served "
               "(dropped, as the firmware does)"),
        DocKey("malformed", "integer", "packets of a wrong length or with values that are "
               "not numbers (dropped)"),
        DocKey("refused", "integer", "packets from a second client while the first holds "
               "the link"),
        DocKey("setpoints", "integer", "setpoints taken"),
        DocKey("high_level", "integer", "high-level commander packets taken"),
        DocKey("log_packets", "integer", "log packets sent"),
        DocKey("setpoint_latency_ms", "object", "wall time from a setpoint's arrival to the "
               "step that used it, over the latest 4096: `{n, p50, p95}` ms (`{n: 0}` before "
               "any)"))),
)
#: ``/sim state``'s ``crtp`` entry.
CRTP = DocKey("crtp", "object", "the Crazyflies' CRTP links (docs/crazyflie.md)",
              present="a run serving CRTP (`--crtp`, `crtp true`)", fields=CRTP_KEYS)


class CrtpServer:
    """Serve every Crazyflie of ``stepper``'s run over CRTP/UDP.

    Args:
        stepper: The run's Stepper.
        bind: Address to bind (127.0.0.1 by default).
        base_port: The first Crazyflie's port; the others follow in section order.
        insecure: Allow a bind beyond loopback.

    Raises:
        CoopsimError: a bind beyond loopback without ``insecure``; a port in use; a world
            with no Crazyflie.
    """

    def __init__(self, stepper, bind: str = "127.0.0.1", base_port: int = wire.BASE_PORT,
                 insecure: bool = False) -> None:
        from ..net.security import is_loopback

        if not is_loopback(bind) and not insecure:
            raise CoopsimError(f"--crtp serves without authentication: binding {bind} needs "
                               "--insecure (else it stays on 127.0.0.1)")
        self.stepper, self.bind = stepper, bind
        self.firmwares: list[Firmware] = []
        self.sockets: list[socket.socket] = []
        self.owners: list[Owner] = []
        robots = stepper.call(self._describe).result(10.0)
        if not robots:
            raise CoopsimError("--crtp: the world has no Crazyflie (robot type crazyflie)")
        try:
            for i, (name, airframe, altimeter) in enumerate(robots):
                sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                self.sockets.append(sock)
                try:
                    sock.bind((bind, base_port + i))
                except OSError as exc:
                    raise CoopsimError(f"--crtp: cannot bind UDP {bind}:{base_port + i} for "
                                       f"{name}: {exc.strerror or exc}") from None
                sock.setblocking(False)
                self.firmwares.append(Firmware(name, i, airframe, altimeter))
                self.owners.append(Owner(("crtp", base_port + i),
                                         f"cflib on udp://{bind}:{base_port + i}"))
        except BaseException:
            self._close_sockets()
            raise
        self.ports = [s.getsockname()[1] for s in self.sockets]
        self.clients: list = [None] * len(self.firmwares)  # the address holding each link
        self.heard = [0.0] * len(self.firmwares)  # wall time it last spoke
        self.released = [False] * len(self.firmwares)
        self.gains = None
        self.errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="coopsim-crtp", daemon=True)

    def _describe(self):
        """On the stepper thread: (name, rotors parameters, has an altimeter) of every
        Crazyflie, in section order."""
        out = []
        for r in self.stepper.sim.world.robots:
            if r.type == "crazyflie" and ROTORS in r.modules:
                out.append((r.name, r.modules[ROTORS].as_dict(), "altimeter" in r.modules))
        return out

    def uris(self) -> dict[str, str]:
        """Each Crazyflie's cflib URI."""
        host = "127.0.0.1" if self.bind in ("0.0.0.0", "localhost") else self.bind
        return {fw.robot: f"udp://{host}:{port}" for fw, port in zip(self.firmwares, self.ports)}

    def startup_line(self) -> str:
        return "crtp: " + ", ".join(f"{name} {uri}" for name, uri in self.uris().items())

    # -- life -------------------------------------------------------------------------------

    def start(self) -> "CrtpServer":
        if self._thread.ident is None:
            self.stepper.hooks.append(self)
            self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self in self.stepper.hooks:
            self.stepper.hooks.remove(self)
        if self._thread.is_alive():
            self._thread.join(5.0)
        self._close_sockets()

    def _close_sockets(self) -> None:
        for s in self.sockets:
            s.close()

    def state(self) -> dict:
        """The ``crtp`` entry of ``/sim state``."""
        out = {}
        for i, fw in enumerate(self.firmwares):
            with fw.lock:
                c = fw.counts
                lat = sorted(fw.latencies)
                client = self.clients[i]
                out[fw.robot] = {
                    "uri": self.uris()[fw.robot], "port": self.ports[i],
                    "client": f"{client[0]}:{client[1]}" if client else None,
                    "mode": fw.mode, "emergency": fw.emergency,
                    "received": c.received, "sent": c.sent, "unknown": c.unknown,
                    "malformed": c.malformed, "refused": c.refused,
                    "setpoints": c.setpoints, "high_level": c.high_level,
                    "log_packets": c.log_packets,
                    "setpoint_latency_ms": ({"n": len(lat),
                                             "p50": 1e3 * lat[len(lat) // 2],
                                             "p95": 1e3 * lat[int(0.95 * (len(lat) - 1))]}
                                            if lat else {"n": 0})}
        return {"crtp": {"bind": self.bind, "errors": self.errors, "crazyflies": out}}

    # -- datagrams (the server's thread) ------------------------------------------------------

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        for i, sock in enumerate(self.sockets):
            sel.register(sock, selectors.EVENT_READ, i)
        try:
            while not self._stop.is_set():
                for key, _ in sel.select(WAKE):
                    i = key.data
                    for _ in range(BURST):
                        try:
                            datagram, addr = self.sockets[i].recvfrom(RECV)
                        except (BlockingIOError, InterruptedError):
                            break
                        except OSError:
                            break  # an ICMP error of an earlier send; nothing to read
                        try:
                            self._serve(i, datagram, addr)
                        except Exception as exc:  # noqa: BLE001 - never take the server down
                            self.errors += 1
                            if self.errors == 1:
                                log.warning("crtp: %s", exc, exc_info=True)
        finally:
            sel.close()

    def _serve(self, i: int, datagram: bytes, addr) -> None:
        fw, sock = self.firmwares[i], self.sockets[i]
        wall = time.perf_counter()
        parsed = wire.split(datagram)
        if parsed is None:
            with fw.lock:
                fw.counts.malformed += 1
            return
        port, channel, data = parsed
        if wire.is_null(port, channel):
            self._send(i, wire.NULL, addr)
            return
        with fw.lock:
            if not self._hold(i, addr, wall):
                fw.counts.refused += 1
                return
            replies = fw.handle(port, channel, data, wall)
            if port in (wire.COMMANDER, wire.GENERIC, wire.HIGH_LEVEL):
                # a zero-thrust setpoint is cflib's close_link: another client may connect
                # (packets its threads still had queued do not take the link back; a
                # command does)
                self.released[i] = (port == wire.COMMANDER and fw.setpoint is not None
                                    and fw.setpoint.kind == "stop")
            replies += fw.take_console()
        for reply in replies:
            self._send(i, reply, addr)

    def _hold(self, i: int, addr, wall: float) -> bool:
        """Whether ``addr`` holds Crazyflie ``i``'s link now (taking it when it is free)."""
        if self.clients[i] == addr:
            self.heard[i] = wall
            return True
        if (self.clients[i] is None or self.released[i]
                or wall - self.heard[i] > LINK_LEASE):
            if self.clients[i] is not None:
                log.info("crtp: %s's link passes from %s to %s", self.firmwares[i].robot,
                         self.clients[i], addr)
            self.clients[i], self.heard[i], self.released[i] = addr, wall, False
            return True
        return False

    def _send(self, i: int, data: bytes, addr) -> None:
        try:
            self.sockets[i].sendto(data, addr)
            self.firmwares[i].counts.sent += 1
        except OSError:
            self.errors += 1

    # -- after each step (the stepper thread) -----------------------------------------------

    def __call__(self, snap) -> None:
        """The stepper's hook: control every commanded Crazyflie, send the logs due."""
        if snap.pose3d is None:
            return
        wall = time.perf_counter()
        t = snap.time
        state = np.concatenate((snap.pose3d, snap.twist3d), axis=1)
        flying, outbox = [], []
        for i, fw in enumerate(self.firmwares):
            row = snap.index.get(fw.robot)
            if row is None:
                continue
            with fw.lock:
                if t < fw.time:  # the run was reset: the Crazyflie reboots
                    self._reboot(i)
                dt = fw.observe(t, state[row])
                decision = fw.decide(t, dt, wall)
                due = fw.due(t)
                if due and self.clients[i] is not None:
                    values = fw.values()
                    for ident, block in due:
                        outbox.append((i, fw.log_packet(ident, block, values, t)))
                        fw.counts.log_packets += 1
                for packet in fw.take_console():
                    if self.clients[i] is not None:
                        outbox.append((i, packet))
            if decision[0] == "ref":
                flying.append((i, decision[1], dt))
            else:
                self._put(i, decision)
        if flying:
            self._fly(flying)
        for i, packet in outbox:
            self._send(i, packet, self.clients[i])

    def _reboot(self, i: int) -> None:
        old = self.firmwares[i]
        fw = Firmware(old.robot, old.index, old.airframe, "range.zrange" in old.log_toc.ids)
        fw.lock = old.lock
        fw.counts, fw.latencies = old.counts, old.latencies
        self.firmwares[i] = fw

    def _fly(self, flying: list) -> None:
        """The cascade for every Crazyflie tracking a reference, in one call."""
        from ..swarm import flight

        if self.gains is None:
            self.gains = flight.Gains()
        fws = [self.firmwares[i] for i, _, _ in flying]
        refs = np.array([fw.control_ref(ref, self.gains.pos)
                         for fw, (_, ref, _) in zip(fws, flying)])
        for fw in fws:
            if fw.mode != "ref":
                fw.integral[:] = 0.0
        states = np.array([fw.state for fw in fws])
        frames = [flight.Airframe(float(fw.airframe["mass"]), float(fw.airframe["arm"]),
                                  float(fw.airframe["kf"]), float(fw.airframe["km"]),
                                  float(fw.airframe["max_speed"]),
                                  (float(fw.airframe["ixx"]), float(fw.airframe["iyy"]),
                                   float(fw.airframe["izz"]))) for fw in fws]
        est = flight.Estimate(states[:, 0:3].copy(), states[:, 7:10].copy(),
                              np.array([fw.integral for fw in fws]), np.ones(len(fws), bool))
        dt = max(d for _, _, d in flying)
        speeds = flight.control(self.gains, frames, est, states[:, 3:7], states[:, 10:13],
                                refs, dt)
        for k, (i, ref, _) in enumerate(flying):
            fw = self.firmwares[i]
            with fw.lock:
                fw.integral = np.array(est.integral[k])
                fw.ref = ref
                fw.speeds = speeds[k]
                fw.thrust = float(fw.airframe["kf"]) * float(np.sum(speeds[k] ** 2))
            values = (1.0, *map(float, speeds[k]),
                      *np.clip(refs[k, 0:3], -1000.0, 1000.0).tolist(), 1.0)
            self._put(i, ("ref",), values)

    def _put(self, i: int, decision: tuple, values: tuple | None = None) -> None:
        """One Crazyflie's motor command into its ``rotors`` slot."""
        fw = self.firmwares[i]
        kind = decision[0]
        if kind == "none":
            fw.mode = "none"
            return
        if kind == "off":
            if fw.mode == "off":
                return  # the stored stop persists: the robot's slot is let go after the lease
            values = (0.0,) * 9
            fw.speeds = np.zeros(4)
            fw.thrust = 0.0
        elif kind == "attitude":
            _, thrust, roll, pitch, rate = decision
            top = float(fw.airframe["max_speed"])
            total = 4.0 * float(fw.airframe["kf"]) * top * top
            values = (3.0, min(max(thrust, 0.0), total), roll, pitch, rate, 0.0, 0.0, 0.0, 0.0)
        elif kind == "power":
            speeds = decision[1]
            fw.speeds = speeds
            values = (1.0, *map(float, speeds), 0.0, 0.0, 0.0, 0.0)
        fw.mode = kind
        try:
            self.stepper.slots.put(fw.robot, ROTORS, values, attach=False, owner=self.owners[i])
        except NotAllowedError as exc:  # another client owns the robot
            with fw.lock:
                fw.counts.refused += 1
                if fw.counts.refused == 1 or fw.mode != "refused":
                    fw.say(f"SYS: motors not ours: {exc}")
            fw.mode = "refused"
