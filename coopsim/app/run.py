"""A run: a scenario loaded, stepped, put on the network, its controllers launched, and watched.

:class:`Run` assembles the parts ``coopsim run`` needs and tears them down in reverse order
whatever happens; :func:`watch` follows it to the end with a progress callback.
"""

from __future__ import annotations

import collections
import os
import time
from dataclasses import dataclass
from pathlib import Path

from . import interrupt
from .controllers import Controllers, apply_overrides, controller_specs
from ..model.errors import NotAllowedError, SimulationError
from ..model.metrics import format_metrics
from ..model.plugins import default_engine
from ..formats.enginecheck import check_engine
from ..formats.files import load, scenario_from_world
from ..formats.folders import BUNDLED, DataFolders
from ..model import threads
from ..model.bundled import resolve
from ..net.gateway import IDLE_TIMEOUT, Gateway
from ..net import ports
from ..net.network import Network
from ..net.security import ServerKeys, advertised_host, child_env, require_keys
from ..sim.simulation import Simulation
from ..model.specs import ScenarioSpec, Settings, WorldSpec
from ..sim.stepper import Stats, Stepper
from ..foxglove.bridge import LiveSource

#: The bundled demo, run when ``coopsim run`` is given no file.
DEMO = BUNDLED / "scenarios" / "demo.scenario"
#: Recordings ``/sim record`` may start per minute (each a new file): a client cannot fill the
#: disk with empty recordings.
RECORDINGS_PER_MINUTE = 10
RECORDINGS_FOLDER = "recordings"  # the run's recordings folder, relative to the current one


@dataclass(frozen=True)
class RunOptions:
    """How to run: command-line overrides of ``[SETTINGS]`` (None keeps the file's value) and
    the network set-up."""

    mode: str | None = None
    dt: float | None = None
    duration: float | None = None
    seed: int | None = None
    speed: float | None = None
    port: int = 10000
    bind: str = "127.0.0.1"
    network: bool = True
    controllers: bool = True
    publish_rate: float = 30.0
    log_dir: str | None = None
    json_port: int | None = None  # JSON-lines gateway port (0 = any free port); None = none
    json_idle_timeout: float = IDLE_TIMEOUT  # s an idle gateway connection lives; 0 = never
    record: str | None = None  # recording file; "" = the default name; None = [SETTINGS] record
    record_every: int = 1  # record every N-th step
    engine: str | None = None  # physics engine label; None = [SETTINGS] engine
    data_dirs: tuple[str, ...] = ()  # more folders /sim load and record may use (--data-dir)
    allow_python: bool = False  # /sim load may load files naming Python code (--allow-python)
    wait_for: int | None = None  # lockstep: controllers to wait for; None = [SETTINGS] or all
    threads: int | None = None  # kernel threads; None = [SETTINGS] threads, else every core
    controller: tuple = ()  # --controller: (robot or None, command) pairs; they replace the
    # scenario's controller and driver lines for those robots and are launched in any case
    keys: str | None = None  # keys folder (coopsim keys): every server is a CurveZMQ server
    insecure: bool = False  # allow a bind beyond loopback without keys
    advertise: str | None = None  # host in the endpoints the name server hands out
    json_token: str | None = None  # the JSON gateway's auth token (needed beyond loopback)
    foxglove: int | None = None  # Foxglove WebSocket bridge port (0 = any free port); None = none
    foxglove_rate: float = 20.0  # Hz the bridge publishes at
    ros2: bool = False  # publish the robots as ROS 2 topics over DDS (docs/ros2.md)
    ros2_domain: int = 0  # DDS domain id (ROS_DOMAIN_ID)
    ros2_rate: float = 50.0  # Hz of sim time: odometry, /tf, /clock in realtime mode
    #: "localhost" (DDS on loopback) or "subnet" (ROS 2's default discovery on this machine's
    #: interfaces, which needs ``insecure``: docs/ros2.md, *Discovery*)
    ros2_discovery: str = "localhost"
    ports: tuple[int, int] | None = None  # (low, high): every port bound in it (--ports)
    crtp: bool | None = None  # serve the Crazyflies over CRTP/UDP; None = [SETTINGS] crtp
    crtp_port: int = 19850  # the first Crazyflie's UDP port (docs/crazyflie.md)


