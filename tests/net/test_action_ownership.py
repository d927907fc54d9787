"""Actions are the owner's, as motion and parameter writes are: while one
connection owns a robot, every ``action`` command of its modules (found in the robot's own
command table, command 3, not from a list of names) from another connection is error 11 naming
the owner and changes nothing: a gripper does not take or drop the owner's object, a radio
does not send as the owner's robot, LEDs and odometry stay; on a 3D arm ``tool.ik`` and
``tool.move_to`` do not run. Reads stay open; the owner acts; a free robot is open to all."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from coopsim.model.specs import ObjectSpec
from coopsim.net import protocol as p
from coopsim.plugins.modules.joints import MOVES

from helpers import robot, scenario
from nethelpers import Peer, live, lookup

ROOT = Path(__file__).resolve().parents[2]
COMMANDS, CLAIM, RELEASE = 3, 4, 5
GRAB, GRIPPER_READ, RADIO_SEND, RADIO_READ = 1000, 1002, 930, 931
ODOMETRY_READ, LEDS_READ, JOINTS_READ, TOOL_IK, TOOL_MOVE_TO = 400, 2402, 4000, 4102, 4101


def _actions(peer: Peer) -> list[tuple[int, int, str]]:
    """(id, least data count, text rule) of every action command the robot lists."""
    rows = [line.split() for line in peer.ok(COMMANDS)[1].splitlines()]
    return [(int(w[0]), int(w[5]), w[7]) for w in rows if w[8] == "action"]


def _request(command: int, floats: int, text: str) -> tuple[str, list[float]]:
    """A well-formed request for an action: base64 text where one is needed, ``floats`` zeros
    (an LED colour 0, 0, 0; a tool point at the base)."""
    return ("aGk=" if text == "req" else ""), [0.0] * floats


def _patient(run) -> None:
    """A 60 s lease: the owner's claim must not lapse on a busy machine (3 s of silence)."""
    run.stepper.slots.lease = 60.0


def _world_2d():
    grip = robot("grip", 0.0, 0.0, type="gripperbot")
    crate = ObjectSpec("crate", "box", (0.2, 0.2, 0.2), (0.25, 0.0, 0.1), 0.0, 0.5)
    return scenario(robots=[grip, robot("bot", -3.0, 2.0, type="swarmbot"),
                            robot("eye", 3.0, 2.0, type="epuck")],
                    objects=[crate], mode="realtime", dt=0.01, seed=4)


def _intruder_is_refused_every_action(intruder: Peer, reads: list[int]) -> None:
    actions = _actions(intruder)
    assert actions, "the robot lists no action: nothing was checked"
    before = [intruder.ok(r)[1] for r in reads]
    for command, floats, text in actions:
        words, data = _request(command, floats, text)
        reply = intruder.ask(command, words, data=data)
        assert reply[0] == p.OWNED == 11 and reply[2] == command, reply
        assert "is owned by the connection from 127.0.0.1:" in reply[1], reply[1]
        assert "actions (" in reply[1] and "refused as motion commands are" in reply[1]
    assert [intruder.ok(r)[1] for r in reads] == before, "a refused action changed nothing"


def test_no_action_of_a_2d_robot_from_another_connection_while_one_owns_it():
    with live(_world_2d()) as run:
        _patient(run)
        for name, reads in (("grip", [GRIPPER_READ]), ("bot", [RADIO_READ]),
                            ("eye", [LEDS_READ])):
            endpoint = lookup(run.network.endpoint, f"/{name}")
            owner, intruder = Peer(endpoint), Peer(endpoint)
            owner.ok(CLAIM)
            _intruder_is_refused_every_action(intruder, reads)
            if name == "grip":  # the owner acts; once free, anyone may
                assert owner.ok(GRAB)[1] == "crate"
                assert intruder.ask(1001)[0] == p.OWNED  # the owner's object is not dropped
                assert intruder.ok(GRIPPER_READ)[1] == "crate"
            if name == "bot":
                reply = intruder.ask(RADIO_SEND, "aGk=")
                assert reply[0] == p.OWNED, "radio sends as the owner's robot"
                assert owner.ok(RADIO_SEND, "aGk=")[1].startswith("queued")
            owner.ok(RELEASE)
            for command, floats, text in _actions(intruder):
                words, data = _request(command, floats, text)
                assert intruder.ask(command, words, data=data)[0] != p.OWNED
            owner.close()
            intruder.close()


def test_tool_ik_move_to_and_the_gripper_of_an_owned_arm_refuse_another_connection():
    pytest.importorskip("mujoco")
    cube = ObjectSpec("cube", "box", (0.04, 0.04, 0.04), (0.35, 0.0, 0.02), 0.0, 0.2)
    s = scenario([robot("a1", 0.0, 0.0, type="irb120")], [cube], dt=0.002, mode="realtime")
    with live(replace(s, settings=replace(s.settings, engine="mujoco")), paused=True) as run:
        _patient(run)
        endpoint = lookup(run.network.endpoint, "/a1")
        owner, intruder = Peer(endpoint), Peer(endpoint)
        owner.ok(CLAIM)
        listed = {c for c, _, _ in _actions(intruder)}
        assert {TOOL_IK, TOOL_MOVE_TO, GRAB, GRAB + 1} <= listed
        _intruder_is_refused_every_action(intruder, [GRIPPER_READ])
        reply = intruder.ask(TOOL_MOVE_TO, data=[0.35, 0.1, 0.15])
        assert reply[0] == p.OWNED, reply
        assert "actions (tool move_to here)" in reply[1]
        assert "a1" not in run.stepper.sim.extra.get(MOVES, {}), "no move was left for a step"
        assert intruder.ok(JOINTS_READ)[4] == owner.ok(JOINTS_READ)[4]  # reads stay open
        assert owner.ok(TOOL_IK, data=[0.35, 0.1, 0.15])[1].split()[0] == "ok"
        owner.ok(RELEASE)
        assert intruder.ok(TOOL_IK, data=[0.35, 0.1, 0.15])[1].split()[0] == "ok"
        owner.close()
        intruder.close()


