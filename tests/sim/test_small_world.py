"""Small worlds at compiled speed: the shortcuts of the tick and of reset change no
result. A reset keeps the caster and bins the walls again only when they changed; the sensing
phase visits only the modules some robot carries; snapshots are built without the frozen
dataclass's per-field cost. Each is checked against a run without the shortcut, bit for bit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from coopsim.app.bench import swarm_scenario
from coopsim.model.snapshot import Snapshot
from coopsim.model.specs import ObjectSpec
from coopsim.raycast.jitcast import JitRayCaster
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper


class CountingCaster(JitRayCaster):
    """The caster, counting how often its static shapes are binned."""

    binned = -1  # the constructor's own (empty) binning is not counted

    def set_static(self, *args, **kwargs) -> None:
        self.binned += 1
        super().set_static(*args, **kwargs)


def run(stepper: Stepper, steps: int) -> list[tuple]:
    """Every step's poses, velocities, commands and readings, as bytes."""
    out = []
    for _ in range(steps):
        snap = stepper.tick()
        out.append((snap.step, snap.time, snap.poses.tobytes(), snap.velocities.tobytes(),
                    tuple((k, v.tobytes()) for k, v in snap.commands.items()),
                    tuple((k, v.tobytes()) for k, v in snap.readings.items())))
    return out


def driven(scenario, caster, engine: str = "pymunk") -> Stepper:
    st = Stepper(Simulation(scenario, engine=engine, caster=caster), mode="lockstep")
    for name in st.sim.snapshot.robots:
        st.slots.put(name, "motors", (0.3, 0.25), attach=False)
    return st


@pytest.mark.parametrize("engine", ["pymunk", "kinematic"])
def test_a_reset_bins_the_same_walls_once_and_repeats_a_fresh_run_bit_for_bit(engine):
    caster = CountingCaster()
    st = driven(swarm_scenario(1), caster, engine)
    first = run(st, 40)
    st.reset()
    for name in st.sim.snapshot.robots:
        st.slots.put(name, "motors", (0.3, 0.25), attach=False)
    again = run(st, 40)
    fresh = run(driven(swarm_scenario(1), CountingCaster(), engine), 40)
    assert again == first == fresh
    assert caster.binned == 1  # built once, kept across the reset


def test_a_reset_to_other_walls_bins_them_and_senses_them():
    caster = CountingCaster()
    st = driven(swarm_scenario(1), caster)
    run(st, 5)
    other = swarm_scenario(1)
    wall = ObjectSpec("wall", "box", (0.3, 1.0, 0.5), (0.8, 0.0, 0.25), 0.0)
    other = dataclasses.replace(other, objects=other.objects + (wall,))
    st.reset(other)
    assert caster.binned == 2
    for name in st.sim.snapshot.robots:
        st.slots.put(name, "motors", (0.3, 0.25), attach=False)
    assert run(st, 30) == run(driven(other, CountingCaster()), 30)


def test_every_snapshot_is_a_whole_frozen_snapshot_with_read_only_arrays():
    st = driven(swarm_scenario(2), CountingCaster())
    snaps = [st.tick() for _ in range(3)]
    st.sim.zero_reading(snaps[-1].robots[0], "odometry")
    snaps.append(st.refresh())
    snaps.append(st.reset())
    names = {f.name for f in dataclasses.fields(Snapshot)}
    for snap in snaps:
        assert isinstance(snap, Snapshot) and set(vars(snap)) == names
        with pytest.raises(dataclasses.FrozenInstanceError):
            snap.step = 0
        for arr in (*snap.readings.values(), *snap.commands.values(), snap.poses):
            assert not arr.flags.writeable
    assert np.array_equal(snaps[3].readings["odometry"][0], np.zeros(5))


def test_modules_nobody_carries_cost_nothing_and_keep_their_reading():
    st = driven(swarm_scenario(1), CountingCaster())
    carried = set(st.sim.world.robots[0].modules)
    before = st.tick().readings
    after = st.tick().readings
    idle = set(after) - carried
    assert idle and carried <= set(after)
    for label in idle:  # the very same array: not measured, not copied
        assert after[label] is before[label]
        assert np.isnan(after[label]).all()
    assert all(after[label] is not before[label] for label in carried)


def test_a_module_given_a_rate_keeps_its_reading_between_updates_in_a_small_world():
    st = driven(swarm_scenario(1), CountingCaster())
    name = st.sim.snapshot.robots[0]
    st.sim.set_param(name, "sonar", "rate", 1.0 / (5 * st.sim.dt))  # every 5th step
    seen = [st.tick() for _ in range(12)]
    taken = [s.extra["taken"].steps["sonar"][0] for s in seen]
    assert len(set(taken)) in (2, 3) and all(t % 5 == 0 or t == taken[0] for t in taken)
    held = [s.readings["sonar"].tobytes() for s in seen]
    for k in range(1, len(seen)):
        if taken[k] == taken[k - 1]:
            assert held[k] == held[k - 1]
