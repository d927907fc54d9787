"""Snapshots look into a ring of reused blocks (coopsim.sim.snapshots): a snapshot, or a view
taken from one, that a reader still holds is never written by later steps; every array a
snapshot hands out is read-only; the ring does reuse its blocks when nobody holds them."""

from __future__ import annotations

import numpy as np
import pytest

from coopsim.model.specs import (DriverSetting, FloorSpec, RobotSpec, ScenarioSpec, Settings,
                                 WorldSpec)
from coopsim.sim.simulation import Simulation
from coopsim.sim.snapshots import DEPTH, RING_ROWS, Ring
from coopsim.sim.stepper import Stepper


N = RING_ROWS + 4  # robots: enough for the ring (fewer take fresh copies, cheaper)


def _scenario(engine: str = "kinematic", kind: str = "single", driver=()) -> ScenarioSpec:
    z = 0.0 if kind == "single" else 1.0  # Crazyflies start in the air: they fall
    robots = tuple(RobotSpec(kind, f"r{k}", (k % 20 - 10.0, k // 20 - 10.0, z), drivers=driver)
                   for k in range(N))
    return ScenarioSpec(WorldSpec(FloorSpec(24.0, 24.0)), robots=robots,
                        settings=Settings(dt=0.01, mode="lockstep", seed=3, engine=engine))


def _moving() -> Simulation:
    """Kinematic robots wandering (every step changes poses and commands)."""
    return Simulation(_scenario(driver=(DriverSetting("wander", ()),)))


def _arrays(snap) -> dict:
    out = {"poses": snap.poses, "velocities": snap.velocities}
    out.update({f"cmd.{k}": v for k, v in snap.commands.items()})
    for name in ("pose3d", "twist3d", "object_poses", "part_poses", "object_pose3d"):
        if getattr(snap, name) is not None:
            out[name] = getattr(snap, name)
    return out


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("held", [1, DEPTH + 3])
def test_a_held_snapshot_and_a_held_view_never_change(held):
    stepper = Stepper(_moving(), mode="lockstep")
    for _ in range(3):
        stepper.tick()
    kept = [stepper.tick() for _ in range(held)]  # a reader keeps these (the recorder's queue)
    copies = [{k: v.copy() for k, v in _arrays(s).items()} for s in kept]
    column = kept[0].poses[:, :2]  # a view alone, its snapshot let go of
    column_copy = column.copy()
    del kept[0]
    moved = kept[-1].poses.copy() if kept else column_copy
    for _ in range(3 * DEPTH):
        stepper.tick()
    assert not np.array_equal(stepper.snapshot.poses, moved)  # the robots did move on
    np.testing.assert_array_equal(column, column_copy)
    for snap, copy in zip(kept, copies[1:]):
        for name, values in _arrays(snap).items():
            np.testing.assert_array_equal(values, copy[name], err_msg=name)


def test_blocks_nobody_holds_are_written_again():
    stepper = Stepper(_moving(), mode="lockstep")
    addresses = set()
    for _ in range(5 * DEPTH):
        addresses.add(_address(stepper.tick().poses))
    # the poses of 20 steps in at most DEPTH blocks: the step writes into the ring
    assert len(addresses) <= DEPTH
    assert stepper.sim.snapshots.ring.held(("state",)) >= 1  # the latest snapshot's block


def test_every_array_of_a_snapshot_is_read_only():
    sim = Simulation(_scenario("aerial", "crazyflie"))
    stepper = Stepper(sim, mode="lockstep")
    for _ in range(DEPTH + 2):
        snap = stepper.tick()
    arrays = _arrays(snap)
    assert {"poses", "velocities", "pose3d", "twist3d"} <= set(arrays)
    arrays.update({f"reading.{k}": v for k, v in snap.readings.items()})
    for name, values in arrays.items():
        assert not values.flags.writeable, name
        with pytest.raises(ValueError):
            values[...] = 0.0


def test_a_3d_snapshot_held_keeps_its_pose_and_twist():
    sim = Simulation(_scenario("aerial", "crazyflie"))
    stepper = Stepper(sim, mode="lockstep")
    first = stepper.tick()
    pose3d, twist3d = first.pose3d.copy(), first.twist3d.copy()
    for _ in range(3 * DEPTH):
        stepper.tick()
    assert not np.array_equal(stepper.snapshot.pose3d, pose3d)  # falling: it moved
    np.testing.assert_array_equal(first.pose3d, pose3d)
    np.testing.assert_array_equal(first.twist3d, twist3d)


def test_the_ring_takes_fresh_arrays_when_every_kept_block_is_held():
    ring = Ring(depth=2)
    values = np.arange(6.0).reshape(3, 2)
    held = [ring.put("x", values + k)[0] for k in range(5)]
    assert ring.held("x") == 2
    for k, view in enumerate(held):
        np.testing.assert_array_equal(view, values + k)
    first, second = ring.put("y", values, (1, 1))  # one block, its columns apart
    np.testing.assert_array_equal(first, values[:, :1])
    np.testing.assert_array_equal(second, values[:, 1:])
    assert np.shares_memory(first.base, second)
