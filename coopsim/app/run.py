"""A run: a scenario loaded, stepped, put on the network, its controllers launched, and watched.

:class:`Run` assembles the parts ``coopsim run`` needs and tears them down in reverse order
whatever happens; :func:`watch` follows it to the end with a progress callback.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .controllers import Controllers, controller_specs
from ..model.errors import SimulationError
from ..model.metrics import format_metrics
from ..formats.files import check_engine, load, scenario_from_world
from ..net.gateway import IDLE_TIMEOUT, Gateway
from ..net.network import Network
from ..net.security import ServerKeys, advertised_host, child_env, require_keys
from ..sim.simulation import Simulation
from ..model.specs import ScenarioSpec, Settings, WorldSpec
from ..sim.stepper import Stats, Stepper

#: The bundled demo, run when ``coopsim run`` is given no file.
DEMO = Path(__file__).resolve().parents[2] / "scenarios" / "demo.scenario"


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
    wait_for: int | None = None  # lockstep: controllers to wait for; None = [SETTINGS] or all
    keys: str | None = None  # keys folder (coopsim keys): every server is a CurveZMQ server
    insecure: bool = False  # allow a bind beyond loopback without keys
    advertise: str | None = None  # host in the endpoints the name server hands out
    json_token: str | None = None  # the JSON gateway's auth token (needed beyond loopback)


def load_scenario_or_world(path: str | Path | None) -> ScenarioSpec:
    """Load a ``.scenario``, or a ``.world`` wrapped as a robot-less scenario, or the demo."""
    spec = load(str(path or DEMO))
    if isinstance(spec, WorldSpec):
        return scenario_from_world(spec)
    return spec


def effective_settings(scenario: ScenarioSpec, options: RunOptions) -> Settings:
    """The scenario's settings with every given option applied on top."""
    s = scenario.settings
    pick = lambda given, default: default if given is None else given  # noqa: E731
    return Settings(dt=pick(options.dt, s.dt), mode=pick(options.mode, s.mode),
                    duration=pick(options.duration, s.duration), seed=pick(options.seed, s.seed),
                    speed=pick(options.speed, s.speed), record=s.record,
                    engine=pick(options.engine, s.engine),
                    wait_for=pick(options.wait_for, s.wait_for))


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
        self.scenario = scenario
        self.options = options
        if options.network:
            require_keys(options.bind, options.keys, options.insecure)
        self.keys = ServerKeys.load(options.keys) if options.keys else None
        self.settings = effective_settings(scenario, options)
        if options.engine is not None:
            check_engine(scenario, options.engine)
        sim = Simulation(scenario, seed=self.settings.seed, dt=self.settings.dt,
                         engine=self.settings.engine)
        self.stepper = Stepper(sim, clock=clock, mode=self.settings.mode,
                               speed=self.settings.speed)
        self.stepper.wait_for = self._wait_for()
        self.network: Network | None = None
        self.controllers: Controllers | None = None
        self.gateway: Gateway | None = None
        self.recorder = None

    def _wait_for(self) -> int:
        """Controllers the first lockstep step waits for: as set, else every controller the
        run launches (so a lockstep run does not race ahead of its own controllers)."""
        if self.settings.wait_for is not None:
            return self.settings.wait_for
        if not (self.options.controllers and self.options.network):
            return 0
        return sum(1 for r in self.stepper.sim.world.robots if r.controller)

    def __enter__(self) -> "Run":
        try:
            self._start_recorder()
            opts = self.options
            if opts.network:
                self.network = Network(self.stepper, opts.bind, opts.port, opts.publish_rate,
                                       recording=self, keys=self.keys,
                                       advertise=advertised_host(opts.bind, opts.advertise)
                                       ).start()
            if opts.json_port is not None and self.network is not None:
                self.gateway = Gateway(self.network.endpoint, opts.bind, opts.json_port,
                                       idle_timeout=opts.json_idle_timeout,
                                       token=opts.json_token,
                                       keys=self.network.local_keys).start()
            if opts.controllers and self.network is not None:
                specs = controller_specs(self.scenario, self.stepper.sim.world.robots)
                self.controllers = Controllers(specs, self.network.endpoint, opts.log_dir,
                                               self.client_env()).start()
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

    def _new_recorder(self, path: str) -> str:
        """Start a recorder on ``path`` ("" = the default name); call on the stepper thread."""
        from ..recording.writer import Recorder, default_path

        sim = self.stepper.sim
        self.recorder = Recorder(path or default_path(sim.scenario), sim.scenario,
                                 self.settings, sim.seed, sim.dt, self.options.record_every)
        self.recorder.attach(self.stepper)
        return str(self.recorder.path)

    @property
    def recording_path(self) -> str:
        """The file being recorded to, or "" when not recording."""
        return str(self.recorder.path) if self.recorder is not None else ""

    def start_recording(self, path: str = "") -> str:
        """Start recording between two steps (no-op when already recording); return the file."""
        if self.recorder is not None:
            return self.recording_path
        # The request may come from any client: never overwrite a file, never write a non-.mcap.
        if path and (not path.endswith(".mcap") or os.path.exists(path)):
            raise SimulationError(f"cannot record to {path!r}: give a new file ending in .mcap")
        return self.stepper.call(self._new_recorder, path).result(10.0)

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
        if self.recorder is not None:  # after the stepper: it writes every queued step
            self.recorder.close()
        if self.controllers is not None:
            self.controllers.stop()
        if self.gateway is not None:  # before the servers it forwards to
            self.gateway.close()
            self.gateway = None
        if self.network is not None:
            self.network.close()
            self.network = None


def watch(stepper: Stepper, report=None, every: float = 0.5) -> Stats:
    """Follow a started stepper, calling ``report(stats)`` every ``every`` s of wall time.

    Returns when the run has finished (duration, or a rule ended it) or the stepper stops, and
    stops the stepper; Ctrl-C stops it too.
    """
    try:
        while not stepper.wait_finished(every):
            if report is not None:
                report(stepper.stats())
        if report is not None:
            report(stepper.stats())
    except KeyboardInterrupt:
        pass
    finally:
        stepper.stop()
    return stepper.stats()


def format_summary(stats: Stats, scenario: ScenarioSpec, robots: int, rules=None) -> str:
    """The closing summary of a headless run, one fact per line, then the monitors' metrics
    (``rules``: the last snapshot's rule fields) when the scenario has any."""
    speed = "max" if stats.speed == 0 else f"{stats.speed:g}x"
    missed = str(stats.missed) + ("" if stats.mode == "realtime" else " (realtime only)")
    rows = [("scenario", scenario.path or scenario.name), ("robots", str(robots)),
            ("mode", f"{stats.mode} (speed {speed})"), ("steps", str(stats.steps)),
            ("sim time", f"{stats.time:.2f} s"), ("wall time", f"{stats.wall:.2f} s"),
            ("real-time factor", f"{stats.rtf:.2f}"), ("deadline misses", missed)]
    if stats.finished:
        rows.append(("ended", stats.finished))
    width = max(len(k) for k, _ in rows)
    metrics = format_metrics(rules or {})
    return "\n".join([f"{k:<{width}}  {v}" for k, v in rows] + ([metrics] if metrics else []))
