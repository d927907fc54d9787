"""Module readings against the physics truth: sonar, target, odometry, gps, compass, bumper,
support, motors, and the noise / lost-data parameters."""

import math

import numpy as np
import pytest

from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario, target


def run(scn, commands=None, steps=1):
    stepper = Stepper(Simulation(scn), mode="lockstep")
    for _ in range(steps):
        for name, (l, r) in (commands or {}).items():
            stepper.slots.put(name, "motors", (l, r), attach=False)
        stepper.tick()
    return stepper.snapshot


def test_sonar_measures_from_the_chassis_edge_and_caps_at_max_range():
    snap = run(scenario([robot()], [box("W", 1.5, 0, size=(1.0, 4.0))]))
    sonar = snap.reading("r1", "sonar")
    assert sonar[5] == pytest.approx(1.0 - 0.2, abs=1e-9)  # wall face at x = 1.0, edge at 0.2
    assert sonar[0] == pytest.approx(2.0) and sonar[10] == pytest.approx(2.0)  # nothing sideways
    # 36 degrees to the left: the ray meets the face x = 1.0 after (1.0 - 0.2 cos36)/cos36 m
    a = math.radians(36)
    assert sonar[7] == pytest.approx((1.0 - 0.2 * math.cos(a)) / math.cos(a), abs=1e-9)


def test_sonar_sees_other_robots_but_not_its_own_chassis():
    snap = run(scenario([robot("a"), robot("b", 1.0, 0)]))
    assert snap.reading("a", "sonar")[5] == pytest.approx(1.0 - 0.4, abs=1e-9)
    assert snap.reading("b", "sonar")[5] == pytest.approx(2.0)  # b faces away from a


def test_sonar_max_range_parameter():
    snap = run(scenario([robot(params=[("sonar", "max_range", 0.5)])],
                        [box("W", 1.5, 0, size=(1.0, 4.0))]))
    assert snap.reading("r1", "sonar")[5] == pytest.approx(0.5)


def test_target_distance_and_relative_angle():
    snap = run(scenario([robot(yaw=math.pi / 2)], targets=[target("red", 3, 4),
                                                            target("blue", 0, 2)]))
    d0, a0, d1, a1 = snap.reading("r1", "target")
    assert d0 == pytest.approx(5.0) and a0 == pytest.approx(math.atan2(4, 3) - math.pi / 2)
    assert d1 == pytest.approx(2.0) and a1 == pytest.approx(0.0, abs=1e-12)
    assert snap.fields["target"] == ("distance0", "angle0", "distance1", "angle1")


def test_gps_compass_and_odometry_follow_the_robot():
    snap = run(scenario([robot(x=1.0, y=-1.0)]), {"r1": (0.3, 0.4)}, steps=200)
    x, y, yaw = snap.poses[0]
    assert tuple(snap.reading("r1", "gps")) == pytest.approx((x, y))
    assert snap.reading("r1", "compass")[0] == pytest.approx(yaw)
    ox, oy, oyaw, left, right = snap.reading("r1", "odometry")
    # odometry starts at 0 in the robot's start frame (start yaw 0): a translate of the truth
    assert (ox, oy, oyaw) == pytest.approx((x - 1.0, y + 1.0, yaw), abs=0.01)
    assert left == pytest.approx(0.3 * 2.0, rel=0.03) and right == pytest.approx(0.8, rel=0.03)


def test_motors_report_commanded_and_actual_speeds_and_efficiency():
    snap = run(scenario([robot(params=[("motors", "efficiency", 50.0)])]),
               {"r1": (0.4, 0.4)}, steps=50)
    left_cmd, right_cmd, left, right = snap.reading("r1", "motors")
    assert (left_cmd, right_cmd) == pytest.approx((0.2, 0.2))
    assert left == pytest.approx(0.2, abs=0.01) and right == pytest.approx(0.2, abs=0.01)


def test_max_speed_saturates():
    snap = run(scenario([robot(params=[("motors", "max_speed", 0.3)])]), {"r1": (1.0, 1.0)},
               steps=100)
    assert snap.poses[0][0] == pytest.approx(0.3, abs=0.02)


