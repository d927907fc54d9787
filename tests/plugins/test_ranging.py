"""The configurable range sensors: ``lidar`` (beams, field of view, ranges, noise, dropout,
mounting), the ``sonar`` as a configuration of the same machinery, and the IR ``proximity``
module's nonlinear response; against geometry worked out by hand, on real pymunk worlds."""

import math

import numpy as np
import pytest

from coopsim.model.params import ParameterError
from coopsim.plugins.modules import ranging
from coopsim.plugins.modules.proximity import intensity
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario

WALL = box("W", 1.5, 0, size=(1.0, 8.0))  # its face at x = 1.0


def run(scn, steps=1):
    stepper = Stepper(Simulation(scn), mode="lockstep")
    for _ in range(steps):
        stepper.tick()
    return stepper


def lidar(params=(), x=0.0, yaw=0.0, name="r1", type="turtlebot3"):
    """A TurtleBot3 whose lidar sits on its centre unless ``params`` say otherwise."""
    return robot(name, x, 0.0, yaw, type=type,
                 params=[("lidar", k, v) for k, v in (("x", 0.0),) + tuple(params)])


def test_beam_angles_cover_the_field_of_view_right_to_left():
    assert ranging.beam_angles(3, math.pi) == pytest.approx([-math.pi / 2, 0, math.pi / 2])
    full = ranging.beam_angles(360, 2 * math.pi)
    assert full[0] == pytest.approx(-math.pi) and full[-1] == pytest.approx(math.pi - 2 * math.pi / 360)
    assert ranging.increment(360, 2 * math.pi) == pytest.approx(math.radians(1))
    assert ranging.beam_angles(1, 1.0, 0.3) == pytest.approx([0.3])


def test_a_720_beam_lidar_over_90_degrees_sees_the_wall_at_the_right_distances():
    st = run(scenario([lidar([("beams", 720), ("fov", 90.0), ("x", 0.0)])], [WALL]))
    snap = st.snapshot
    scan = snap.extra["lidar"].of("r1")
    assert len(scan) == 720
    angles = ranging.beam_angles(720, math.radians(90))
    assert scan == pytest.approx(1.0 / np.cos(angles), abs=1e-9)  # from the centre to x = 1
    nearest, bearing, beams, angle_min, inc, _ = snap.reading("r1", "lidar")
    assert beams == 720 and angle_min == pytest.approx(-math.pi / 4)
    assert inc == pytest.approx(math.radians(90) / 719)
    assert nearest == pytest.approx(1.0 / math.cos(inc / 2), abs=1e-9)  # two beams straddle 0
    assert abs(bearing) == pytest.approx(inc / 2)


def test_mounting_offset_and_yaw_move_the_origin_and_the_axis():
    # mounted 0.05 m ahead and turned to look left (+90 deg): one beam, the wall far away
    st = run(scenario([lidar([("beams", 1), ("x", 0.05), ("yaw", 90.0)], yaw=-math.pi / 2)],
                      [WALL]))
    assert st.snapshot.extra["lidar"].of("r1")[0] == pytest.approx(1.0, abs=1e-9)
    # mounted 0.2 m to the left, looking ahead: still 1 m to the face; 0.3 m ahead: 0.7 m
    st = run(scenario([lidar([("beams", 1), ("y", 0.2)], yaw=0.0)], [WALL]))
    assert st.snapshot.extra["lidar"].of("r1")[0] == pytest.approx(1.0, abs=1e-9)
    st = run(scenario([lidar([("beams", 1), ("x", 0.3)])], [WALL]))
    assert st.snapshot.extra["lidar"].of("r1")[0] == pytest.approx(0.7, abs=1e-9)


def test_min_range_max_range_and_other_robots():
    st = run(scenario([lidar([("beams", 1), ("max_range", 0.5), ("x", 0.0)])], [WALL]))
    assert st.snapshot.extra["lidar"].of("r1")[0] == pytest.approx(0.5)  # nothing within it
    st = run(scenario([lidar([("beams", 1), ("min_range", 1.5), ("x", 0.0)])], [WALL]))
    assert st.snapshot.extra["lidar"].of("r1")[0] == 0.0  # too close: no return
    st = run(scenario([lidar([("beams", 1), ("x", 0.0)]), robot("b", 0.6, 0.0)]))
    assert st.snapshot.extra["lidar"].of("r1")[0] == pytest.approx(0.6 - 0.2, abs=1e-9)


def test_noise_and_dropout_are_seeded_and_of_the_asked_size():
    params = [("beams", 2000), ("fov", 10.0), ("x", 0.0), ("noise", 0.01), ("dropout", 25.0)]
    a = run(scenario([lidar(params)], [WALL], seed=7)).snapshot.extra["lidar"].of("r1")
    b = run(scenario([lidar(params)], [WALL], seed=7)).snapshot.extra["lidar"].of("r1")
    assert np.array_equal(a, b)  # same seed, same scan, bit for bit
    lost = a == 0.0
    assert 0.2 < lost.mean() < 0.3
    truth = 1.0 / np.cos(ranging.beam_angles(2000, math.radians(10)))
    err = (a - truth)[~lost]
    assert abs(err.mean()) < 0.002 and 0.008 < err.std() < 0.012


def test_robots_with_different_beam_counts_each_get_their_own_scan():
    st = run(scenario([lidar([("beams", 10), ("fov", 20.0)]),
                       lidar([("beams", 4)], name="r2", x=-2.0)], [WALL]))
    scans = st.snapshot.extra["lidar"]
    assert len(scans.of("r1")) == 10 and len(scans.of("r2")) == 4
    assert st.snapshot.reading("r2", "lidar")[2] == 4
    with pytest.raises(ValueError):
        scans.ranges[0, 0] = 1.0  # published read-only


