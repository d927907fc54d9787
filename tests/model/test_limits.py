"""The one table of names and ranges (coopsim.model.limits) and check_robot_spec, the check the
world runs on every robot it builds, whatever path the spec came by."""

from __future__ import annotations

import math

import pytest

from coopsim.model.errors import ParameterError
from coopsim.model.limits import FIELDS, RESERVED_NAMES, check_object_spec, name_problem
from coopsim.model.specs import ObjectSpec, RobotSpec
from coopsim.model.validate import check_robot_spec
from coopsim.sim.world import World

from helpers import scenario


def test_every_numeric_field_of_every_insert_has_a_range():
    assert set(FIELDS) == {"size length", "size width", "size height", "position x",
                           "position y", "position z", "yaw", "mass", "color R", "color G",
                           "color B", "floor length", "floor width", "floor height"}
    assert RESERVED_NAMES == ("sim", "playback", "nameserver", "external")  # external: v11


@pytest.mark.parametrize("name", ["sim", "Sim", "playback", "nameserver", "External", "a/b", "",
                                  "1x", "x" * 65, "x y"])
def test_the_world_refuses_a_robot_the_rule_refuses(name):
    world = World(scenario())
    with pytest.raises(ParameterError) as info:
        world.add_robot(RobotSpec("single", name, (0.0, 0.0, 0.0)))
    assert str(info.value) == name_problem(name)
    assert world.robots == []


def test_check_robot_spec_refuses_a_derived_name_and_a_wild_pose():
    with pytest.raises(ParameterError, match="names a robot 'ttt"):
        check_robot_spec(RobotSpec("team2", "t" * 58, (0.0, 0.0, 0.0)))
    with pytest.raises(ParameterError, match=r"^yaw must be between .* got 1e\+300 rad"):
        check_robot_spec(RobotSpec("single", "r", (0.0, 0.0, 0.0), 1e300))
    with pytest.raises(ParameterError, match=r"^color B must be an integer between 0 and 255"):
        check_robot_spec(RobotSpec("single", "r", color=(0, 0, 999)))
    check_robot_spec(RobotSpec("team2", "t" * 57, (0.0, 0.0, 0.0), -2 * math.pi))


def test_an_object_spec_is_checked_field_by_field():
    good = ObjectSpec("crate", "box", (1.0, 1.0, 1.0), (0.0, 0.0, 0.0), 0.0, 0.0)
    check_object_spec(good)
    with pytest.raises(ParameterError, match="^size width must be between 0.001 and 1000 m"):
        check_object_spec(ObjectSpec("c", "box", (1.0, 1e-300, 1.0), (0.0, 0.0, 0.0)))
    with pytest.raises(ParameterError, match="^object name must be letters"):
        check_object_spec(ObjectSpec("a b", "box", (1.0, 1.0, 1.0), (0.0, 0.0, 0.0)))