def test_bumper_front_and_rear():
    front = run(scenario([robot()], [box("W", 0.7, 0, size=(0.6, 2))]), {"r1": (0.5, 0.5)}, 60)
    rear = run(scenario([robot()], [box("W", -0.7, 0, size=(0.6, 2))]), {"r1": (-0.5, -0.5)}, 60)
    assert tuple(front.reading("r1", "bumper")) == (1.0, 0.0)
    assert tuple(rear.reading("r1", "bumper")) == (0.0, 1.0)


def test_a_few_contact_pairs_map_to_bumpers_as_many_do(monkeypatch):
    from coopsim.physics.pymunk import engine as pymunk_engine

    def bumpers():
        spec = scenario([robot("r1"), robot("r2", 0.45, 0.0), robot("r3", -1.0, 1.0)],
                        [box("W", 0.9, 0, size=(0.6, 2)), box("V", -1.6, 1.0, size=(0.6, 2))])
        st = Stepper(Simulation(spec), mode="lockstep")
        for name, wheels in (("r1", (0.5, 0.45)), ("r2", (-0.3, 0.3)), ("r3", (-0.5, -0.4))):
            st.slots.put(name, "motors", wheels, attach=False)
        return [st.tick().readings["bumper"].tobytes() for _ in range(80)]

    few = bumpers()  # at most _FEW_PAIRS pairs: looked up in Python
    monkeypatch.setattr(pymunk_engine, "_FEW_PAIRS", -1)
    many = bumpers()
    assert len(set(few)) > 1  # robots touched walls and each other, front and rear
    assert few == many


def test_support_reports_bar_angle_and_force_for_team2_only():
    snap = run(scenario([robot("t", type="team2"), robot("s", 0, 3)]),
               {"t_leader": (0.4, 0.4), "t_helper": (0.0, 0.0)}, steps=50)
    assert not np.isnan(snap.reading("t_leader", "support")).any()
    assert snap.reading("t_leader", "support")[1] > 0.0  # leader pulls the helper via the bar
    assert np.isnan(snap.reading("s", "support")).all()  # single robots have no support


def test_noise_changes_readings_reproducibly_with_the_seed():
    scn = scenario([robot(params=[("gps", "noise", 0.1)])], seed=7)
    a, b = run(scn, steps=5), run(scn, steps=5)
    other = run(scenario([robot(params=[("gps", "noise", 0.1)])], seed=8), steps=5)
    assert np.array_equal(a.reading("r1", "gps"), b.reading("r1", "gps"))
    assert not np.array_equal(a.reading("r1", "gps"), other.reading("r1", "gps"))
    assert np.abs(a.reading("r1", "gps")).max() > 1e-6


def test_lost_data_repeats_the_previous_reading():
    snap = run(scenario([robot(params=[("gps", "lost", 100.0)])]), {"r1": (0.5, 0.5)}, 100)
    assert tuple(snap.reading("r1", "gps")) == pytest.approx((0.0, 0.0))
    assert snap.poses[0][0] > 0.4


def test_sonar_reads_zero_when_pressed_against_a_wall():
    snap = run(scenario([robot()], [box("W", 1.5, 0, size=(1.0, 4.0))]), {"r1": (0.6, 0.6)}, 300)
    assert snap.poses[0][0] > 0.79  # pushed into the face at x = 1.0 by the drive
    assert snap.reading("r1", "sonar")[5] == pytest.approx(0.0, abs=0.01)


def test_a_world_without_robots_steps():
    snap = run(scenario([], [box("W", 1, 1)], [target("red", 2, 2)]), steps=3)
    assert snap.step == 3 and snap.readings["target"].shape == (0, 2)


def test_frame_physics_reaches_the_engine_and_engine_is_its_deprecated_alias():
    from coopsim.model.module import PhysicsAccess
    from coopsim.sim.access import Access

    sim = Simulation(scenario([robot()]))
    frame = sim._frame(sim.world.engine.robot_state(), {})
    assert isinstance(frame.physics, Access)
    with pytest.warns(DeprecationWarning, match="use Frame.physics"):
        assert frame.engine is frame.physics  # plugins written against the old name work
    declared = {n for n in vars(PhysicsAccess) if not n.startswith("_")}
    assert declared and declared <= set(vars(Access)), declared - set(vars(Access))
