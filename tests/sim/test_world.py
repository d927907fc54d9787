"""World building, insertion/removal, floor bounds and the drive's physical behaviour."""

import math

import pytest

from coopsim.model.errors import SimulationError, UnknownNameError
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper
from coopsim.sim.world import World

from helpers import box, cylinder, robot, scenario, target


def drive(scn, commands, steps):
    """Run ``steps`` lockstep ticks with fixed wheel commands; return the stepper."""
    stepper = Stepper(Simulation(scn), mode="lockstep")
    for _ in range(steps):
        for name, (l, r) in commands.items():
            stepper.slots.put(name, "motors", (l, r), attach=False)
        stepper.tick()
    return stepper


def test_static_and_movable_objects_and_targets_are_built():
    world = World(scenario([robot()], [box("B", 2, 0), cylinder("C", -2, 0, mass=1.0)],
                           [target("red", 3, 3)]))
    static, movable = world.objects["B"][1], world.objects["C"][1]  # pymunk engine handles
    assert static.body.body_type == static.body.STATIC and static.joints == ()
    assert movable.body.mass == pytest.approx(1.0)
    assert len(movable.joints) == 2  # floor friction: pivot + gear
    assert [t.color for t in world.targets] == ["red"]
    assert [r.name for r in world.robots] == ["r1"]


def test_team2_builds_two_named_robots_and_a_bar():
    world = World(scenario([robot("t", type="team2")]))
    assert [r.name for r in world.robots] == ["t_leader", "t_helper"]
    leader, helper = world.robots
    x = world.engine.robot_state()[:, 0]
    assert x == pytest.approx([0.6, -0.6])
    assert [p.name for p in world.parts] == ["t.bar"]
    assert set(leader.refs) == {"support", "bar"} and leader.refs["bar"] is helper.refs["bar"]


def test_insert_update_remove_object_and_errors():
    world = World(scenario())
    world.add_object(box("A", 1, 1))
    version = world.layout_version
    world.update_object(box("A", -1, -1, mass=2.0))
    assert world.object_spec("A").position[:2] == (-1, -1)
    assert world.layout_version > version
    with pytest.raises(SimulationError, match="exists already"):
        world.add_object(box("A", 0, 0))
    with pytest.raises(SimulationError, match="not on the"):
        world.add_object(box("Z", 50, 0))
    world.remove_object("A")
    with pytest.raises(UnknownNameError):
        world.remove_object("A")


def test_failed_update_keeps_the_old_object():
    world = World(scenario([], [box("A", 1, 1)]))
    with pytest.raises(SimulationError):
        world.update_object(box("A", 99, 0))
    assert world.object_spec("A").position[:2] == (1, 1)


def test_robot_names_are_unique_and_robots_stay_on_the_floor():
    world = World(scenario([robot("r1")]))
    with pytest.raises(SimulationError, match="exists already"):
        world.add_robot(robot("r1", 2, 2))
    with pytest.raises(SimulationError, match="not on the"):
        world.add_robot(robot("r2", 4.9, 0))
    world.remove_robot("r1")
    assert world.robots == []


def test_robot_drives_straight_at_the_commanded_speed():
    stepper = drive(scenario([robot()]), {"r1": (0.5, 0.5)}, 100)  # 1 s
    x, y, yaw = stepper.snapshot.poses[0]
    assert x == pytest.approx(0.5, abs=0.02) and abs(y) < 1e-6 and abs(yaw) < 1e-6


def test_robot_turns_on_the_spot_with_opposite_wheels():
    stepper = drive(scenario([robot()]), {"r1": (-0.17, 0.17)}, 100)  # w = 0.34/0.34 = 1 rad/s
    x, y, yaw = stepper.snapshot.poses[0]
    assert yaw == pytest.approx(1.0, abs=0.03) and math.hypot(x, y) < 0.01


