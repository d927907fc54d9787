"""The network: a request's round trip against a raw pyzmq + msgpack echo, the lockstep loop
over the network, what CurveZMQ keys cost, many clients at once, and what a request of many
frames costs the simulator's memory (was benchmarks/network_bench.py, curve_bench.py,
load_bench.py, message_cap_bench.py; plugins_bench.py's driver against controller)."""

import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .common import SMOKE, Case, LiveRun, alternate, count, live_text, sizes, unit

MOTORS = [0, "", 100, [], [0.2, 0.2]]  # robotN's motors.set_speeds(0.2, 0.2)

#: The raw baseline in its own process: a REP socket unpacking and repacking every message.
ECHO = r"""
import msgpack, sys, zmq
s = zmq.Context().socket(zmq.REP)
print(s.bind_to_random_port("tcp://127.0.0.1"), flush=True)
while True:
    s.send(msgpack.packb([0, "realtime", msgpack.unpackb(s.recv())[2], [0], [0.0]]))
"""


@contextlib.contextmanager
def _connected(endpoints, configure=None):
    """One REQ socket to each of ``endpoints`` (``configure(sock)`` before it connects: e.g.
    CurveZMQ keys), kept for the whole case: a motor command makes its socket the robot's
    owner, and a new socket's would be refused (error 11, owned) until the server has taken
    the close of the one before, which on a loaded machine may come after the new socket's
    first request."""
    import zmq

    socks = []
    try:
        for endpoint in endpoints:
            sock = zmq.Context.instance().socket(zmq.REQ)
            socks.append(sock)
            sock.setsockopt(zmq.LINGER, 0)
            if configure is not None:
                configure(sock)
            sock.connect(endpoint)
        yield socks
    finally:
        for sock in socks:
            sock.close()


def _round_trips(socks, rounds: int) -> list[float]:
    """Round trips (s) of ``rounds`` motor commands sent through ``socks`` in turn."""
    import msgpack

    frame, out = msgpack.packb(MOTORS), []
    for k in range(rounds):
        t0 = time.perf_counter()
        socks[k % len(socks)].send(frame)
        reply = msgpack.unpackb(socks[k % len(socks)].recv())
        assert reply[0] == 0, f"motors.set_speeds: {reply}"
        out.append(time.perf_counter() - t0)
    return out


def _p(times: list[float], q: int) -> float:
    return statistics.quantiles(times, n=100)[q - 1] if len(times) > 1 else times[0]


def _robots(nameserver: str, robots: int, keys=None) -> list[str]:
    from coopsim.client import Client

    with Client(nameserver, keys=keys) as client:
        return [client.lookup(f"/robot{i + 1}") for i in range(robots)]