def test_the_sonar_is_the_fan_machinery_with_11_beams_over_180_degrees():
    st = run(scenario([robot(), robot("b", 0.9, 0.7)], [WALL]))
    sonar = st.snapshot.reading("r1", "sonar")
    geometry = st.sim.sensors.frame(st.sim.world, st.sim.world.engine.robot_state(),
                                    st.sim.robots, st.sim.commands, {}, st.sim.dt, None).geometry
    rows = np.array([0])
    same = geometry.cast_fan(rows, ranging.beam_angles(11, math.pi), np.array([2.0]),
                             origins=geometry.pose[rows, :2], edge=geometry.radius[rows])
    assert np.array_equal(sonar, same[0])  # the mounted cast from the centre: the same bits
    assert sonar[5] == pytest.approx(0.8, abs=1e-9)


def test_ir_intensity_rises_as_the_obstacle_nears_and_saturates():
    d = np.array([0.0, 0.005, 0.01, 0.02, 0.04, 0.07, 0.1])
    v = intensity(d, 0.07, 0.01, 4095.0)
    assert v[0] == pytest.approx(4095.0) and v[5] == pytest.approx(0.0) and v[6] == 0.0
    assert (np.diff(v[:6]) < 0).all()  # nearer, brighter
    assert v[1] - v[2] > v[3] - v[4]  # nonlinear: steepest near, flattest far (per m)


def test_epuck_proximity_sensors_see_a_wall_at_their_mounting_angles():
    # the e-puck (radius 0.035) 0.02 m from the wall, facing it: IR0 (-17 deg) and IR7
    # (+17 deg) see it, the others do not
    bot = robot("e", 1.0 - 0.035 - 0.02, 0.0, type="epuck")
    snap = run(scenario([bot], [WALL])).snapshot
    ir = snap.reading("e", "proximity")
    d = (0.02 + 0.035 * (1 - math.cos(math.radians(17)))) / math.cos(math.radians(17))
    assert ir[0] == pytest.approx(intensity(d, 0.04, 0.01, 4095.0), rel=1e-9)  # 4 cm range
    assert ir[7] == pytest.approx(ir[0], rel=1e-9)
    assert not ir[1:7].any()  # IR1 at -49 deg: 4.9 cm to the wall, beyond its 4 cm
    far = run(scenario([robot("e", 0.0, 0.0, type="epuck")], [WALL])).snapshot
    assert not far.reading("e", "proximity").any()


def test_thymio_uses_seven_sensors_and_the_eighth_reads_zero():
    bot = robot("t", 1.0 - 0.056 - 0.01, 0.0, type="thymio",
                params=[("proximity", "noise", 50.0)])
    ir = run(scenario([bot], [WALL], seed=3)).snapshot.reading("t", "proximity")
    assert abs(ir[2] - intensity(0.01, 0.1, 0.01, 4500.0)) < 250  # 1 cm off, noise std 50
    assert ir[7] == 0.0  # no eighth sensor
    assert (ir >= 0).all() and (ir <= 4500.0).all()


@pytest.mark.parametrize("name, value", [("beams", 0), ("beams", 5000), ("fov", 0.5),
                                         ("fov", 361.0), ("max_range", 0.0)])
def test_out_of_range_lidar_parameters_are_refused_with_the_range(name, value):
    st = run(scenario([lidar()]))
    with pytest.raises(ParameterError, match=r"out of range \["):
        st.sim.set_param("r1", "lidar", name, value)
    assert st.sim.world.robot("r1").modules["lidar"]["beams"] == 360  # nothing changed


def test_proximity_groups_its_beam_layouts_once_per_parameter_change(monkeypatch):
    """The rows sharing a beam layout (e-pucks, Thymios) and the mask of unused sensors are
    worked out when the parameter arrays change, not every step; the readings are those of a
    grouping made afresh every step, bit for bit."""
    from coopsim.plugins.modules.proximity import Proximity

    rng = np.random.default_rng(2)
    bots = [robot(f"{kind}{i}", 0.92, 0.4 * i + (2.0 if kind == "epuck" else -2.0),
                  rng.uniform(-1, 1), type=kind)  # beside the wall, facing it more or less
            for i in range(6) for kind in ("epuck", "thymio")]
    scn = scenario(bots, [WALL], seed=4)
    calls = []
    grouped = ranging.configurations
    monkeypatch.setattr(ranging, "configurations",
                        lambda *c: calls.append(len(c[0])) or grouped(*c))

    def readings(fresh: bool) -> list:
        st, out = Stepper(Simulation(scn), mode="lockstep"), []
        for name in st.sim.snapshot.robots:
            st.slots.put(name, "motors", (0.1, 0.12), attach=False)
        for _ in range(12):
            if fresh:
                monkeypatch.setattr(Proximity, "_layouts", ((), None))
            out.append(st.tick().readings["proximity"].copy())
        return out, st
    calls.clear()
    cached, st = readings(False)
    assert len(calls) == 1  # once for the run's parameter arrays, not each step
    st.sim.set_param("epuck0", "proximity", "angle0", -20.0)
    st.tick()
    assert len(calls) == 2  # a parameter changed: grouped again
    again, _ = readings(True)
    assert all(np.array_equal(a, b) for a, b in zip(cached, again))
    assert any((r > 0).any() for r in cached)  # a wall was seen
