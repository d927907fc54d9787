"""Piles, floods and bodies placed inside things on the ``mujoco`` engine,
on real MuJoCo models and real files: ``coopsim check`` refuses a pile of boxes at one
point, a body below the floor and a body inside a table with ``file:line`` (exit 2, nothing
loaded); a world built in code is refused the same way; touching is fine; the arena is sized
from the world; a contact overflow is said once, not silently."""

from __future__ import annotations

import logging
import math
import subprocess
import sys

import pytest

pytest.importorskip("mujoco")

from coopsim.app.run import format_summary  # noqa: E402
from coopsim.model.errors import SimulationError  # noqa: E402
from coopsim.model.specs import ObjectSpec, RobotSpec  # noqa: E402
from coopsim.physics.mujoco import build as mb  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.pacing import Stats  # noqa: E402
from coopsim.sim.world import World  # noqa: E402

from helpers import scenario, step_by_hand  # noqa: E402

TABLE = "[FLOOR]\nsize 4 4 0.1\n\n[WALL_1]\ntype box\nsize 0.9 2.4 0.4\nposition 0.25 0 0.2\n"


def _scenario(world: str, body: str) -> str:
    return f"[WORLD]\nfile {world}\n\n{body}\n[SETTINGS]\nengine mujoco\n"


def _pile(n: int) -> str:
    """A world of ``n`` 1 kg boxes, all at one point (each a [WALL_n] section of 6 lines)."""
    sections = [f"[WALL_{k + 1}]\ntype box\nsize 0.2 0.2 0.2\nposition 1 1 0.1\nmass 1\n"
                for k in range(n)]
    return "[FLOOR]\nsize 20 20 0.1\n\n" + "\n".join(sections)