def load_scenario_or_world(path: str | Path | None) -> ScenarioSpec:
    """Load a ``.scenario``, or a ``.world`` wrapped as a robot-less scenario, or the demo."""
    spec = load(resolve(str(path)) if path else str(DEMO))
    if isinstance(spec, WorldSpec):
        return scenario_from_world(spec)
    return spec


def effective_settings(scenario: ScenarioSpec, options: RunOptions) -> Settings:
    """The scenario's settings with every given option applied on top (the engine resolved:
    the default engine where neither names one)."""
    s = scenario.settings
    pick = lambda given, default: default if given is None else given  # noqa: E731
    return Settings(dt=pick(options.dt, s.dt), mode=pick(options.mode, s.mode),
                    duration=pick(options.duration, s.duration), seed=pick(options.seed, s.seed),
                    speed=pick(options.speed, s.speed), record=s.record,
                    engine=pick(options.engine, s.engine) or default_engine(),
                    wait_for=pick(options.wait_for, s.wait_for),
                    threads=pick(options.threads, s.threads))


class Run:
    """A live run; use as a context manager.

    Args:
        scenario: What to run.
        options: How to run it.
        clock: Wall clock for the stepper (default: the real one).

    Raises:
        SecurityError: a bind beyond loopback without keys (or --insecure); bad keys.
    """

    def __init__(self, scenario: ScenarioSpec, options: RunOptions = RunOptions(),
                 clock=None) -> None:
        scenario, self.overrides = apply_overrides(scenario, options.controller)
        self.scenario = scenario
        self.options = options
        if options.network:
            require_keys(options.bind, options.keys, options.insecure)
        self.keys = ServerKeys.load(options.keys) if options.keys else None
        self.settings = effective_settings(scenario, options)
        if options.engine is not None or scenario.world.meshes or scenario.world.terrain:
            check_engine(scenario, options.engine)  # scenery needs an engine that builds it
        threads.use(self.settings.threads)  # the process's kernels (coopsim.model.threads)
        sim = Simulation(scenario, seed=self.settings.seed, dt=self.settings.dt,
                         engine=self.settings.engine)
        self.stepper = Stepper(sim, clock=clock, mode=self.settings.mode,
                               speed=self.settings.speed)
        self.stepper.wait_for = self._wait_for()
        self.stepper.start_hold = self._controllers_busy
        self.network: Network | None = None
        self.controllers: Controllers | None = None
        self.gateway: Gateway | None = None
        self.recorder = None
        self.foxglove = None
        self.ros2 = None
        self.crtp = None  # the CRTP server (crtp/server.py)
        self.ros2_control = None  # the ROS 2 run-control node (ros2/services_host.py)
        self.ros2_control_line = ""  # its start-up line (or why there is none)
        #: Where network requests may read (load) and write (record): see DataFolders.
        self.folders = DataFolders.for_run(scenario.path, options.data_dirs, RECORDINGS_FOLDER,
                                            options.allow_python)
        self._record_starts: collections.deque = collections.deque()
        self._start_cpu = 0.0  # launched controllers' CPU time at the last look, s

    def _wait_for(self) -> int:
        """Controllers the first lockstep step waits for: as set, else every controller the
        run launches (so a lockstep run does not race ahead of its own controllers)."""
        if self.settings.wait_for is not None:
            return self.settings.wait_for
        if not self.options.network:
            return 0
        return len(self._controller_specs())

    def forget_dead_controllers(self) -> None:
        """Before the first lockstep step: stop waiting for launched controllers that have
        already ended (one that crashed at its start would hold the run for the whole wait)."""
        ctl = self.controllers
        if ctl is None or self.stepper.snapshot.step > 0 or not self.stepper.wait_for:
            return
        dead = len(ctl.exited()) + len(ctl.failed)
        self.stepper.wait_for = max(0, self._wait_for() - dead)

    def _controllers_busy(self) -> bool:
        """True when the controllers this run launched used CPU time, or waited for a CPU,
        since the last ask (the stepper asks while its first lockstep step waits for them):
        one still busy starting
        (imports, compiling: seconds on a loaded machine) is not late, so the game starts with
        every launched controller whatever the machine does, while one that hangs before
        sending anything is not waited for beyond the start wait."""
        ctl = self.controllers
        if ctl is None:
            return False
        # CPU time used, and time spent waiting for a CPU (a loaded machine keeps a starting
        # controller runnable without running it: busy all the same, not late)
        waits = [ctl.cpu_wait(robot) for robot in ctl.procs]
        cpu = ctl.cpu_seconds() + sum(w[0] for w in waits)
        busy = cpu > self._start_cpu or any(w[1] for w in waits)
        self._start_cpu = max(cpu, self._start_cpu)
        return busy

    def _start_ros2_control(self) -> None:
        from ..ros2.services_host import start_control
        self.ros2_control, self.ros2_control_line = start_control(
            sim_caller(self.network.sim), self.ros2.domain, self.ros2.loopback)
        if self.ros2_control is not None:
            # first: the bridge's own entry stays the last one added (as before the services)
            self.network.sim.more_state.insert(0, self.ros2_control.control.state)

    def _controller_specs(self) -> list:
        return controller_specs(self.scenario, self.stepper.sim.world.robots, self.overrides,
                                from_scenario=self.options.controllers)

    def __enter__(self) -> "Run":
        try:
            self._start_recorder()
            opts = self.options
            self._ports = ports.confined(opts.ports)  # until close: robots inserted later too
            self._ports.__enter__()
            if opts.ros2:  # before /sim answers, so its state has "ros2" from the first answer
                self.ros2 = start_ros2(self.stepper, opts)
            serve_crtp = opts.crtp if opts.crtp is not None else self.scenario.settings.crtp
            if serve_crtp:  # before /sim answers, so its state lists the ports from the first
                from ..crtp.server import CrtpServer
                self.crtp = CrtpServer(self.stepper, opts.bind, opts.crtp_port,
                                       opts.insecure).start()
            if opts.network:
                network = Network(self.stepper, opts.bind, opts.port, opts.publish_rate,
                                  recording=self, keys=self.keys,
                                  advertise=advertised_host(opts.bind, opts.advertise))
                if self.ros2 is not None:
                    network.sim.more_state.append(self.ros2.state)
                if self.crtp is not None:
                    network.sim.more_state.append(self.crtp.state)
                self.network = network.start()
                if self.ros2 is not None:  # pause/resume/reset/step as ROS 2 services
                    self._start_ros2_control()
            if opts.json_port is not None and self.network is not None:
                self.gateway = Gateway(self.network.endpoint, opts.bind, opts.json_port,
                                       idle_timeout=opts.json_idle_timeout,
                                       token=opts.json_token,
                                       keys=self.network.local_keys).start()
            if opts.foxglove is not None:
                self.foxglove = start_bridge(LiveSource(self.stepper), opts.bind,
                                             opts.foxglove, opts.foxglove_rate, opts.insecure)
            specs = self._controller_specs()
            if specs and self.network is not None:
                self.controllers = Controllers(specs, self.network.endpoint, opts.log_dir,
                                               self.client_env(),
                                               seed=self.stepper.sim.seed).start()
                # the lease counts a launched controller's silence net of its CPU waits
                self.stepper.slots.cpu_wait = self.controllers.cpu_wait
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def client_env(self) -> dict[str, str]:
        """The environment of a client this run starts (controllers, its viewer): the run's own
        CurveZMQ keys when it has keys, and no key variables otherwise."""
        guard = self.network.guard if self.network is not None else None
        return child_env(guard.local_env() if guard is not None else None)

    def _start_recorder(self) -> None:
        """Record the run when --record or ``[SETTINGS] record true`` asks for it."""
        if self.options.record is not None or self.settings.record:
            self._new_recorder(self.options.record or "")

    def _new_recorder(self, path: str, exclusive: bool = False) -> str:
        """Start a recorder on ``path`` ("" = the default name); call on the stepper thread."""
        from ..recording.writer import Recorder, default_path

        sim = self.stepper.sim
        self.recorder = Recorder(path or default_path(sim.scenario, RECORDINGS_FOLDER),
                                 sim.scenario, self.settings, sim.seed, sim.dt,
                                 self.options.record_every, exclusive=exclusive)
        self.recorder.attach(self.stepper)
        return str(self.recorder.path)

    @property
    def recording_path(self) -> str:
        """The file being recorded to, or "" when not recording."""
        return str(self.recorder.path) if self.recorder is not None else ""

    @property
    def recording_error(self) -> str:
        """Why the current recording stopped writing ("" when it writes, or none runs)."""
        return self.recorder.error_text if self.recorder is not None else ""

    def start_recording(self, path: str = "") -> str:
        """Start recording between two steps on behalf of a network request; return the file.

        Already recording: the current file. The request may come from any client, so the file
        must be new, end in ``.mcap`` and lie inside the data folders (a relative path is taken
        in the recordings folder), and at most :data:`RECORDINGS_PER_MINUTE` start a minute.
        A recording whose writing failed is closed and replaced.

        Raises:
            NotAllowedError: outside the data folders, or too many starts.
            SimulationError: a bad or existing file, or a missing folder.
            RecordingError: the file cannot be created or started (disk full).
        """
        if self.recorder is not None and self.recorder.error is None:
            return self.recording_path
        target = self.folders.new_recording(path or self._default_name())
        self._count_start()
        if self.recorder is not None:
            self.stop_recording()
        return self.stepper.call(self._new_recorder, str(target), True).result(10.0)

    def _default_name(self) -> str:
        """``<scenario>-<UTC time>.mcap``, with ``-2``, ``-3``... when that file exists."""
        from ..recording.writer import default_path

        stem = default_path(self.stepper.sim.scenario, "").stem
        names = [f"{stem}.mcap"] + [f"{stem}-{n}.mcap" for n in range(2, 100)]
        return next((n for n in names if not os.path.lexists(os.path.join(self.folders.records,
                                                                            n))), names[0])

    def _count_start(self) -> None:
        now = time.monotonic()
        while self._record_starts and now - self._record_starts[0] >= 60.0:
            self._record_starts.popleft()
        if len(self._record_starts) >= RECORDINGS_PER_MINUTE:
            wait = 60.0 - (now - self._record_starts[0])
            raise NotAllowedError(f"{RECORDINGS_PER_MINUTE} recordings were started in the last "
                                  f"minute, the most allowed; try again in {wait:.0f} s")
        self._record_starts.append(now)

    def stop_recording(self) -> str:
        """Stop recording and finish the file; return its path ("" if none was recording)."""
        recorder = self.recorder
        if recorder is None:
            return ""
        self.stepper.call(self._unhook, recorder).result(10.0)
        recorder.close()
        return str(recorder.path)

    def _unhook(self, recorder) -> None:
        if recorder in self.stepper.hooks:
            self.stepper.hooks.remove(recorder)
        self.recorder = None

    def start(self) -> None:
        """Start stepping (until the duration, or until stopped)."""
        self.stepper.start(duration=self.settings.duration)

    def close(self) -> None:
        """Stop stepping, the controllers and the servers."""
        self.stepper.stop()
        self.stepper.sim.close()  # the engine's render process
        if self.recorder is not None:  # after the stepper: it writes every queued step
            self.recorder.close()
        if self.controllers is not None:
            self.controllers.stop()
        # the gateway before the servers it forwards to
        for part in ("foxglove", "ros2_control", "ros2", "crtp", "gateway", "network"):
            if getattr(self, part) is not None:
                getattr(self, part).close()
                setattr(self, part, None)
        if getattr(self, "_ports", None) is not None:
            self._ports.__exit__(None, None, None)
            self._ports = None