def test_the_python_client_raises_robot_owned_for_another_connections_action():
    from coopsim.client import Client, RobotOwned

    with live(_world_2d()) as run, Client(run.network.endpoint, timeout=10.0) as owner, \
            Client(run.network.endpoint, timeout=10.0) as intruder:
        _patient(run)
        mine = owner.robot("grip")
        mine.claim()
        theirs = intruder.robot("grip")
        with pytest.raises(RobotOwned) as err:
            theirs.gripper.grab()
        assert err.value.code == p.OWNED and "gripper grab" in str(err.value)
        assert mine.gripper.grab() == "crate"
        with pytest.raises(RobotOwned):
            theirs.gripper.release()
        assert theirs.gripper.read().text == "crate"


GROUND = ("single", "swarmbot", "gripperbot", "holonomic", "epuck", "kilobot", "turtlebot3",
          "thymio")
FLYING_AND_ARMS = ("crazyflie", "quadrotor", "irb120", "mh5", "lwa", "mobile_lwa")


def _refusals(spec, names) -> list[tuple[str, int, int]]:
    """(robot, command, error) of every action another connection sends each owned robot."""
    out = []
    with live(spec) as run:
        _patient(run)
        for name in names:
            endpoint = lookup(run.network.endpoint, f"/{name}")
            owner, intruder = Peer(endpoint), Peer(endpoint)
            owner.ok(CLAIM)
            for command, floats, text in _actions(intruder):
                words, data = _request(command, floats, text)
                out.append((name, command, intruder.ask(command, words, data=data)[0]))
            owner.close()
            intruder.close()
    return out


def test_every_action_of_every_robot_type_is_the_owners():
    """The attacker's sweep of the issue: each built-in robot type (team2's pair aside: its
    robots are swarmbots' modules), every action it lists, from a second connection."""
    ground = scenario([robot(f"g{i}", -4.0 + i, 0.0, type=t) for i, t in enumerate(GROUND)],
                      mode="realtime", floor=(12.0, 12.0))
    got = _refusals(ground, [f"g{i}" for i in range(len(GROUND))])
    if importlib.util.find_spec("mujoco") is not None:
        s = scenario([robot(f"f{i}", -4.0 + 1.5 * i, 2.0, type=t)
                      for i, t in enumerate(FLYING_AND_ARMS)], mode="realtime",
                     floor=(12.0, 12.0), dt=0.002)
        got += _refusals(replace(s, settings=replace(s.settings, engine="mujoco")),
                         [f"f{i}" for i in range(len(FLYING_AND_ARMS))])
    assert len(got) >= 20 and {c for _, c, _ in got} >= {401, 930, 1000, 1001, 2400, 2401}
    assert [g for g in got if g[2] != p.OWNED] == []


PLUGIN = '''
import json, sys
import numpy as np
sys.path.insert(0, "tests")
from coopsim.model.commands import Command
from coopsim.model.module import Module
from coopsim.model.plugins import MODULES, ROBOT_TYPES
from coopsim.model.robot_type import Assembly
from coopsim.plugins.robots.single import Single, chassis
from helpers import robot, scenario
from nethelpers import Peer, live, lookup

PINGS = []

class Beacon(Module):
    label = "beacon"
    fields = ("pings",)
    commands = (Command(7000, "ping", "beacon", kind="action", doc="count a ping"),)

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return np.full((len(rows), 1), float(len(PINGS)))

    @classmethod
    def act(cls, command, sim, robot, msg):
        PINGS.append(robot)
        return f"pong {len(PINGS)}"

class BeaconBot(Single):
    label = "beaconbot"
    modules = ("motors", "beacon")

    @classmethod
    def build(cls, spec):
        body, member = chassis(spec.name, "chassis", spec.position[0], spec.position[1],
                               spec.yaw, cls.modules)
        return Assembly((member,), (body,))

MODULES.register("beacon")(Beacon)
ROBOT_TYPES.register("beaconbot")(BeaconBot)
with live(scenario([robot("b1", type="beaconbot")], mode="realtime")) as run:
    run.stepper.slots.lease = 60.0
    endpoint = lookup(run.network.endpoint, "/b1")
    owner, intruder = Peer(endpoint), Peer(endpoint)
    owner.ok(4)
    out = {"intruder": intruder.ask(7000)[:2], "owner": owner.ask(7000)[:2], "pings": PINGS}
print(json.dumps(out))
'''


@pytest.mark.slow
def test_a_plugin_modules_action_is_the_owners_too():
    """Decided by the command's declared kind, so a module no one here wrote is covered."""
    done = subprocess.run([sys.executable, "-c", PLUGIN], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["intruder"][0] == p.OWNED and "actions (beacon ping here)" in out["intruder"][1]
    assert out["owner"] == [0, "pong 1"] and out["pings"] == ["b1"]