def test_robot_stalls_against_a_static_wall_and_does_not_tunnel():
    stepper = drive(scenario([robot()], [box("W", 1.0, 0, size=(0.2, 2.0))]), {"r1": (0.6, 0.6)},
                    500)
    x = stepper.snapshot.poses[0][0]
    assert x == pytest.approx(0.9 - 0.2, abs=0.01)  # chassis edge at the wall's face
    assert stepper.snapshot.reading("r1", "bumper")[0] == 1.0


def test_robot_pushes_a_light_object_but_not_a_heavy_one():
    light = drive(scenario([robot()], [box("L", 0.5, 0, size=(0.3, 0.3), mass=0.5)]),
                  {"r1": (0.4, 0.4)}, 200)
    heavy = drive(scenario([robot()], [box("H", 0.5, 0, size=(0.3, 0.3), mass=500.0)]),
                  {"r1": (0.4, 0.4)}, 200)
    assert light.snapshot.object_poses[0][0] > 0.8
    assert heavy.snapshot.object_poses[0][0] == pytest.approx(0.5, abs=0.02)


def test_floor_edges_are_walls():
    stepper = drive(scenario([robot()], floor=(4.0, 4.0)), {"r1": (0.6, 0.6)}, 600)
    assert stepper.snapshot.poses[0][0] == pytest.approx(2.0 - 0.2, abs=0.01)


def test_describe_lists_everything_for_a_viewer():
    world = World(scenario([robot(), robot("t", 0, 3, type="team2")], [box("B", 2, -2)],
                           [target("blue", -3, -3)]))
    state = world.describe()
    assert state["floor"] == {"length": 10.0, "width": 10.0}
    assert [r["name"] for r in state["robots"]] == ["r1", "t_leader", "t_helper"]
    assert state["objects"][0]["shape"] == "box" and state["parts"][0]["name"] == "t.bar"
    assert state["parts"][0]["shapes"][0]["kind"] == "box"
    assert {"single", "team2"} <= set(state["types"])  # plugin packages may add more
    # the streamed columns of the modules these robots carry (protocol 8): the sonar's
    # distances; no arm angles and no LED colours for robots without arm or LEDs
    assert state["columns"] == [f"sonar{i}" for i in range(11)]
    assert state["modules"]["sonar"]["draw"]["kind"] == "rays"
    assert state["targets"][0]["rgb"] and state["layout_version"] == world.layout_version


def test_a_reset_or_load_never_repeats_a_layout_version():
    sim = Simulation(scenario([robot()]))
    before = sim.snapshot.layout_version
    sim.reset()
    after_reset = sim.snapshot.layout_version
    sim.reset(scenario([robot("other")]))  # same number of bodies, another scenario
    assert before < after_reset < sim.snapshot.layout_version


def test_building_a_world_holds_the_collector_off_and_gives_it_back():
    """The cycle collector is off while robots are built (it was ~40 % of building 20,000) and
    on again afterwards, also when building fails; left off if the caller had it off."""
    import gc

    from coopsim.model.params import ParamValues
    from coopsim.model.plugins import MODULES

    seen = []
    real = World.add_robot

    def spy(self, spec):
        seen.append(gc.isenabled())
        return real(self, spec)

    World.add_robot = spy
    try:
        assert gc.isenabled()
        World(scenario([robot("a"), robot("b", x=1.0)]))
        assert seen == [False, False] and gc.isenabled()
        with pytest.raises(SimulationError):
            World(scenario([robot("a"), robot("a", x=1.0)]))
        assert gc.isenabled()
        gc.disable()
        World(scenario([robot("c")]))
        assert not gc.isenabled()
    finally:
        World.add_robot = real
        gc.enable()
    # the shared spec tables: two robots' values are separate, their declarations shared
    params = MODULES.get("sonar").params
    a, b = ParamValues(params), ParamValues(params)
    a.set("max_range", 3.0)
    assert b["max_range"] == 2.0 and a.specs is b.specs
