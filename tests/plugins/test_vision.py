"""The ``leds`` actuator and the coloured-blob ``camera``: colours set as actions, blobs of
LEDs, targets and coloured objects with distance, bearing and size, field of view, range and
occlusion; bad colours refused with error 4."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from coopsim.model.errors import ProtocolError
from coopsim.model.plugins import MODULES
from coopsim.plugins.modules.leds import pack, unpack
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario, target

LEDS = MODULES.get("leds")
CAMERA = MODULES.get("camera")


def _set(st, name, command, *rgb):
    cmd = next(c for c in LEDS.commands if c.name == command)
    return LEDS.act(cmd, st.sim, name, SimpleNamespace(text="", data=tuple(rgb)))


def _omni(name, x, y=0.0, yaw=0.0, **params):
    cam = {"fov": 360.0, "range": 3.0, **params}
    return robot(name, x, y, yaw, type="epuck", params=[("camera", k, v) for k, v in cam.items()])


def test_leds_set_read_back_and_packing():
    st = Stepper(Simulation(scenario([_omni("a", 0)])), mode="lockstep")
    assert _set(st, "a", "set", 255, 0, 0) == "8 LEDs lit"
    st.tick()
    assert st.snapshot.reading("a", "leds").tolist() == [pack(255, 0, 0)] * 8
    _set(st, "a", "set_each", 0, 0, 255, 0, 255, 0)
    st.tick()
    reading = st.snapshot.reading("a", "leds")
    assert unpack(reading[:3]).tolist() == [[0, 0, 255], [0, 255, 0], [0, 0, 0]]


@pytest.mark.parametrize("command, data", [("set", (256, 0, 0)), ("set", (1.5, 0, 0)),
                                           ("set", (-1, 0, 0)),
                                           ("set_each", (0, 0, 0) * 9)])
def test_colours_that_are_not_colours_are_refused_and_nothing_changes(command, data):
    st = Stepper(Simulation(scenario([_omni("a", 0)])), mode="lockstep")
    _set(st, "a", "set", 10, 20, 30)
    with pytest.raises(ProtocolError) as caught:
        _set(st, "a", command, *data)
    assert caught.value.code == 4
    assert st.sim.commands["leds"][0, :8].tolist() == [pack(10, 20, 30)] * 8


def test_the_camera_sees_lit_leds_targets_and_coloured_objects():
    objects = [box("C", -1.0, 1.0, size=(0.2, 0.2))]
    objects = [objects[0].__class__(**{**objects[0].__dict__, "color": (200, 0, 200)})]
    spec = scenario([_omni("a", 0), _omni("b", 1.0, 0.0), _omni("dark", 0.0, -1.0)],
                    objects, targets=[target("green", 0.0, 2.0)])
    st = Stepper(Simulation(spec), mode="lockstep")
    _set(st, "b", "set", 255, 0, 0)
    st.tick()
    blobs = np.array(st.snapshot.extra["camera"].seen["a"])
    assert len(blobs) == 3 and st.snapshot.reading("a", "camera")[0] == 3  # not "dark"
    red = blobs[0]
    assert red[:3].tolist() == [255, 0, 0] and red[3] == pytest.approx(1.0)
    assert red[4] == pytest.approx(0.0) and red[5] == pytest.approx(2 * math.atan(0.035))
    purple = next(b for b in blobs if b[0] == 200)
    assert purple[3] == pytest.approx(math.sqrt(2)) and purple[4] == pytest.approx(3 * math.pi / 4)
    green = next(b for b in blobs if b[1] == 180)
    assert green[3] == pytest.approx(2.0) and green[4] == pytest.approx(math.pi / 2)


def test_field_of_view_range_and_occlusion():
    wall = box("W", 0.0, 1.0, size=(1.0, 0.1))  # between "a" and the target above it
    spec = scenario([_omni("a", 0), _omni("ahead", 1.0), _omni("behind", -1.0),
                     _omni("narrow", 0.0, -1.0, math.pi / 2, fov=40.0),
                     _omni("far", 0.0, -3.5, range=1.0)],
                    [wall], targets=[target("green", 0.0, 2.0)])
    st = Stepper(Simulation(spec), mode="lockstep")
    for name in ("ahead", "behind", "a", "far"):
        _set(st, name, "set", 0, 0, 255)
    st.tick()
    seen = st.snapshot.extra["camera"].seen
    assert sorted(b[3] for b in seen["a"]) == pytest.approx([1.0, 1.0])  # the target: hidden
    assert [b[3] for b in seen["narrow"]] == pytest.approx([1.0])  # "a" ahead; the rest aside
    assert len(seen["far"]) == 0  # everything beyond its 1 m range
    # "behind" sees "a" (1 m) but not "ahead": "a"'s chassis is in the way
    assert [b[3] for b in seen["behind"]] == pytest.approx([1.0])


def test_the_camera_over_the_network_reads_six_numbers_per_blob():
    spec = scenario([_omni("a", 0), _omni("b", 1.0, 0.0)])
    st = Stepper(Simulation(spec), mode="lockstep")
    _set(st, "b", "set", 0, 255, 0)
    st.tick()
    cmd = CAMERA.commands[0]
    text, data = CAMERA.answer_robot(cmd, "a", st.snapshot.reading("a", "camera"), "",
                                     st.snapshot)
    assert len(data) == 6 and data[:3] == [0, 255, 0]


def _coloured(obj, rgb):
    return obj.__class__(**{**obj.__dict__, "color": rgb})


def test_the_camera_sees_movable_coloured_objects_where_they_are_now():
    from helpers import cylinder

    crate = _coloured(box("crate", 1.0, 0.0, size=(0.2, 0.2), mass=0.5), (200, 0, 200))
    ball = _coloured(cylinder("ball", -1.0, 0.0, diameter=0.2, mass=0.5), (0, 200, 200))
    hider = box("hider", 0.0, -0.6, size=(0.3, 0.1), mass=0.5)  # grey: unseen, but in the way
    spec = scenario([_omni("a", 0)], [crate, ball, hider], targets=[target("green", 0.0, -1.0)])
    st = Stepper(Simulation(spec), mode="lockstep")
    st.tick()
    blobs = st.snapshot.extra["camera"].seen["a"]
    assert sorted(b[0] for b in blobs) == [0, 200]  # the crate and the ball; target hidden
    ball_blob = next(b for b in blobs if b[0] == 0)
    assert ball_blob[3] == pytest.approx(1.0, abs=1e-3)
    assert ball_blob[5] == pytest.approx(2 * math.atan2(0.1, 1.0), abs=1e-3)  # its radius
    st.sim.world.objects["crate"][1].body.position = (0.0, 2.0)  # the crate is carried off
    st.tick()
    purple = next(b for b in st.snapshot.extra["camera"].seen["a"] if b[0] == 200)
    assert purple[3] == pytest.approx(2.0, abs=1e-2)
    assert purple[4] == pytest.approx(math.pi / 2, abs=1e-2)
