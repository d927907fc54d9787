"""Snapshots share the copy of a command table nobody touched since the last snapshot
(coopsim.sim.sensing.CommandTables): every write, by any path, still shows in the next
snapshot, and a table nobody wrote keeps the bits a copy would have had."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from coopsim.app.bench import swarm_scenario
from coopsim.sim.sensing import CommandTables
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper


def stepper(engine: str = "kinematic") -> Stepper:
    st = Stepper(Simulation(swarm_scenario(3), engine=engine), mode="lockstep")
    for name in st.sim.snapshot.robots:
        st.slots.put(name, "motors", (0.3, 0.25), attach=False)
    return st


def idle_label(sim) -> str:
    """A module with commands that no robot of the world carries."""
    return next(k for k in dict.keys(sim.commands) if not len(sim.params.rows[k]))


@pytest.mark.parametrize("engine", ["pymunk", "kinematic"])
def test_an_untouched_table_is_shared_and_equals_the_table(engine):
    st = stepper(engine)
    idle = idle_label(st.sim)
    first, second = st.tick(), st.tick()
    assert second.commands[idle] is first.commands[idle]  # shared, not copied again
    # the motors' table: the plain path's actuators look it up (copied anew), the fused pass
    # only reads it (shared); either way the bits below
    for k, table in dict.items(st.sim.commands):
        assert second.commands[k].tobytes() == table.tobytes()
        assert not second.commands[k].flags.writeable


def test_every_way_of_writing_a_table_shows_in_the_next_snapshot():
    st = stepper()
    sim = st.sim
    idle = idle_label(sim)
    width = sim.commands[idle].shape[1]
    writes = [
        lambda v: sim.commands[idle].__setitem__(1, v),  # a look-up, then a write
        lambda v: sim.set_command(2, idle, v),  # drivers' path
        lambda v: sim.command({(sim.snapshot.robots[0], idle): v}),  # the network's path
        lambda v: next(t for k, t in sim.commands.items() if k == idle).__setitem__(0, v),
        lambda v: dict(sim.commands)[idle].__setitem__(2, v),  # a plain dict of the tables
        lambda v: sim.commands.get(idle).__setitem__(0, v),
    ]
    st.tick()
    for k, write in enumerate(writes):
        before = st.tick().commands[idle]
        write(np.full(width, float(k + 1)))
        after = st.tick()
        assert after.commands[idle] is not before  # copied anew
        assert after.commands[idle].tobytes() == dict.__getitem__(sim.commands, idle).tobytes()
        assert (after.commands[idle] == k + 1).any()
        assert st.tick().commands[idle] is after.commands[idle]  # then shared again


def test_new_tables_count_as_written_and_copies_keep_that():
    tables = CommandTables({"a": np.zeros((2, 3))})
    assert tables.touched == {"a"}
    tables.touched = set()
    tables["b"] = np.ones((2, 1))
    assert tables.touched == {"b"}
    tables.touched = set()
    assert "a" in tables and len(tables) == 2 and sorted(tables) == ["a", "b"]
    assert tables.touched == set()  # names alone hand out no table
    assert copy.deepcopy(tables).touched == {"a", "b"}
    {**tables}
    assert tables.touched == {"a", "b"}


def test_a_plain_dict_in_place_of_the_tables_is_copied_every_step():
    st = stepper()
    st.tick()
    st.sim.commands = dict(dict.items(st.sim.commands))
    a, b = st.tick(), st.tick()
    assert all(b.commands[k] is not a.commands[k] for k in a.commands)
