"""The ``light`` module (the Kilobot's ambient-light sensor): the targets as lamps, inverse-square
falloff, ambient level, saturation, shadows of walls; and phototaxis on it."""

import math

import pytest

from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario, target


def _kilobot(name, x, y=0.0, yaw=0.0, **params):
    """A Kilobot; its light sensor at the chassis centre unless ``x`` (the type's mount,
    behind the centre) is asked for."""
    params = {"x": 0.0, **params}
    return robot(name, x, y, yaw, type="kilobot",
                 params=[("light", k, v) for k, v in params.items()])


def _light(st, name):
    return float(st.snapshot.reading(name, "light")[0])


def test_inverse_square_from_every_lamp_plus_the_room():
    spec = scenario([_kilobot("k", 0.0, ambient=5.0), _kilobot("dark", 4.0, 4.0)],
                    targets=[target("yellow", 1.0, 0.0), target("red", 0.0, -0.5)])
    st = Stepper(Simulation(spec), mode="lockstep")
    st.tick()
    h2 = 0.1 ** 2  # the lamps' default height above the sensor
    assert _light(st, "k") == pytest.approx(5.0 + 10.0 / (1.0 + h2) + 10.0 / (0.25 + h2))
    far = [math.hypot(4.0 - 1.0, 4.0), math.hypot(4.0, 4.5)]
    assert _light(st, "dark") == pytest.approx(sum(10.0 / (d * d + h2) for d in far))


def test_walls_cast_shadows_and_the_reading_saturates():
    wall = box("W", 0.5, 0.0, size=(0.05, 1.0))  # between "shaded" and the lamp
    spec = scenario([_kilobot("shaded", 0.0, ambient=3.0), _kilobot("lit", 1.0, 0.6),
                     _kilobot("behind_lit", 1.0, 0.8)],
                    [wall], targets=[target("yellow", 1.0, 0.0)])
    st = Stepper(Simulation(spec), mode="lockstep")
    st.tick()
    assert _light(st, "shaded") == pytest.approx(3.0)  # the room only
    assert _light(st, "lit") == pytest.approx(10.0 / (0.36 + 0.01))
    assert _light(st, "behind_lit") == 0.0  # in the shadow of "lit": robots cast them too
    st = Stepper(Simulation(scenario([_kilobot("under", 1.0, -0.01, gain=100.0)],
                                     targets=[target("yellow", 1.0, 0.0)])), mode="lockstep")
    st.tick()
    assert _light(st, "under") == 1023.0  # 100 / 0.0101 counts, clipped at the ADC's top


def test_the_kilobots_sensor_sits_behind_its_centre():
    spec = scenario([robot("facing", 0.0, 0.0, 0.0, type="kilobot"),
                     robot("away", 0.0, 0.5, math.pi, type="kilobot")],
                    targets=[target("yellow", 0.3, 0.0), target("red", 0.3, 0.5)])
    st = Stepper(Simulation(spec), mode="lockstep")
    st.tick()
    h2 = 0.01
    near, far = 0.3 + 0.0155, 0.3 - 0.0155  # the sensor 15.5 mm behind the wheels' axis
    assert _light(st, "facing") == pytest.approx(10.0 / (near ** 2 + h2) + 10.0 / (
        near ** 2 + 0.25 + h2), rel=1e-3)
    assert _light(st, "away") == pytest.approx(10.0 / (far ** 2 + h2) + 10.0 / (
        far ** 2 + 0.25 + h2), rel=1e-3)


def test_noise_is_seeded_and_kept_in_range():
    spec = scenario([_kilobot("k", 0.0, noise=50.0)], targets=[target("yellow", 0.3, 0.0)])
    runs = []
    for _ in range(2):
        st = Stepper(Simulation(spec), mode="lockstep")
        runs.append([(st.tick(), _light(st, "k"))[1] for _ in range(20)])
    assert runs[0] == runs[1] and len(set(runs[0])) > 1
    assert all(0.0 <= v <= 1023.0 for v in runs[0])


def _phototaxis(st, name, steps):
    """Run and tumble on one light sensor (it cannot tell where the light comes from, only
    whether it grew): run 1 cm; if the light fell meanwhile, turn about 115 degrees on the
    spot. Returns the light readings after each run."""
    speed, k, after = 0.01, 0, []
    last = _light(st, name)
    while k < steps:
        for _ in range(20):  # run: 20 steps of 0.05 s at 1 cm/s
            st.slots.put(name, "motors", (speed, speed), attach=False)
            st.tick()
        k += 20
        now = _light(st, name)
        after.append(now)
        if now < last:
            for _ in range(50):  # tumble: 0.8 rad/s for 2.5 s
                st.slots.put(name, "motors", (-speed, speed), attach=False)
                st.tick()
            k += 50
            now = _light(st, name)  # turning moved the sensor (it sits off the axis)
        last = now
    return after


@pytest.mark.slow
def test_a_kilobot_finds_the_lamp_by_phototaxis():
    dt = 0.05
    spec = scenario([robot("k", 0.0, 0.0, math.pi, type="kilobot")],
                    targets=[target("yellow", 0.4, 0.3)],
                    floor=(2.0, 2.0), dt=dt)
    st = Stepper(Simulation(spec), mode="lockstep")
    st.tick()
    start = _light(st, "k")
    readings = _phototaxis(st, "k", 6000)
    pose = st.snapshot.poses[st.snapshot.index["k"]]
    assert math.hypot(pose[0] - 0.4, pose[1] - 0.3) < 0.08  # from 0.5 m away, facing away
    assert min(readings[-20:]) > 5 * start  # and it stays by the lamp
