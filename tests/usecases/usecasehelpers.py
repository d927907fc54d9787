"""What the use-case tests share: the showcase scenarios, running them in-process or through the
``coopsim`` command, and the network controllers that host the showcase drivers."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

from coopsim.formats.files import load
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

ROOT = Path(__file__).resolve().parents[2]
TRANSPORT = ROOT / "scenarios" / "transport.scenario"
FORMATION = ROOT / "scenarios" / "formation.scenario"
EXERCISES = ROOT / "exercises"
HERE = Path(__file__).resolve().parent
#: The showcases cut short for the tests (same arenas and drivers, ~15 s of sim time): the
#: transport teams start on their last stretch and are graded; the triangle starts before the gate.
TRANSPORT_SHORT = HERE / "data" / "transport_short.scenario"
FORMATION_SHORT = HERE / "data" / "formation_short.scenario"
PY = ROOT / "clients" / "python"

#: --controller options that drive the showcases over the network with the clients/python
#: scripts, the same parameters as the scenarios' driver lines.
NETWORK = {
    "transport": (
        f"team1_leader=python {PY / 'transport_leader.py'} --color magenta --speed 0.32",
        f"team1_helper=python {PY / 'transport_helper.py'}",
        f"team2_leader=python {PY / 'transport_leader.py'} --color cyan --speed 0.24",
        f"team2_helper=python {PY / 'transport_helper.py'}"),
    "formation": (
        f"lead=python {PY / 'formation.py'} --role lead --color red",
        f"left=python {PY / 'formation.py'} --role left --leader lead",
        f"right=python {PY / 'formation.py'} --role right --leader lead"),
}


def stepper(path: Path, **settings) -> Stepper:
    """A lockstep stepper of the scenario at ``path`` (settings replaced as given)."""
    spec = load(str(path))
    if settings:
        spec = dataclasses.replace(spec, settings=dataclasses.replace(spec.settings, **settings))
    return Stepper(Simulation(spec), mode="lockstep")


def run_to_end(step: Stepper, timeout: float = 120.0):
    """Start ``step`` for its scenario's duration and wait for it to finish; return the last
    snapshot and the end reason."""
    step.start(duration=step.sim.scenario.settings.duration)
    try:
        assert step.wait_finished(timeout), "the run did not finish in time"
        return step.snapshot, step.finished
    finally:
        step.stop()


def coopsim(*args, timeout: float = 240.0, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Run the ``coopsim`` command (headless, a free port) and return the finished process."""
    argv = [sys.executable, "-m", "coopsim", *map(str, args)]
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def controllers(name: str) -> list[str]:
    """``--controller X`` arguments that drive showcase ``name`` over the network."""
    return [a for c in NETWORK[name] for a in ("--controller", c)]
