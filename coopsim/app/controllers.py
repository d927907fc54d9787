"""Controllers the scenario launches: ``controller <command>`` in a ``[ROBOT_n]`` section.

Each command runs as a child process in the scenario file's folder, with the environment variables
``COOPSIM_NAMESERVER`` (the name server endpoint), ``COOPSIM_ROBOT`` (the robot's network name),
``COOPSIM_SIM_PID`` (the simulator's process id, so a controller can tell when it is gone),
``COOPSIM_SEED`` (the run's seed) and ``COOPSIM_ROBOT_SEED`` (its robot's own random stream,
:func:`~coopsim.model.driver.robot_seed`: same scenario and seed, same controllers' choices),
and with a run's CurveZMQ keys ``COOPSIM_SERVER_KEY`` and ``COOPSIM_CLIENT_KEY``; Python's output is
unbuffered (``PYTHONUNBUFFERED=1`` unless set), so a controller's log holds every line it printed
even when the run's end stops it.
A command starting with ``python`` or ``python3`` runs under the interpreter running coopsim, so
a virtual environment's packages are there. Children are stopped (SIGTERM, then SIGKILL after
2 s) when the run ends; one that exits early is logged and the run goes on.

Each controller runs in its own process group (its own session), so stopping it stops whatever it
started too, and a terminal's Ctrl-C reaches only the simulator, which stops them in order. A
watchdog process (:mod:`coopsim.app.watchdog`) holds the read end of a pipe from the run: when
the run dies in any way, SIGKILL included, the pipe ends and the watchdog stops every controller
still running, so none outlives its simulator.

``coopsim run --controller [ROBOT=]COMMAND`` gives a robot a controller from the command line
(:func:`parse_override`, :func:`apply_overrides`): it replaces the scenario's ``controller`` and
``driver`` lines for that robot and runs in the current folder. The last lines each one printed
are kept (:meth:`Controllers.tail`) to say why one failed.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..model.driver import ROBOT_SEED_VARIABLE, SEED_VARIABLE, robot_seed
from ..model.errors import CoopsimError, SimulationError
from ..model.plugins import ROBOT_TYPES
from ..model.specs import ScenarioSpec
from ..sim.cpuwait import group_wait

TAIL_LINES = 12  # lines of a controller's output kept to show why it failed
# s at most the verdict waits for a controller that let go of its robot to exit (a hang guard:
# one leaving its loop on an exception detaches first and exits a moment later)
SETTLE_GUARD = 10.0

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ControllerSpec:
    """One controller to launch: which robot, what command, from which folder."""

    robot: str
    command: str
    cwd: str


def controller_argv(command: str) -> list[str]:
    """Split a command line; a leading ``python``/``python3`` becomes this interpreter, and a
    leading ``*.py`` file runs under it."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise SimulationError(f"controller command {command!r} cannot be split: {exc}") from None
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    elif argv and argv[0].endswith(".py"):
        argv.insert(0, sys.executable)
    return argv