def start_bridge(source, bind: str, port: int, rate: float, insecure: bool):
    """The Foxglove bridge on ``bind``:``port``. Foxglove's WebSocket has no authentication, so
    beyond loopback it needs ``--insecure`` like an unkeyed server."""
    from ..foxglove.bridge import Bridge
    from ..net.security import is_loopback

    if not is_loopback(bind) and not insecure:
        raise SimulationError(f"--foxglove serves without authentication: binding {bind} "
                              "needs --insecure (or use an SSH tunnel to 127.0.0.1)")
    return Bridge(source, bind, ports.free_port(bind, port, "the Foxglove bridge"),
                  rate).start()


def sim_caller(sim):
    """``call(name, params) -> reply``: one ``/sim`` command answered by ``sim`` (the run's
    SimServer) in this process, with the server's checks and error codes (the ROS 2
    run-control services' way in: coopsim/ros2/services.py)."""
    from ..net import protocol as p
    from ..net.protocol import Message
    from ..net.server import reply_errors

    ids = {c.name: c.id for c in p.SIM_COMMANDS.values()}

    def call(name: str, params=()):
        command = p.SIM_COMMANDS[ids[name]]
        msg = Message(command=command.id, params=tuple(params))

        def handle():
            command.check(msg)
            return sim.handle(msg, command)
        return reply_errors("/sim", msg, handle)
    return call