@pytest.mark.slow
def test_check_refuses_piles_bodies_below_the_floor_and_inside_a_table_with_file_line(
        tmp_path):
    """On main all four passed ``check`` (and ran: 5 steps a minute at 1.9 GB, a Crazyflie
    flying off at 178 km/s, a cube pushed below the floor)."""
    (tmp_path / "pile.world").write_text(_pile(1000))
    (tmp_path / "table.world").write_text(TABLE)
    (tmp_path / "empty.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    files = {
        "pile": _scenario("pile.world", ""),
        "deep": _scenario("empty.world", "[ROBOT_1]\ntype crazyflie\nname cf1\n"
                                         "position 0 0 -9000\n"),
        "cube": _scenario("table.world", "[OBJECT_1]\ntype box\nsize 0.1 0.1 0.1\n"
                                         "position 0.3 0 0.2\nmass 0.1\n"),
        "rover": _scenario("table.world", "[ROBOT_1]\ntype turtlebot3\nname tb\n"
                                          "position 0.25 0.5 0\n"),
    }
    for name, text in files.items():
        (tmp_path / f"{name}.scenario").write_text(text)
    done = subprocess.run([sys.executable, "-m", "coopsim", "check",
                           *(str(tmp_path / f"{name}.scenario") for name in files)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith(f"{tmp_path / 'pile.world'}:10: object WALL_2 at (1, 1, 0.1) "
                               "starts overlapping object WALL_1 at (1, 1, 0.1) (0.2 m deep)")
    assert lines[1] == (f"{tmp_path / 'deep.scenario'}:4: robot cf1 (crazyflie) at "
                        "(0, 0, -9000) is below the floor: a body must start on or above the "
                        "floor (z >= 0)")
    assert lines[2].startswith(f"{tmp_path / 'cube.scenario'}:4: object OBJECT_1 at "
                               "(0.3, 0, 0.2) starts inside static object WALL_1")
    assert lines[3].startswith(f"{tmp_path / 'rover.scenario'}:4: robot tb (turtlebot3) at "
                               "(0.25, 0.5, 0) starts inside static object WALL_1")


def test_touching_bodies_and_meeting_walls_may_start():
    """A cube standing on a table, a flyer on the floor (z 0), two walls crossing, and robots
    side by side are not overlaps; the same cube 1 cm into the table is."""
    table = ObjectSpec("table", "box", (0.9, 2.4, 0.4), (0.25, 0.0, 0.2))
    wall = ObjectSpec("wall", "box", (2.0, 0.1, 0.4), (0.0, 1.0, 0.2))
    cube = ObjectSpec("cube", "box", (0.04, 0.04, 0.04), (0.3, 0.1, 0.42), mass=0.1)
    flyers = [RobotSpec("crazyflie", f"cf{k}", (-1.5 + 0.14 * k, -1.5, 0.0), 0.0)
              for k in range(3)]
    world = World(scenario(robots=flyers, objects=[table, wall, cube], floor=(4.0, 4.0)),
                  "mujoco")
    assert list(world.objects) == ["table", "wall", "cube"]
    sunk = ObjectSpec("cube", "box", (0.04, 0.04, 0.04), (0.3, 0.1, 0.41), mass=0.1)
    with pytest.raises(SimulationError, match=r"object cube at \(0.3, 0.1, 0.41\) starts inside "
                                              r"static object table .*\(0.01 m deep\)"):
        World(scenario(objects=[table, sunk], floor=(4.0, 4.0)), "mujoco")


def test_a_world_built_in_code_is_refused_as_its_file_would_be():
    flyer = RobotSpec("crazyflie", "cf1", (0.0, 0.0, -9000.0), 0.0)
    with pytest.raises(SimulationError, match=r"robot cf1 \(crazyflie\) at \(0, 0, -9000\) is "
                                              "below the floor"):
        Simulation(scenario(robots=[flyer]), engine="mujoco")


def test_the_arena_is_sized_from_the_world():
    """MuJoCo's default arena grows with the square of the degrees of freedom: 440 MB for 500
    flyers, 1.8 GB for 1,000, and 10,000 could not be allocated at all (main). Sized from the
    world it is a few tens of MB here, and the steps' contacts fit in it."""
    side = 23  # 529 flyers, 0.25 m apart, on the floor
    flyers = [RobotSpec("crazyflie", f"cf{k}", (0.25 * (k % side) - 2.75, 0.25 * (k // side)
                                                - 2.75, 0.0), 0.0) for k in range(side * side)]
    sim = Simulation(scenario(robots=flyers, floor=(7.0, 7.0), dt=0.002), engine="mujoco")
    step_by_hand(sim, 5)
    engine = sim.world.engine
    n = len(flyers) + 5  # the world body and the four walls
    assert engine.model.narena == mb.arena_bytes(n, 6 * len(flyers), len(flyers))
    assert engine.model.narena < 64 * 2**20
    assert 0 < engine.data.maxuse_arena < engine.model.narena
    assert engine.data.ncon >= 3 * len(flyers)  # every one standing on the floor
    assert engine.warnings() == () and "engine_warnings" not in sim.snapshot.extra


def _bed_of_nails(n: int) -> list:
    """A 5 kg plank resting on ``n`` x ``n`` static 10 cm cubes: 4 contacts a cube."""
    cubes = [ObjectSpec(f"c{i}_{j}", "box", (0.1, 0.1, 0.1), (0.1 * i - 1.0, 0.1 * j - 1.0,
                                                              0.05))
             for i in range(n) for j in range(n)]
    plank = ObjectSpec("plank", "box", (0.1 * n, 0.1 * n, 0.05),
                       (0.05 * (n - 1) - 1.0, 0.05 * (n - 1) - 1.0, 0.125), mass=5.0)
    return cubes + [plank]


def test_a_contact_overflow_is_said_once_in_the_log_the_snapshot_and_the_summary(
        monkeypatch, caplog):
    """An arena with room for 16 contacts and 12 per moving geom, under 1,600 contacts: MuJoCo
    drops contacts (its CONTACTFULL warning), the plank falls through the cubes, and the run
    says so once (main: nothing but MuJoCo's own line, and nothing in the state)."""
    monkeypatch.setattr(mb, "ARENA_BASE", 0)
    monkeypatch.setattr(mb, "CONTACTS", 16)
    sim = Simulation(scenario(objects=_bed_of_nails(20), floor=(4.0, 4.0)), engine="mujoco")
    with caplog.at_level(logging.WARNING, logger="coopsim.sim.simulation"):
        step_by_hand(sim, 20)
    notes = sim.snapshot.extra["engine_warnings"]
    assert len(notes) == 1 and notes[0].startswith("the world's contacts overflowed MuJoCo's "
                                                   "arena at t = 0.01 s (")
    assert [r.getMessage() for r in caplog.records if r.name == "coopsim.sim.simulation"] \
        == [notes[0]]
    stats = Stats(steps=20, time=0.2, wall=1.0, rtf=0.2, missed=0, mode="lockstep", speed=0.0,
                  paused=False, attached=())
    summary = format_summary(stats, sim.scenario, 0, warnings=notes)
    assert summary.splitlines()[-1].split(None, 1) == ["warning", notes[0]]
    assert math.isfinite(sim.world.engine.poses3d([sim.world.objects["plank"][1]])[0, 2])
