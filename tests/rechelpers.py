"""Helpers of the recording tests: record a real stepper to a real MCAP file, and follow a
``coopsim`` child process until it prints its name server."""

from __future__ import annotations

import codecs
import os
import re
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

from coopsim.recording.writer import Recorder
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario, target

RECDATA = Path(__file__).resolve().parent / "data" / "recording"
START_WAIT = 20.0  # s for a child process to print its name server (a failure, not slowness)


def small_scenario(robots: int = 3, dt: float = 0.02):
    """Robots in a row on a 10 x 10 m floor, a movable box and a static one, a red target."""
    bots = [robot(f"r{i}", x=-3.0 + 1.5 * i, y=-2.0, yaw=0.3 * i) for i in range(robots)]
    return scenario(bots, objects=[box("crate", 0.0, 2.0, (0.4, 0.4), mass=1.0),
                                   box("wall", 3.0, 3.0)],
                    targets=[target("red", 2.0, -3.0)], dt=dt)


def record(path: Path, steps: int, spec=None, every: int = 1, keyframe_every: int = 100,
           events: dict[int, Callable] | None = None, queue_size: int | None = None,
           seed: int = 3, drive: bool = True):
    """Step a simulation ``steps`` times with a recorder attached and random wheel speeds.

    Args:
        events: Step number -> fn(stepper), called between steps (insertions, resets...).
        drive: Send the random wheel speeds (False: robots without motors, left alone).

    Returns:
        (the Recorder after close, every snapshot from the initial one on).
    """
    spec = spec or small_scenario()
    stepper = Stepper(Simulation(spec), mode="lockstep", speed=0)
    rec = Recorder(path, spec, spec.settings, stepper.sim.seed, stepper.sim.dt, every=every,
                   keyframe_every=keyframe_every, queue_size=queue_size).attach(stepper)
    rng = np.random.default_rng(seed)
    truth = [stepper.snapshot]
    for k in range(steps):
        if events and k in events:
            events[k](stepper)
            stepper.sim.relayout()
        if drive and k % 20 == 0:
            for name in stepper.snapshot.robots:
                stepper.slots.put(name, "motors", tuple(rng.uniform(-0.3, 0.6, 2)), attach=False)
        truth.append(stepper.tick())
    rec.close()
    return rec, truth


def coopsim(*args: str) -> list[str]:
    """The command line of ``coopsim ARGS`` run by this interpreter."""
    return [sys.executable, "-m", "coopsim", *args]


def run_cli(*args: str, cwd=None, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """Run ``coopsim ARGS`` to its end; text output captured."""
    return subprocess.run(coopsim(*args), capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, "DISPLAY": ""})


def start_cli(*args: str, cwd=None) -> subprocess.Popen:
    """Start ``coopsim ARGS`` in the background, stderr piped."""
    return subprocess.Popen(coopsim(*args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, cwd=cwd,
                            env={**os.environ, "DISPLAY": ""})


def read_until(proc: subprocess.Popen, pattern: str, wait: float) -> list[str]:
    """The child's stderr lines up to the first matching ``pattern`` and whatever came with it
    (the last item: the rest of the read, maybe a part line; its stderr pipe then holds what
    follows). The pipe is read here, not through ``proc.stderr``'s buffer, whose lines a wait
    on the pipe would miss (two lines in one read: the second waited for in vain).

    Raises:
        AssertionError: no line matched within ``wait`` s, or the child closed its stderr
            first (what it printed).
    """
    decode = codecs.getincrementaldecoder("utf-8")(errors="replace")
    fd, deadline, lines, part = proc.stderr.fileno(), time.monotonic() + wait, [], ""
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    try:
        while time.monotonic() < deadline and selector.select(deadline - time.monotonic()):
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            *full, part = (part + decode.decode(chunk)).split("\n")
            for k, line in enumerate(full):
                lines.append(line + "\n")
                if re.search(pattern, line):
                    return lines + [rest + "\n" for rest in full[k + 1:]] + [part]
    finally:
        selector.close()
    seen = "".join(lines) + part
    raise AssertionError(f"no line matching {pattern!r} from {proc.args}: {seen[-2000:]}")


def wait_endpoint(proc: subprocess.Popen, wait: float = START_WAIT) -> str:
    """Read the child's stderr until it prints ``name server: tcp://...``; return the endpoint."""
    seen = read_until(proc, r"name server: tcp://\S+", wait)
    return next(m.group(1) for m in map(re.compile(r"name server: (tcp://\S+)").search, seen)
                if m)


def stop(proc: subprocess.Popen) -> None:
    """End a child process started by a test (SIGTERM, then SIGKILL)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    if proc.stderr is not None:
        proc.stderr.close()


def motors_only_type(label: str = "bare_rec_test") -> str:
    """Register (once) a robot type with motors and no sensors, for recordings that mask the
    columns of modules a robot lacks; return its label."""
    from coopsim.model.plugins import ROBOT_TYPES
    from coopsim.model.robot_type import Assembly, BodySpec, MemberSpec, RobotType, ShapeSpec

    class Bare(RobotType):
        modules = ("motors",)

        @classmethod
        def build(cls, spec):
            body = BodySpec("c", "dynamic", 5.0, (ShapeSpec("circle", radius=0.2),),
                            spec.position[:2], spec.yaw)
            return Assembly((MemberSpec(spec.name, "c", cls.modules, 0.2, 0.3, "differential",
                                        100.0, 20.0),), (body,))

    Bare.label = label
    if label not in ROBOT_TYPES:
        ROBOT_TYPES.register(label)(Bare)
    return label
