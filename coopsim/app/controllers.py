"""Controllers the scenario launches: ``controller <command>`` in a ``[ROBOT_n]`` section.

Each command runs as a child process in the scenario file's folder, with the environment variables
``COOPSIM_NAMESERVER`` (the name server endpoint), ``COOPSIM_ROBOT`` (the robot's network name)
and ``COOPSIM_SIM_PID`` (the simulator's process id, so a controller can tell when it is gone),
and with a run's CurveZMQ keys ``COOPSIM_SERVER_KEY`` and ``COOPSIM_CLIENT_KEY``.
A command starting with ``python`` or ``python3`` runs under the interpreter running coopsim, so
a virtual environment's packages are there. Children are stopped (SIGTERM, then SIGKILL after
2 s) when the run ends; one that exits early is logged and the run goes on.

Each controller runs in its own process group (its own session), so stopping it stops whatever it
started too, and a terminal's Ctrl-C reaches only the simulator, which stops them in order. A
watchdog process (:mod:`coopsim.app.watchdog`) holds the read end of a pipe from the run: when
the run dies in any way, SIGKILL included, the pipe ends and the watchdog stops every controller
still running, so none outlives its simulator.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..model.errors import SimulationError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ControllerSpec:
    """One controller to launch: which robot, what command, from which folder."""

    robot: str
    command: str
    cwd: str


def controller_argv(command: str) -> list[str]:
    """Split a command line; a leading ``python``/``python3`` becomes this interpreter."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise SimulationError(f"controller command {command!r} cannot be split: {exc}") from None
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


class Controllers:
    """The child processes of one run.

    Args:
        specs: What to launch.
        nameserver: Endpoint given to the children.
        log_dir: Where each child's output goes (``<robot>.log``); None discards it.
        env: The children's base environment (default: this process's), e.g. with the run's
            CurveZMQ key variables.
    """

    def __init__(self, specs: list[ControllerSpec], nameserver: str,
                 log_dir: str | None = None, env: dict[str, str] | None = None) -> None:
        self.specs = specs
        self.nameserver = nameserver
        self.log_dir = log_dir
        self.env = env
        self.procs: dict[str, subprocess.Popen] = {}
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
            out = subprocess.DEVNULL
            if self.log_dir:
                Path(self.log_dir).mkdir(parents=True, exist_ok=True)
                out = open(Path(self.log_dir) / f"{spec.robot}.log", "wb")  # noqa: SIM115
            try:
                proc = subprocess.Popen(
                    controller_argv(spec.command), cwd=spec.cwd, env=env, stdout=out,
                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
                self.procs[spec.robot] = proc
                self._tell(f"+{proc.pid}")
            except OSError as exc:
                log.warning("controller for %s did not start: %s", spec.robot, exc)
            finally:
                if out is not subprocess.DEVNULL:
                    out.close()
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
        return {r: p.returncode for r, p in self.procs.items() if p.poll() is not None}

    def stop(self, grace: float = 2.0) -> None:
        """Terminate every child's process group; kill those that do not end within ``grace``;
        then let the watchdog go."""
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


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Signal the process group a controller leads (it and what it started)."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone


def controller_specs(scenario, robots) -> list[ControllerSpec]:
    """One spec per robot whose scenario section names a controller.

    Args:
        scenario: The ScenarioSpec (its path gives the working folder).
        robots: The world's robots (team members each get the team section's command).
    """
    cwd = str(Path(scenario.path).resolve().parent) if scenario.path else os.getcwd()
    return [ControllerSpec(r.name, r.controller, cwd) for r in robots if r.controller]