def start_ros2(stepper: Stepper, opts: RunOptions):
    """The ROS 2 bridge (docs/ros2.md): DDS on loopback unless ``--bind`` reaches beyond it
    or ``--ros2-discovery subnet`` asks for ROS 2's default discovery, either of which needs
    ``--insecure`` (DDS as coopsim runs it has no authentication)."""
    from ..net.security import is_loopback
    from ..ros2.bridge import RosBridge

    if opts.ros2_discovery not in ("localhost", "subnet"):
        raise SimulationError(f"--ros2-discovery is localhost or subnet, not "
                              f"{opts.ros2_discovery!r}")
    loopback = is_loopback(opts.bind) and opts.ros2_discovery == "localhost"
    if not loopback and not opts.insecure:
        why = (f"binding {opts.bind}" if not is_loopback(opts.bind)
               else "--ros2-discovery subnet (ROS 2's default discovery on this machine's "
                    "networks)")
        raise SimulationError(f"--ros2 publishes without authentication: {why} needs "
                              "--insecure (else DDS stays on 127.0.0.1)")
    return RosBridge(stepper, opts.ros2_domain, loopback, opts.ros2_rate).start()


def watch(stepper: Stepper, report=None, every: float = 0.5) -> Stats:
    """Follow a started stepper, calling ``report(stats)`` about every ``every`` s of wall time.

    Returns when the run has finished (duration, or a rule ended it) or the stepper stops, and
    stops the stepper; a Ctrl-C or SIGTERM stops it too: called inside
    :func:`~coopsim.app.interrupt.polled`, it looks for one every ``interrupt.LOOK`` s.
    """
    per, looks = max(1, round(every / interrupt.LOOK)), 0
    try:
        while not interrupt.requested() and not stepper.wait_finished(interrupt.LOOK):
            looks += 1
            if report is not None and looks % per == 0:
                report(stepper.stats())
        if report is not None:
            report(stepper.stats())
    finally:
        stepper.stop()
    return stepper.stats()


