"""The squad crossings of test_squad_crossing*.py (four files:
the runs are long lockstep runs, and ``--dist loadfile`` runs a file on one worker whole):
the probe's scenario with n robots, the order on the board, the run until arrival."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

from coopsim.formats.files import load
from coopsim.model.orders import SquadOrder
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper
from coopsim.swarm import game
from coopsim.swarm.formations import Formation, shape_error

SCENARIO = Path(__file__).resolve().parent / "data" / "ctf_squad.scenario"
GOAL = (5.0, 0.0)
LIMIT = 250.0  # s of simulated time: the slowest case (8 in a line) arrives in about 190


def squad_of(n: int):
    """The probe's scenario with n robots (1 m apart as the file's six, 0.9 m for others)."""
    spec = load(SCENARIO)
    if n == 6:
        return spec
    first = spec.robots[0]
    robots = tuple(replace(first, name=f"s{k + 1}",
                           position=(-8.0, -(n - 1) * 0.45 + 0.9 * k, 0.0)) for k in range(n))
    squads = (replace(spec.squads[0], robots=tuple(r.name for r in robots)),)
    return replace(spec, robots=robots, squads=squads)


def order(sim: Simulation, formation: str) -> SquadOrder:
    """Post a goto on the board, as the /squads server does between two steps."""
    sent = SquadOrder("S", "goto", GOAL, formation, seq=1)
    sim.extra["orders"] = MappingProxyType({"S": sent})
    return sent


def cross(spec, formation: str, limit: float = LIMIT, setup=None):
    """Run until the squad has arrived (game.arrived, as /squads/events reports it) or
    ``limit`` s; return (arrival time or None, the stepper, positions at the end)."""
    sim = Simulation(spec)
    stepper = Stepper(sim, mode="lockstep")
    if setup is not None:
        setup(sim)
    sent = order(sim, formation)
    names = list(spec.squads[0].robots)
    own = Formation.of(spec.squads[0])
    last = None
    for _ in range(int(round(limit / sim.dt))):
        snap = stepper.tick()
        pos = np.array([snap.poses[snap.index[n], :2] for n in names])
        if last is not None and game.arrived(sent, own, pos, np.hypot(*(pos - last).T) / sim.dt):
            return snap.time, stepper, pos
        last = pos
    return None, stepper, pos


def rms(pos: np.ndarray, formation: str) -> float:
    """RMS shape error after the best alignment to the formation's slots, m."""
    offsets = Formation(formation, 0.6).offsets(len(pos))
    return float(np.sqrt(np.mean(shape_error(pos, offsets, 0.0) ** 2)))


def check_crossing(n: int, formation: str) -> None:
    """n robots ordered across in ``formation`` arrive, in shape, at the goal."""
    arrived, _, pos = cross(squad_of(n), formation)
    assert arrived is not None, (f"{n} in a {formation}: not arrived after {LIMIT:g} s, "
                                 f"RMS {rms(pos, formation):.2f} m, centre "
                                 f"{np.round(pos.mean(axis=0), 2).tolist()}")
    assert rms(pos, formation) <= game.ARRIVED_RMS
    assert math.dist(pos.mean(axis=0), GOAL) <= game.ARRIVED_ANCHOR
