"""Controllers the scenario launches: ``controller <command>`` in a ``[ROBOT_n]`` section.

Each command runs as a child process in the scenario file's folder, with the environment variables
``COOPSIM_NAMESERVER`` (the name server endpoint) and ``COOPSIM_ROBOT`` (the robot's network name),
and with a run's CurveZMQ keys ``COOPSIM_SERVER_KEY`` and ``COOPSIM_CLIENT_KEY``. A command starting with ``python`` or ``python3`` runs under the interpreter running coopsim, so
a virtual environment's packages are there. Children are stopped (SIGTERM, then SIGKILL after
2 s) when the run ends; one that exits early is logged and the run goes on.
"""

from __future__ import annotations

import logging
import os
import shlex
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

    def start(self) -> "Controllers":
        """Launch every controller."""
        for spec in self.specs:
            env = dict(os.environ if self.env is None else self.env,
                       COOPSIM_NAMESERVER=self.nameserver, COOPSIM_ROBOT=spec.robot)
            out = subprocess.DEVNULL
            if self.log_dir:
                Path(self.log_dir).mkdir(parents=True, exist_ok=True)
                out = open(Path(self.log_dir) / f"{spec.robot}.log", "wb")  # noqa: SIM115
            try:
                self.procs[spec.robot] = subprocess.Popen(
                    controller_argv(spec.command), cwd=spec.cwd, env=env, stdout=out,
                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            except OSError as exc:
                log.warning("controller for %s did not start: %s", spec.robot, exc)
            finally:
                if out is not subprocess.DEVNULL:
                    out.close()
        return self

    def exited(self) -> dict[str, int]:
        """Robots whose controller has ended, with its exit code."""
        return {r: p.returncode for r, p in self.procs.items() if p.poll() is not None}

    def stop(self, grace: float = 2.0) -> None:
        """Terminate every child still running; kill those that do not end within ``grace``."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def controller_specs(scenario, robots) -> list[ControllerSpec]:
    """One spec per robot whose scenario section names a controller.

    Args:
        scenario: The ScenarioSpec (its path gives the working folder).
        robots: The world's robots (team members each get the team section's command).
    """
    cwd = str(Path(scenario.path).resolve().parent) if scenario.path else os.getcwd()
    return [ControllerSpec(r.name, r.controller, cwd) for r in robots if r.controller]