def format_summary(stats: Stats, scenario: ScenarioSpec, robots: int, rules=None,
                   ended: str | None = None, warnings: tuple = (), diverged=None,
                   external: str = "") -> str:
    """The closing summary of a headless run, one fact per line, then the monitors' metrics
    (``rules``: the last snapshot's rule fields) when the scenario has any; ``ended`` replaces
    the end reason (a forfeit added to it); ``warnings``: the engine's (a ``warning`` line
    each); ``diverged`` (the last snapshot's ``extra["diverged"]``, robot ->
    :class:`~coopsim.sim.health.Mark`) adds a line naming the robots the run contained;
    ``external`` (``ExternalRobots.summary``) a line on the external robots' streams."""
    speed = "max" if stats.speed == 0 else f"{stats.speed:g}x"
    missed = str(stats.missed) + ("" if stats.mode == "realtime" else " (realtime only)")
    rows = [("scenario", scenario.path or scenario.name), ("robots", str(robots)),
            ("mode", f"{stats.mode} (speed {speed})"), ("steps", str(stats.steps)),
            ("sim time", f"{stats.time:.2f} s"), ("wall time", f"{stats.wall:.2f} s"),
            ("real-time factor", f"{stats.rtf:.2f}"), ("deadline misses", missed)]
    if ended or stats.finished:
        rows.append(("ended", ended or stats.finished))
    rows += [("warning", note) for note in warnings]
    if diverged:
        rows.append(("diverged", diverged_line(diverged)))
    if external:
        rows.append(("external", external))
    width = max(len(k) for k, _ in rows)
    metrics = format_metrics(rules or {})
    return "\n".join([f"{k:<{width}}  {v}" for k, v in rows] + ([metrics] if metrics else []))


def diverged_line(marks, shown: int = 5) -> str:
    """The summary's ``diverged`` value: how many robots the run contained, and the first
    ``shown`` of them with their count, first time and latest reason."""
    items = sorted(marks.items(), key=lambda item: (item[1].first, item[0]))
    words = [f"{name} ({m.count} step{'' if m.count == 1 else 's'}, first at t = {m.first:.3f}"
             f" s; {m.why})" for name, m in items[:shown]]
    more = f"; and {len(items) - shown} more" if len(items) > shown else ""
    return f"{len(items)} robot{'' if len(items) == 1 else 's'} put back: " \
        + "; ".join(words) + more