class RoundTrip(Case):
    """10 robots in real time (``coopsim run``, dt 0.01 s, its own process), one client sending
    motor commands to them in turn: the round trip's p50 and p99 over a raw REQ/REP echo's,
    blocks alternating (goals: p50 <= 1.5x, p99 <= 3x raw)."""

    def setup(self):
        echo = subprocess.Popen([sys.executable, "-c", ECHO], stdout=subprocess.PIPE, text=True)
        try:
            raw = [f"tcp://127.0.0.1:{echo.stdout.readline().strip()}"]
            with LiveRun(10) as run, _connected(raw) as echoes, \
                    _connected(_robots(run.nameserver, 10)) as ends:
                rounds = count(1000, 2)
                _round_trips(ends, rounds // 10 + 1)  # warm-up
                self.p = {q: alternate(lambda: _p(_round_trips(echoes, rounds), q),
                                       lambda: _p(_round_trips(ends, rounds), q)) for q in (50, 99)}
        finally:
            echo.kill()
            echo.wait()

    @unit("x raw")
    def track_p50_ratio(self):
        raw, coopsim = self.p[50]
        return coopsim / raw

    @unit("x raw")
    def track_p99_ratio(self):
        raw, coopsim = self.p[99]
        return coopsim / raw


class Keys(Case):
    """The same motor round trips to two runs of 10 robots, one plain and one with ``--keys``
    (CurveZMQ), blocks alternating: p50 with keys over without."""

    def setup(self):
        from coopsim.net.security import ClientKeys, create_keys

        with tempfile.TemporaryDirectory() as folder:
            create_keys(Path(folder) / "keys")
            keys = ClientKeys.load(Path(folder) / "keys" / "clients" / "client")
            with LiveRun(10) as plain, \
                    LiveRun(10, extra=("--keys", str(Path(folder) / "keys"))) as curve:
                with _connected(_robots(plain.nameserver, 10)) as bare, \
                        _connected(_robots(curve.nameserver, 10, keys), keys.apply) as sealed:
                    rounds = count(1000, 2)
                    self.p50 = alternate(lambda: _p(_round_trips(bare, rounds), 50),
                                         lambda: _p(_round_trips(sealed, rounds), 50))

    @unit("x plain")
    def track_p50_ratio(self):
        return self.p50[1] / self.p50[0]


class Lockstep(Case):
    """One robot in lockstep (``coopsim run``, its own process), one Python client in this one
    looping "read the sonar, set the motors": ms per step (goal: >= 0.5 / (2 raw round trips)
    steps per second), CPU per step of both processes (the client's ``process_time``, the
    run's from /proc: every thread, libzmq's included), so a loaded machine's waits do not
    count, and that CPU over a raw echo's (:data:`ECHO`, its own process, as many round trips a
    step as the loop makes), blocks alternating: what coopsim itself costs a step."""

    trips = 2  #: round trips a step

    def setup(self):
        from coopsim.client import Client

        echo = subprocess.Popen([sys.executable, "-c", ECHO], stdout=subprocess.PIPE, text=True)
        try:
            raw = [f"tcp://127.0.0.1:{echo.stdout.readline().strip()}"]
            with LiveRun(1, mode="lockstep") as run, Client(run.nameserver) as client, \
                    _connected(raw) as echoes:
                bot = client.robot("robot1")
                step, n = self.loop(bot), count(2000)

                def block():
                    t0, c0 = time.perf_counter(), time.process_time()
                    s0 = _cpu_s(run.proc.pid)
                    for _ in range(n):
                        step()
                    cpu = time.process_time() - c0 + _cpu_s(run.proc.pid) - s0
                    return (time.perf_counter() - t0) * 1e3 / n, cpu * 1e6 / n

                def echoed():
                    c0, s0 = time.process_time(), _cpu_s(echo.pid)
                    _round_trips(echoes, n * self.trips)
                    return (time.process_time() - c0 + _cpu_s(echo.pid) - s0) * 1e6 / n
                block()
                _round_trips(echoes, 200)
                blocks, raws = [], []
                for _ in range(count(10, 2)):
                    blocks.append(block())
                    raws.append(echoed())
                bot.detach()
        finally:
            echo.kill()
            echo.wait()
        self.ms = statistics.median(ms for ms, _ in blocks)
        self.cpu_us = statistics.median(us for _, us in blocks)
        self.over_us = statistics.median(us - r for (_, us), r in zip(blocks, raws))

    @staticmethod
    def loop(bot):
        """One step of the loop: two requests."""
        def step():
            bot.sonar.read()
            bot.motors.set_speeds(0.2, 0.2)
        return step

    @unit("ms")
    def track_ms_per_step(self):
        return self.ms

    @unit("us")
    def track_cpu_us_per_step(self):
        return self.cpu_us

    @unit("us")
    def track_cpu_us_over_echo(self):
        return self.over_us


class LockstepExchange(Lockstep):
    """:class:`Lockstep`'s robot and measures, its loop one request a step: protocol 13's
    exchange, ``motors.set_speeds(0.2, 0.2)`` answered after its step with the sonar's reading
    (``bot.exchange``), where :class:`Lockstep` reads, then sets the motors: two."""

    trips = 1

    @staticmethod
    def loop(bot):
        exchange = bot.exchange("motors.set_speeds", ("sonar",))
        return lambda: exchange(0.2, 0.2)


class ColdTick(Case):
    """Where a lockstep loop's step goes: the bare ``Stepper.tick`` of :class:`Lockstep`'s
    one-robot world (pymunk, in this process, no network), CPU of the ticking thread a tick,
    ticked back to back (warm) and each tick after 8 MiB written elsewhere (the caches
    swept, as a wait for the controller leaves them; the sweep's own CPU left out), blocks
    alternating: us warm, us cold, cold over warm."""

    SWEEP = 8 << 20  # bytes: more than this machine's caches

    def setup(self):
        from coopsim.formats.files import load
        from coopsim.sim.simulation import Simulation
        from coopsim.sim.stepper import Stepper

        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "one.scenario"
            path.write_text(live_text(1, "lockstep"))
            stepper = Stepper(Simulation(load(str(path)), seed=1), mode="lockstep")
        stepper.slots.put("robot1", "motors", (0.2, 0.2), attach=False)
        for _ in range(count(500, 5)):
            stepper.tick()
        sweep, n = bytearray(self.SWEEP), count(2000, 5)
        clock = time.thread_time

        def block(cold: bool) -> float:
            spent = 0.0
            for _ in range(n):
                if cold:
                    sweep[::64] = b"\1" * len(sweep[::64])
                t0 = clock()
                stepper.tick()
                spent += clock() - t0
            return spent * 1e6 / n
        self.warm, self.cold = alternate(lambda: block(False), lambda: block(True))

    @unit("us")
    def track_warm_us(self):
        return self.warm

    @unit("us")
    def track_cold_us(self):
        return self.cold

    @unit("x warm")
    def track_cold_over_warm(self):
        return self.cold / self.warm


class Clients(Case):
    """N clients at once (threads of this process, a REQ socket each) asking ``/sim`` for its
    state (command 23) of a run of 100 robots in real time: round trip p99, ms."""

    params = (sizes(50, 200, smoke=2),)
    param_names = ("clients",)

    def setup(self, clients):
        import msgpack
        import zmq

        from coopsim.client import Client

        with LiveRun(count(100, 2)) as run:
            with Client(run.nameserver) as client:
                sim = client.lookup("/sim")
            request, times = msgpack.packb([0, "", 23, [], []]), []

            def one():
                sock = zmq.Context.instance().socket(zmq.REQ)
                sock.setsockopt(zmq.LINGER, 0)
                sock.connect(sim)
                for _ in range(count(50)):
                    t0 = time.perf_counter()
                    sock.send(request)
                    reply = msgpack.unpackb(sock.recv())
                    assert reply[0] == 0, f"/sim state: {reply}"
                    times.append(time.perf_counter() - t0)
                sock.close()
            workers = [threading.Thread(target=one) for _ in range(clients)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        self.p99 = _p(times, 99) * 1e3

    @unit("ms")
    def track_p99_ms(self, clients):
        return self.p99


class Flood(Case):
    """One request of 1,500 frames of 60 kB (90 MB) to ``/sim`` of a run of 10 robots (libzmq
    receives a multipart message whole before any server code runs: docs/reliability.md,
    *Message size*): the simulator process's peak resident memory over its idle one."""

    def setup(self):
        import zmq

        frames, size = (3, 1000) if SMOKE else (1500, 60_000)
        with LiveRun(10) as run:
            from coopsim.client import Client

            with Client(run.nameserver) as client:
                sim = client.lookup("/sim")
            time.sleep(count(2, 0))  # settled (the smoke run only proves the case runs)
            idle, peak, done = _rss_mb(run.proc.pid), [0.0], threading.Event()

            def sample():
                while not done.is_set():
                    peak[0] = max(peak[0], _rss_mb(run.proc.pid))
                    time.sleep(0.005)
            sampler = threading.Thread(target=sample)
            sampler.start()
            sock = zmq.Context.instance().socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(sim)
            sock.send_multipart([b"z" * size] * frames)
            assert sock.poll(120_000), "no reply to the flood"
            sock.close()
            done.set()
            sampler.join()
        self.ratio = peak[0] / idle

    @unit("x idle")
    def track_peak_rss_ratio(self):
        return self.ratio


def _cpu_s(pid: int) -> float:
    """CPU time of process ``pid`` so far (user + system, every thread), s; 0 off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0
