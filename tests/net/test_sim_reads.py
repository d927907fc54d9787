"""``/sim`` read-only requests answer from the latest snapshot without waiting for the stepper;
``state`` keeps one layout document per layout and puts the snapshot's poses into it."""

from __future__ import annotations

import json
import threading

import pytest

from coopsim.net import protocol as p

from helpers import box, robot, scenario, target
from nethelpers import Peer, live

WAIT = 10.0  # s; the stepper is held for twice as long


def _spec(mode: str = "realtime"):
    return scenario(robots=[robot("r1", -1.0, 0.0), robot("r2", 1.0, 1.0, yaw=0.5)],
                    objects=[box("wall", 0.0, 3.0)], targets=[target("red", 2.0, -2.0)],
                    mode=mode)


def _ids(*names: str) -> list[int]:
    by_name = {c.name: c.id for c in p.SIM_COMMANDS.values()}
    return [by_name[n] for n in names]


def test_reads_are_answered_while_the_stepper_is_busy():
    with live(_spec()) as run:
        sim = Peer(run.network.names.lookup("/sim"))
        try:
            sim.ok(23)  # the layout of this layout version, once
            started, release = threading.Event(), threading.Event()

            def hold():  # keeps the stepper thread busy between two steps
                started.set()
                release.wait(2 * WAIT)
            held = run.stepper.call(hold)
            assert started.wait(WAIT)
            for command in _ids("status", "list_robots", "list_objects", "list_targets",
                                "state"):
                reply = sim.ask(command, timeout=WAIT)
                assert reply[0] == 0, reply
            assert not held.done(), "the replies must not have waited for the stepper"
            state = json.loads(sim.ask(23, timeout=WAIT)[1])
            assert [r["name"] for r in state["robots"]] == ["r1", "r2"]
        finally:
            release.set()
            sim.close()


def test_a_layout_changed_on_the_stepper_does_not_make_state_wait_for_it():
    """A layout changed on the stepper's thread, not through /sim (a timed event, a grasp),
    then the stepper held (a kernel compiling as a plan is built, a long step): state is
    answered at once from the last snapshot of the layout before, and another client's status
    behind it too; once the stepper is free, state describes the new layout. Before, the
    read waited up to 10 s for the stepper to describe the layout, holding /sim for every
    client, and then answered an error."""
    with live(_spec()) as run:
        sim, other = (Peer(run.network.names.lookup("/sim")) for _ in range(2))
        started, release = threading.Event(), threading.Event()
        try:
            before = json.loads(sim.ok(23)[1])

            def change_then_hold():
                run.stepper.sim.world.add_object(box("crate", -2.0, -2.0))
                run.stepper.refresh()
                started.set()
                release.wait(6 * WAIT)
            held = run.stepper.call(change_then_hold)
            assert started.wait(WAIT)
            reply = sim.ask(23, timeout=3 * WAIT)
            assert reply[0] == 0, reply
            state = json.loads(reply[1])
            assert [o["name"] for o in state["objects"]] == ["wall"]  # the layout before
            assert state["layout_version"] == before["layout_version"]
            assert reply[3][1] == before["layout_version"]
            assert other.ask(_ids("status")[0], timeout=3 * WAIT)[0] == 0
            assert not held.done(), "the replies must not have waited for the stepper"
            release.set()
            held.result(3 * WAIT)
            while [o["name"] for o in state["objects"]] != ["wall", "crate"]:
                state = json.loads(sim.ok(23)[1])  # described between two steps
            assert state["layout_version"] > before["layout_version"]
        finally:
            release.set()
            sim.close()
            other.close()


def test_state_follows_insertions_removals_and_resets():
    with live(_spec(), paused=True) as run:
        sim = Peer(run.network.names.lookup("/sim"))
        try:
            first = json.loads(sim.ok(23)[1])
            assert [o["name"] for o in first["objects"]] == ["wall"]
            sim.ok(13, "crate box", data=[0.5, 0.5, 0.5, -2.0, -2.0, 0.25, 0.0, 1.0])
            state = json.loads(sim.ok(23)[1])
            assert [o["name"] for o in state["objects"]] == ["wall", "crate"]
            assert state["layout_version"] != first["layout_version"]
            sim.ok(18, "r2")
            assert [r["name"] for r in json.loads(sim.ok(23)[1])["robots"]] == ["r1"]
            sim.ok(5)  # reset: a new world whose layout_version may repeat an earlier one
            state = json.loads(sim.ok(23)[1])
            assert [o["name"] for o in state["objects"]] == ["wall"]
            assert [r["name"] for r in state["robots"]] == ["r1", "r2"]
        finally:
            sim.close()


def test_state_carries_the_latest_snapshot_poses_and_figures():
    with live(_spec(), paused=True) as run:
        sim = Peer(run.network.names.lookup("/sim"))
        robot1 = Peer(run.network.names.lookup("/r1"))
        try:
            robot1.ok(100, data=[0.3, 0.1])
            sim.ok(23)
            sim.ok(4, params=[25])
            reply = sim.ok(23)
            state = json.loads(reply[1])
            poses = sim.ok(10)[4]
            status = sim.ok(1)
            assert reply[3] == [status[3][0], state["layout_version"]]
            assert state["step"] == status[3][0] == 25 and state["paused"] is True
            got = [v for r in state["robots"] for v in (r["x"], r["y"], r["yaw"])]
            assert got == pytest.approx(poses) and got[:2] != [-1.0, 0.0]  # r1 moved
            assert state["objects"][0]["x"] == pytest.approx(0.0)
            assert state["time"] == pytest.approx(25 * state["dt"])
            assert {"floor", "modules", "columns", "types", "rules", "seed"} <= set(state)
        finally:
            sim.close()
            robot1.close()