class Controllers:
    """The child processes of one run.

    Args:
        specs: What to launch.
        nameserver: Endpoint given to the children.
        log_dir: Where each child's output goes (``<robot>.log``); None discards it.
        env: The children's base environment (default: this process's), e.g. with the run's
            CurveZMQ key variables.
        seed: The run's seed (each child gets it and its robot's stream); None: none given.
    """

    def __init__(self, specs: list[ControllerSpec], nameserver: str,
                 log_dir: str | None = None, env: dict[str, str] | None = None,
                 seed: int | None = None) -> None:
        self.specs = specs
        self.seed = seed
        self.nameserver = nameserver
        self.log_dir = log_dir
        self.env = env
        self.procs: dict[str, subprocess.Popen] = {}
        self.failed: dict[str, str] = {}  # robot -> why its controller did not start
        self._tails: dict[str, collections.deque] = {}
        self._drains: dict[str, threading.Thread] = {}
        self._ended: dict[str, float] = {}  # robot -> wall time its controller was seen ended
        self.started = time.monotonic()
        self.watchdog: subprocess.Popen | None = None

    def start(self) -> "Controllers":
        """Start the watchdog, then launch every controller in its own process group."""
        if self.specs:
            self.watchdog = subprocess.Popen(
                [sys.executable, "-m", "coopsim.app.watchdog", str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True)
        for spec in self.specs:
            env = dict(os.environ if self.env is None else self.env,
                       COOPSIM_NAMESERVER=self.nameserver, COOPSIM_ROBOT=spec.robot,
                       COOPSIM_SIM_PID=str(os.getpid()))
            if self.seed is not None:
                env[SEED_VARIABLE] = str(self.seed)
                env[ROBOT_SEED_VARIABLE] = str(robot_seed(self.seed, spec.robot))
            # a Python controller's lines reach its log as printed: buffered, what it printed
            # last was lost when the run's end stopped it (SIGTERM) before it exited by itself
            env.setdefault("PYTHONUNBUFFERED", "1")
            out = subprocess.PIPE
            if self.log_dir:
                Path(self.log_dir).mkdir(parents=True, exist_ok=True)
                out = open(Path(self.log_dir) / f"{spec.robot}.log", "wb")  # noqa: SIM115
            try:
                proc = subprocess.Popen(
                    controller_argv(spec.command), cwd=spec.cwd, env=env, stdout=out,
                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
            except (OSError, SimulationError) as exc:
                log.warning("controller for %s did not start: %s", spec.robot, exc)
                self.failed[spec.robot] = f"did not start: {exc}"
                continue
            finally:
                if out is not subprocess.PIPE:
                    out.close()
            self.procs[spec.robot] = proc
            self._tell(f"+{proc.pid}")
            if out is subprocess.PIPE:  # keep the last lines, in memory, however much it prints
                tail = self._tails[spec.robot] = collections.deque(maxlen=TAIL_LINES)
                drain = self._drains[spec.robot] = threading.Thread(
                    target=self._drain, args=(spec.robot, proc.stdout, tail), daemon=True,
                    name=f"controller-{spec.robot}")
                drain.start()
        return self

    def _tell(self, line: str) -> None:
        """One line to the watchdog (a group to watch, or one stopped)."""
        if self.watchdog is None or self.watchdog.stdin is None:
            return
        try:
            self.watchdog.stdin.write(f"{line}\n".encode())
            self.watchdog.stdin.flush()
        except (BrokenPipeError, ValueError):  # the watchdog is gone: nothing to tell
            pass

    def exited(self) -> dict[str, int]:
        """Robots whose controller has ended, with its exit code."""
        now = time.monotonic()
        done = {r: p.returncode for r, p in self.procs.items() if p.poll() is not None}
        for robot in done:
            self._ended.setdefault(robot, now - self.started)
        return done

    def settle(self, robots, guard: float = SETTLE_GUARD) -> None:
        """Wait for the controllers of ``robots`` (those that let go of their robot) to end,
        so that a crash's exit code is seen before the verdict is said.

        Args:
            robots: Robot names; those without a launched controller are skipped.
            guard: Seconds at most for each (a hang guard: a controller that let go and goes
                on running is left running and is stopped with the others).
        """
        for robot in sorted(robots):
            proc = self.procs.get(robot)
            if proc is None or proc.poll() is not None:
                continue
            try:
                proc.wait(guard)
            except subprocess.TimeoutExpired:
                continue
        self.exited()

    def cpu_seconds(self) -> float:
        """CPU time (user + system, s) the running controllers have used so far, each with
        every process of its process group (a controller may run under a watchdog or a shell):
        grows while they are busy starting (imports, compiling) even before they send
        anything. 0 where there is no /proc."""
        groups = {proc.pid for proc in self.procs.values() if proc.returncode is None}
        if not groups:
            return 0.0
        total = 0.0
        try:
            entries = [e for e in os.listdir("/proc") if e.isdigit()]
        except OSError:
            return 0.0
        for entry in entries:
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
                if int(fields[2]) in groups:  # its process group
                    total += (int(fields[11]) + int(fields[12])) / _TICKS
            except (OSError, IndexError, ValueError):
                pass  # ended meanwhile: counts nothing
        return total

    def cpu_wait(self, robot: str) -> tuple[float, bool, float]:
        """(s ``robot``'s controller, every thread of its process group, has waited for a CPU
        so far; whether one is runnable now; s it has run on a CPU): what the lockstep
        lease needs to count its silence net of a loaded machine's doing
        (coopsim/sim/slots.py); (0, False, 0) for a robot without a running launched
        controller."""
        proc = self.procs.get(robot)
        if proc is None or proc.returncode is not None:
            return 0.0, False, 0.0
        return group_wait(proc.pid)

    def _drain(self, robot: str, stream, tail: collections.deque) -> None:
        """Read a controller's output to its end (it has exited then, or closed its output),
        keeping the last lines and when it ended."""
        with stream:
            for line in stream:
                tail.append(line.decode("utf-8", "replace").rstrip("\r\n"))
        self._ended.setdefault(robot, time.monotonic() - self.started)

    def ended_after(self, robot: str) -> float | None:
        """Wall time (s from the launch) at which ``robot``'s controller ended (seen ended, when
        its output goes to a log file)."""
        self.exited()
        return self._ended.get(robot)

    def tail(self, robot: str) -> list[str]:
        """The last lines ``robot``'s controller printed (from its log file with
        ``log_dir``)."""
        if self.log_dir:
            path = Path(self.log_dir) / f"{robot}.log"
            try:
                with open(path, "rb") as f:
                    f.seek(max(0, path.stat().st_size - 4096))
                    text = f.read().decode("utf-8", "replace")
            except OSError:
                return []
            return text.splitlines()[-TAIL_LINES:]
        drain = self._drains.get(robot)
        if drain is not None and robot in self.exited():
            drain.join(1.0)  # it has ended: let its last lines arrive
        return list(self._tails.get(robot, ()))

    def stop(self, grace: float = 2.0) -> None:
        """Terminate every child's process group; kill those that do not end within ``grace``;
        then let the watchdog go."""
        self.exited()  # note when the ones already gone ended
        for proc in self.procs.values():
            _signal_group(proc, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
            _signal_group(proc, signal.SIGKILL)  # what the controller started and left behind
            self._tell(f"-{proc.pid}")
        if self.watchdog is not None:
            try:
                self.watchdog.stdin.close()
            except BrokenPipeError:
                pass
            try:
                self.watchdog.wait(grace + 3.0)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()
                self.watchdog.wait()
            self.watchdog = None


try:
    _TICKS = os.sysconf("SC_CLK_TCK")  # /proc/PID/stat counts CPU time in these
except (ValueError, OSError, AttributeError):
    _TICKS = 100


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Signal the process group a controller leads (it and what it started)."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone


def controller_specs(scenario, robots, overrides: dict | None = None,
                     from_scenario: bool = True) -> list[ControllerSpec]:
    """One spec per robot whose scenario section names a controller, or given one on the
    command line.

    Args:
        scenario: The ScenarioSpec (its path gives the working folder).
        robots: The world's robots (team members each get the team section's command).
        overrides: Robot name -> ControllerSpec from ``--controller`` (they win).
        from_scenario: Launch the scenario's own ``controller`` lines too.
    """
    overrides = overrides or {}
    cwd = str(Path(scenario.path).resolve().parent) if scenario.path else os.getcwd()
    return [overrides[r.name] if r.name in overrides else ControllerSpec(r.name, r.controller,
                                                                         cwd)
            for r in robots if r.name in overrides or (from_scenario and r.controller)]


_OVERRIDE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)=(.*)", re.S)


def parse_override(text: str) -> tuple[str | None, str]:
    """``--controller`` text -> (robot or None for the first robot section, command).

    ``ROBOT=COMMAND`` names the robot (``team1_leader='python lead.py'``); anything else is a
    command for the scenario's first robot section (``'python my.py'``, ``my.py``).
    """
    match = _OVERRIDE.fullmatch(text.strip())
    robot, command = (match.group(1), match.group(2)) if match else (None, text)
    if not command.strip():
        raise CoopsimError(f"--controller {text!r}: the command is empty (give "
                           f"[ROBOT=]COMMAND, e.g. 'python my.py' or robot1='python my.py')")
    return robot, command.strip()


def apply_overrides(scenario: ScenarioSpec, given, cwd: str | None = None
                    ) -> tuple[ScenarioSpec, dict[str, ControllerSpec]]:
    """Give robots the ``--controller`` commands: the scenario without the ``driver`` lines
    (and, for a whole section, the ``controller`` line) of those robots, and robot name ->
    the ControllerSpec to launch, run in ``cwd`` (default: the current folder).

    Args:
        scenario: As loaded.
        given: (robot or None, command) pairs from :func:`parse_override`; the robot is a
            section's name (every robot it makes) or one member's network name.

    Raises:
        CoopsimError: no robot of that name, or a scenario without robots.
    """
    cwd = cwd or os.getcwd()
    members = {s.name: ROBOT_TYPES.get(s.type).member_names(s.name) for s in scenario.robots}
    chosen: dict[str, ControllerSpec] = {}
    whole: set[str] = set()
    for robot, command in given:
        if robot is None:
            if not scenario.robots:
                raise CoopsimError("--controller: the scenario has no robot to drive")
            robot = scenario.robots[0].name
        names = members.get(robot) or next(([robot] for m in members.values() if robot in m),
                                           None)
        if names is None:
            known = sorted({*members, *(n for m in members.values() for n in m)})
            raise CoopsimError(f"--controller: no robot {robot!r} in the scenario (robots: "
                               f"{', '.join(known)})")
        if robot in members:
            whole.add(robot)
        for name in names:
            chosen[name] = ControllerSpec(name, command, cwd)
    sections = tuple(_without(s, members[s.name], chosen, s.name in whole)
                     for s in scenario.robots)
    return dataclasses.replace(scenario, robots=sections), chosen


def _without(section, names, chosen: dict, whole: bool):
    """``section`` without the drivers of its robots in ``chosen`` (a driver meant for every
    member is kept for the others, each by name), and without its controller if ``whole``."""
    if not any(n in chosen for n in names):
        return section
    drivers = []
    for d in section.drivers:
        for name in names:
            if name not in chosen and d.member in ("", name, name[len(section.name) + 1:]):
                drivers.append(dataclasses.replace(d, member=name) if d.member == "" else d)
    return dataclasses.replace(section, drivers=tuple(dict.fromkeys(drivers)),
                               controller=None if whole else section.controller)
