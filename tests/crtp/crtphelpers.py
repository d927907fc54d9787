"""Live runs serving their Crazyflies over CRTP, for tests that fly them with cflib itself."""

from __future__ import annotations

import contextlib
import random
import socket
from pathlib import Path

import pytest

cflib = pytest.importorskip("cflib")
import cflib.crtp  # noqa: E402

import nethelpers  # noqa: E402
from coopsim.app.run import Run, RunOptions  # noqa: E402
from coopsim.formats.files import load  # noqa: E402

WAIT = 60.0  # s; generous: a condition not met in this long is a failure, not a slow machine
HEADER = """[WORLD]
file {world}

{robots}
[SETTINGS]
engine aerial
dt 0.002
mode realtime
seed 1
"""
WORLD = Path(__file__).resolve().parents[2] / "worlds" / "flight.world"

cflib.crtp.init_drivers()


def free_ports(n: int) -> int:
    """A base port with ``n`` free UDP ports from it on 127.0.0.1."""
    for _ in range(200):
        base = random.randrange(20000, 60000)
        held = []
        try:
            for k in range(n):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                held.append(s)
                s.bind(("127.0.0.1", base + k))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError("no free UDP ports")


def scenario_file(tmp_path: Path, n: int = 1, ground: bool = False) -> Path:
    """A scenario of ``n`` Crazyflies 0.6 m apart on the floor (and a ground robot)."""
    robots = ""
    for i in range(n):
        robots += (f"[ROBOT_{i + 1}]\ntype crazyflie\nname cf{i + 1}\n"
                   f"position {0.6 * (i % 4) - 0.9:.2f} {0.6 * (i // 4) - 0.6:.2f} 0\n\n")
    if ground:
        robots += f"[ROBOT_{n + 1}]\ntype single\nname rover\nposition -2 -2 0\n\n"
    path = tmp_path / "crtp.scenario"
    path.write_text(HEADER.format(world=WORLD, robots=robots))
    return path


@contextlib.contextmanager
def crtp_run(tmp_path: Path, n: int = 1, ground: bool = False, **options):
    """A started in-process Run serving ``n`` Crazyflies over CRTP; yields (run, uris)."""
    base = free_ports(n)
    opts = {"port": 0, "controllers": False, "crtp": True, "crtp_port": base, **options}
    with Run(load(str(scenario_file(tmp_path, n, ground))), RunOptions(**opts)) as run:
        run.start()
        yield run, [f"udp://127.0.0.1:{base + i}" for i in range(n)]


def wait_until(predicate, timeout: float = WAIT, every: float = 0.01):
    """nethelpers' wait, with the flights' longer bound."""
    return nethelpers.wait_until(predicate, timeout, every)


def sim_wait(run, seconds: float) -> float:
    """Wait until ``seconds`` of sim time have passed; returns the sim time then."""
    goal = run.stepper.snapshot.time + seconds
    wait_until(lambda: run.stepper.snapshot.time >= goal, timeout=WAIT + 20 * seconds)
    return run.stepper.snapshot.time


def truth(run, name: str):
    """The robot's true (x, y, z) now."""
    snap = run.stepper.snapshot
    return snap.pose3d[snap.index[name], 0:3].copy()
