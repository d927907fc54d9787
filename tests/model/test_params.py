"""Typed module parameters and the label registries."""

import math

import pytest

import coopsim
from coopsim.model.errors import ParameterError, RegistryError
from coopsim.model.params import ParamSpec, ParamValues
from coopsim.model.plugins import MODULES, ROBOT_TYPES
from coopsim.model.registry import Registry

SPEED = ParamSpec("max_speed", "float", "largest wheel speed, m/s", 0.6, 0.0, 5.0, "m/s")
COUNT = ParamSpec("rays", "int", "number of rays", 11, 1, 64)
FLAG = ParamSpec("enabled", "bool", "on or off", True)


def test_values_start_at_defaults_and_validate_on_set():
    values = ParamValues([SPEED, COUNT, FLAG])
    assert values.as_dict() == {"max_speed": 0.6, "rays": 11, "enabled": True}
    assert values.set("max_speed", 1) == 1.0 and type(values["max_speed"]) is float
    assert values.set("rays", 5.0) == 5 and type(values["rays"]) is int
    assert values.set("enabled", "false") is False


@pytest.mark.parametrize("name, value, message", [
    ("max_speed", 9.0, "out of range"), ("max_speed", -0.1, "out of range"),
    ("max_speed", math.nan, "finite"), ("max_speed", "fast", "takes a float"),
    ("rays", 2.5, "takes an int"), ("enabled", 7, "takes a bool"),
    ("nope", 1, "unknown parameter 'nope'"),
])
def test_bad_values_are_rejected_and_change_nothing(name, value, message):
    values = ParamValues([SPEED, COUNT, FLAG])
    before = values.as_dict()
    with pytest.raises(ParameterError, match=message):
        values.set(name, value)
    assert values.as_dict() == before


def test_reset_restores_defaults_and_bumps_the_version():
    values = ParamValues([SPEED])
    values.set("max_speed", 2.0)
    version = values.version
    values.reset()
    assert values["max_speed"] == 0.6 and values.version > version


def test_registry_refuses_duplicates_and_names_known_labels():
    reg = Registry("widget")
    reg.register("a")(int)
    with pytest.raises(RegistryError, match="registered twice"):
        reg.register("a")(float)
    with pytest.raises(RegistryError, match=r"unknown widget 'b' \(known: a\)"):
        reg.get("b")


def test_builtin_types_and_modules_are_registered():
    # installed plugin packages (examples/plugin-arm) add their own: count coopsim's only
    assert [t for t in ROBOT_TYPES if ROBOT_TYPES.origin(t).package == "coopsim"] == \
        ["crazyflie", "epuck", "gripperbot", "holonomic", "irb120", "kilobot", "lwa", "mh5",
         "mobile_lwa", "quadrotor", "single", "swarmbot", "team2", "thymio", "turtlebot3"]
    assert set(MODULES) >= {"motors", "sonar", "target", "odometry", "gps", "compass", "bumper",
                            "support", "velocity", "line", "radio", "lidar", "proximity",
                            "rotors", "imu", "mocap", "altimeter", "joints", "tool", "force",
                            "pose"}
    for label, module in MODULES.items():
        for spec in module.params:
            assert spec.min <= spec.default <= spec.max, (label, spec.name)


def test_package_exports_resolve():
    for name in coopsim.__all__:
        assert getattr(coopsim, name) is not None
