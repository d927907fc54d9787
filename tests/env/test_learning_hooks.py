"""A plugin's modules become a learner's observation and action through their own hooks
(Module.observation_space, action_fields, action_space, from_action, contact, per_target),
exactly as the built-ins do: nothing in coopsim.env names a module."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from coopsim.env.batch import BatchWorld
from coopsim.env.episode import Episode
from coopsim.env.mapping import ActionError, LearningError
from coopsim.env.metrics import collisions
from coopsim.model.commands import Command
from coopsim.model.errors import RegistryError
from coopsim.model.module import Module
from coopsim.model.params import ParamSpec
from coopsim.model.plugins import MODULES, ROBOT_TYPES, motion_module
from coopsim.model.robot_type import Assembly, RobotType
from coopsim.plugins.robots.single import chassis
from coopsim.sim.simulation import Simulation
from helpers import box, robot, scenario, target


class Lux(Module):
    """A light meter: the robot's x, m, as lux, within [0, max_lux]."""

    label = "lux_hooks_test"
    params = (ParamSpec("max_lux", "float", "brightest reading", 4.0, 0.1, 100.0, "lx"),)
    commands = (Command(9710, "read", "lux_hooks_test", kind="read", doc="lux"),)
    fields = ("lux",)

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return np.clip(frame.pose[rows, :1], 0.0, p["max_lux"][:, None])

    @classmethod
    def observation_space(cls, params, n_targets):
        return [0.0], [params["max_lux"]]


class Glow(Module):
    """Per target, one value: a reading whose width follows the targets."""

    label = "glow_hooks_test"
    commands = (Command(9711, "read", "glow_hooks_test", kind="read", doc="per target"),)
    per_target = 1

    @classmethod
    def field_names(cls, n_targets):
        return tuple(f"glow{i}" for i in range(n_targets))


class Touch(Module):
    """A contact switch of the plugin's own."""

    label = "touch_hooks_test"
    commands = (Command(9712, "read", "touch_hooks_test", kind="read", doc="0 or 1"),)
    fields = ("hit",)
    contact = True

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return frame.contacts[rows].max(axis=1, keepdims=True)


class Beacon(Module):
    """Nothing to read: it cannot be observed (observation_space's default is None)."""

    label = "beacon_hooks_test"
    commands = (Command(9713, "ping", "beacon_hooks_test", kind="action", doc="nothing"),)


class Throttle(Module):
    """Forward speed and turn rate, m/s and rad/s; a learner's turn is stored halved."""

    label = "throttle_hooks_test"
    params = (ParamSpec("top", "float", "largest forward speed, m/s", 0.3, 0.0, 2.0, "m/s"),)
    commands = (Command(9714, "go", "throttle_hooks_test", data=(2, 2), kind="motion",
                        doc="forward m/s, turn rad/s"),)
    command_fields = ("forward", "turn")
    action_fields = ("forward m/s", "turn rad/s")

    @classmethod
    def action_space(cls, params):
        return (-params["top"], -1.0), (params["top"], 1.0)

    @classmethod
    def from_action(cls, action, params):
        return float(action[0]), float(action[1]) / 2

    @classmethod
    def actuate(cls, frame, rows, p, commands):
        frame.physics.drive(rows, commands[:, 0], commands[:, 1])


class Lamp(RobotType):
    label = "lamp_hooks_test"
    modules = ("beacon_hooks_test", "throttle_hooks_test", "lux_hooks_test", "glow_hooks_test",
               "touch_hooks_test")
    footprint = 0.2

    @classmethod
    def build(cls, spec):
        body, member = chassis(spec.name, "chassis", spec.position[0], spec.position[1],
                               spec.yaw, cls.modules)
        return Assembly((member,), (body,))


for registry, cls in ((MODULES, Lux), (MODULES, Glow), (MODULES, Touch), (MODULES, Beacon),
                      (MODULES, Throttle), (ROBOT_TYPES, Lamp)):
    if cls.label not in registry:
        registry.register(cls.label)(cls)


def lamp_world(**kwargs):
    return scenario([robot("r1", 1.0, 0.0, type=Lamp.label)],
                    targets=[target("red", 3, 3), target("blue", -3, 3)], **kwargs)


def test_a_plugins_modules_give_the_observation_and_action_spaces():
    episode = Episode(lamp_world(), ("r1",))
    amap = episode.maps["r1"]
    assert amap.observe == ("lux_hooks_test", "glow_hooks_test", "touch_hooks_test")
    assert [lo.tolist() for lo in amap.low] == [[0.0], [-math.inf] * 2, [-math.inf]]
    assert amap.high[0].tolist() == [4.0] and amap.widths == (1, 2, 1)
    assert amap.motion == "throttle_hooks_test" == motion_module(Lamp.modules)
    assert amap.action_low.tolist() == [-0.3, -1.0]
    assert amap.action_fields == ("forward m/s", "turn rad/s")
    assert amap.per_target == (0, 1, 0)
    episode.act({"r1": [0.2, 0.8]})  # stored as the module's from_action says
    row = episode.sim.robots.index["r1"]
    assert episode.sim.commands["throttle_hooks_test"][row].tolist() == [0.2, 0.4]
    with pytest.raises(ActionError, match=r"turn rad/s = 1.5 is outside the "
                                          r"throttle_hooks_test bound \[-1, 1\]"):
        episode.act({"r1": [0.0, 1.5]})
    snap = episode.tick()
    assert episode.observation(snap, "r1")["lux_hooks_test"].tolist() == pytest.approx([1.0],
                                                                                      abs=0.01)


def test_a_module_without_a_reading_cannot_be_observed_and_says_so():
    with pytest.raises(LearningError, match="module beacon_hooks_test cannot be observed"):
        Episode(lamp_world(), ("r1",), observe=["beacon_hooks_test"])


def test_batched_worlds_refuse_a_motion_module_that_converts_actions_itself():
    with pytest.raises(LearningError, match="throttle_hooks_test turns them into commands"):
        BatchWorld(lamp_world(), 2, observe=["lux_hooks_test"])


def test_collisions_read_every_module_that_declares_contact():
    touching = [box("W", 1.69, 0.0, size=(1.0, 4.0))]  # its face 0.01 m inside the chassis
    for kind, carried in ((Lamp.label, Touch.label), ("single", "bumper")):
        spec = scenario([dataclasses.replace(robot("r1", 1.0, 0.0), type=kind)], touching)
        sim = Simulation(spec)
        for _ in range(3):
            sim.command({})
            sim.actuate()
            sim.physics()
            sim.sense()
        assert sim.snapshot.reading("r1", carried).max() == 1.0
        assert collisions(sim.snapshot, "r1") == 1.0
        assert math.isnan(collisions(sim.snapshot, "nobody"))
    free = Simulation(scenario([robot("r1", type=Lamp.label),
                                robot("r2", 3.0, type=Lamp.label)]))
    assert collisions(free.snapshot, "r1") == 0.0


def test_a_module_whose_actions_cannot_become_its_commands_is_refused_at_registration():
    class Lever(Module):
        label = "lever_hooks_test"
        action_fields = ("pull N",)  # and no command_fields to store it in

    class Odd(Module):
        label = "odd_hooks_test"
        per_target = -1

    for cls, words in ((Lever, "need as many command_fields"), (Odd, "per_target must be")):
        with pytest.raises(RegistryError, match=f"invalid declaration: .*{words}"):
            MODULES.register(cls.label)(cls)
        assert cls.label not in MODULES
