"""Kinds of Python code on the copies backend (coopsim.env.copystage): measured over every copy
at once after the compiled call, each copy seeing its own robots alone, reading what the world
backend reads; a kind reading what the copies do not carry sends the batch to the world
backend, saying why."""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("numba")

import coopsim.env  # noqa: E402,F401 -- registers coopsim/Scenario-v0
from coopsim.env.batch import BatchWorld  # noqa: E402
from coopsim.env.copies import CopyBatch, batch_world  # noqa: E402
from coopsim.env.mapping import LearningError  # noqa: E402
from coopsim.model.module import Module  # noqa: E402
from coopsim.model.plugins import MODULES, ROBOT_TYPES  # noqa: E402
from coopsim.model.robot_type import Assembly, RobotType  # noqa: E402
from coopsim.plugins.robots.single import chassis  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402
from helpers import box, chassis_type, robot, scenario, target  # noqa: E402
from learnhelpers import ROOT  # noqa: E402

OFFICE = str(ROOT / "scenarios" / "office.scenario")
TOL = 1e-9  # m, rad: the world backend's copies sit at offsets (tests/env/test_copies.py)


class Gauge(Module):
    """A kind of Python code that asks the engine (frame.physics) what a world answers of a
    one-body robot: its body by role, a point on it, a described robot's joints (none)."""

    label = "gauge_copies_test"
    fields = ("x", "y", "yaw", "tip_x", "tip_y", "tip_yaw", "q1")

    @classmethod
    def sense(cls, frame, rows, p, prev):
        physics = frame.physics
        return np.column_stack((physics.poses(rows, "hull"), physics.points(rows, "tip"),
                                physics.described_positions(rows, 1)))


class Prober(Module):
    """A kind of Python code reaching into the engine past the documented calls."""

    label = "prober_copies_test"
    fields = ("n",)

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return np.full((len(rows), 1), float(len(frame.physics.world.robots)))


class Spot(Module):
    """A kind of Python code reading its robot's place in the frame it is handed."""

    label = "spot_copies_test"
    fields = ("x", "y")

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return frame.pose[rows, :2]


class Pusher(Module):
    """An acting kind of Python code that stops its robot through the engine (before the
    composed call, whose drive then moves it)."""

    label = "pusher_copies_test"
    command_fields = ("force",)

    @classmethod
    def actuate(cls, frame, rows, p, commands):
        frame.physics.set_velocity(rows, np.zeros((len(rows), 3)))


class Wheel(Module):
    """A motion kind of Python code: a learner's forward speed and yaw rate handed to the
    engine's drive."""

    label = "wheel_copies_test"
    command_fields = ("forward", "turn")
    action_fields = ("forward m/s", "turn rad/s")

    @classmethod
    def actuate(cls, frame, rows, p, commands):
        frame.physics.drive(rows, commands[:, 0], commands[:, 1])


for kind in (Gauge, Prober, Spot, Pusher, Wheel):
    if kind.label not in MODULES:
        MODULES.register(kind.label)(kind)
SEER = chassis_type("seer_copies_test", ("motors", "lidar", "light", Spot.label))
GAUGED = chassis_type("gauged_copies_test", ("motors", "sonar", Gauge.label))
PROBED = chassis_type("probed_copies_test", ("motors", "sonar", Prober.label))


class Hulled(RobotType):
    """``single``'s chassis naming its body ``hull`` and a point ``tip`` on it."""

    label, modules, footprint = "hulled_copies_test", ("motors", "sonar", Gauge.label), 0.2

    @classmethod
    def build(cls, spec):
        body, member = chassis(spec.name, "chassis", spec.position[0], spec.position[1],
                               spec.yaw, cls.modules, refs={"hull": "chassis"})
        return Assembly((replace(member, points={"tip": ("chassis", (0.3, 0.1))}),), (body,))


if Hulled.label not in ROBOT_TYPES:
    ROBOT_TYPES.register(Hulled.label)(Hulled)
SCANNER = chassis_type("scanner_copies_test", ("motors", "sonar", "lidar"))
PUSHED = chassis_type("pushed_copies_test", ("motors", "sonar", Pusher.label))
WHEELED = chassis_type("wheeled_copies_test", (Wheel.label, "sonar"))


def _same(copies, world, snap_w, when: str) -> None:
    oc, ow = copies.observation(), world.observation(snap_w)
    assert sorted(oc) == sorted(ow), when
    for label, want in ow.items():
        if label == "gps":  # the world backend's reads the big floor's frame
            want = want - world.offsets.reshape((len(want),) + (1,) * (want.ndim - 2) + (2,))
        assert np.allclose(oc[label], want, rtol=0, atol=TOL, equal_nan=True), (when, label)


def _run_both(spec, k, agents, act, steps, reset_at=None, gap=None):
    """Both backends stepped alike with ``act(step)`` (K, A, d); the copies batch, the world
    batch and the world's last snapshot, every observation compared on the way."""
    copies = batch_world(spec, k, agents, None, None, gap, seed=0)
    world = batch_world(spec, k, agents, None, None, gap, seed=0, backend="world")
    assert copies.agents == world.agents
    assert copies.backend == "copies", copies.backend_reason
    copies.reset(seed=4)
    snap = world.reset(seed=4)
    _same(copies, world, snap, "reset")
    for s in range(steps):
        if s == reset_at:
            which = np.arange(k) % 2 == 0
            copies.reset_copies(which)
            world.reset_copies(which)
        a = act(s)
        copies.act(a)
        world.act(a)
        copies.tick()
        snap = world.tick()
        _same(copies, world, snap, f"step {s}")
    return copies, world, snap


def test_office_as_bundled_runs_on_the_copies_and_reads_what_the_world_backend_reads():
    """Its default observations hold the turtlebot's lidar (a kind of Python code), which sent
    the batch to the world backend; every copy's walkers wander their own way, so a lidar
    that saw another copy's robots would read otherwise than the world backend's."""
    k = 3
    rng = np.random.default_rng(2)
    copies, world, snap = _run_both(OFFICE, k, None,  # the agents: the robots undriven, tb3
                                    lambda s: rng.uniform(-0.22, 0.22, (k, 1, 2)), 80,
                                    reset_at=40)
    assert copies.agents == ("tb3",) and "lidar" in copies.maps[0].observe
    scans_c, scans_w = copies.snapshot().extra["lidar"], snap.extra["lidar"]
    for c in range(k):
        name = f"c{c}_tb3"
        assert np.allclose(scans_c.of(name), scans_w.of(name), rtol=0, atol=TOL)
    assert len(scans_c.of("c0_tb3")) == 360


def test_each_copy_casts_against_its_own_robots_alone():
    """Two seers a copy, r2 across r1's view of a lamp: in copy 0 r2 drives out of the way,
    in copy 1 it stays. r1's lidar (a fan from its mounting point) and its light sensor (one
    ray to the lamp, shadowed by robots) see copy 1's r2 in copy 1 alone, as on the world
    backend; noise and dropout included. A kind reading its robot's place reads the world
    backend's big floor (the copies laid out alike, the gap between them given)."""
    def seers(*noise):
        params = (("lidar", "beams", 16), ("lidar", "max_range", 3.0), ("lidar", "x", 0.05),
                  ("light", "gain", 1000.0), *noise)
        return scenario([robot("r1", 0.0, 0.0, 0.0, SEER.label, params),
                         robot("r2", 1.0, 0.0, np.pi / 2, SEER.label, params)],
                        targets=[target("red", 2.5, 0.0)], floor=(8.0, 8.0), dt=0.02)

    exact = seers()  # at rest: the scenario's own scans (from the lidars' mounting points)
    alone = Simulation(exact, seed=0).extra["lidar"]
    first = batch_world(exact, 2, ["r1", "r2"], None, None, seed=0).snapshot().extra["lidar"]
    for name in ("r1", "r2"):
        assert np.allclose(first.of(f"c1_{name}"), alone.of(name), rtol=0, atol=TOL)
    spec = seers(("lidar", "noise", 0.01), ("lidar", "dropout", 5.0), ("light", "noise", 2.0),
                 ("light", "rate", 10.0))  # a reading held between its times, as a world's

    def act(s):
        a = np.zeros((2, 2, 2))
        a[0, 1] = 0.5  # copy 0: r2 drives off the line (it faces +y)
        return a

    copies, _, _ = _run_both(spec, 2, ["r1", "r2"], act, 60, gap=23.0)
    obs = copies.observation()
    spot = obs[Spot.label][:, 0]  # r1 at rest in either copy, the floors 8 m + 23 m apart
    assert np.allclose(spot[1] - spot[0], [8.0 + 23.0, 0.0], rtol=0, atol=TOL)
    light = obs["light"][:, 0, 0]  # r1's
    assert light[0] > 100.0 and light[1] < 10.0  # the lamp 2.5 m off, seen in copy 0 alone
    ahead = copies.snapshot().extra["lidar"]
    r2_gone = ahead.of("c0_r1")[8]  # the beam straight ahead (16 beams all round)
    r2_there = ahead.of("c1_r1")[8]
    assert r2_there < 1.0 < r2_gone


def test_a_kind_asking_the_engine_reads_on_the_copies_what_a_world_answers():
    """A one-body robot naming its body and a point on it: the body's pose and the point by
    role and name (NaN for the robot naming none), no described joint (NaN), as the world
    backend answers, the copies on their grid."""
    spec = scenario([robot("r1", 0.0, 0.0, 0.0, Hulled.label),
                     robot("r2", 1.0, 0.5, 1.0, GAUGED.label)])
    k, rng = 2, np.random.default_rng(6)
    copies, _, _ = _run_both(spec, k, ["r1", "r2"],
                             lambda s: rng.uniform(0.0, 0.4, (k, 2, 2)), 20)
    seen = copies.observation()[Gauge.label]  # (K, 2 robots, 7)
    assert np.isfinite(seen[:, 0, :6]).all() and np.isnan(seen[:, 1]).all()
    assert np.isnan(seen[:, :, 6]).all()
    turn = seen[:, 0, 2]  # r1's tip 0.3 m ahead and 0.1 m left of its centre
    ahead = seen[:, 0, 3:5] - seen[:, 0, :2]
    assert np.allclose(ahead, np.column_stack((0.3 * np.cos(turn) - 0.1 * np.sin(turn),
                                                0.3 * np.sin(turn) + 0.1 * np.cos(turn))))


def test_a_kind_reaching_past_the_engine_calls_sends_the_batch_to_the_world_backend(caplog):
    spec = scenario([robot("r1", 0.0, 0.0, 0.0, PROBED.label)])
    with caplog.at_level(logging.INFO, logger="coopsim.env.copies"):
        batch = batch_world(spec, 2, ["r1"], ["sonar", Prober.label])
    assert isinstance(batch, BatchWorld) and batch.backend == "world"
    assert "for world" in batch.backend_reason and "frame.physics" in caplog.text
    with pytest.raises(LearningError, match=f"copies backend cannot run.*{Prober.label}"):
        batch_world(spec, 2, ["r1"], ["sonar", Prober.label], backend="copies")
    with pytest.raises(LearningError, match="backend must be"):
        batch_world(spec, 2, backend="gpu")
    assert isinstance(batch_world(spec, 2, ["r1"], ["sonar"]), CopyBatch)  # the default


@pytest.mark.parametrize("kind", ["epuck", "kilobot", "thymio", "swarmbot", "turtlebot3"])
def test_every_robot_type_reads_on_the_copies_what_it_reads_on_the_world_backend(kind):
    """Two robots of a type a copy, a lamp and a box, every module observed (their kinds of
    Python code among them: leds, light, line, lidar, proximity sensors), driven at random
    within their bounds, a copy reset half way."""
    lit = (("leds", "color", 0xFF0000),) if "leds" in ROBOT_TYPES.get(kind).modules else ()
    red = replace(box("b", 0.5, -0.3, (0.2, 0.2)), color=(200, 30, 30))  # r1's camera sees it
    spec = scenario([robot("r1", -0.3, 0.0, 0.0, kind, lit), robot("r2", 0.3, 0.1, 3.0, kind)],
                    objects=[red, box("grey", 0.6, 0.6, (0.2, 0.2))],
                    targets=[target("red", 0.5, 0.5)], floor=(3.0, 3.0), dt=0.02)
    k, rng = 3, np.random.default_rng(7)
    probe = batch_world(spec, k, ["r1", "r2"], None, None, seed=0)
    low, high = probe.action_low, probe.action_high
    copies, _, _ = _run_both(spec, k, ["r1", "r2"],
                             lambda s: rng.uniform(low, high, (k, *low.shape)), 60, reset_at=30)
    if lit:  # r1's LEDs show their parameter's red, r2's are off
        assert (copies.observation()["leds"][:, 0, 0] == 0xFF0000).all()
        assert not copies.observation()["leds"][:, 1].any()


def test_a_gripper_runs_on_the_copies_holding_nothing_as_on_the_world_backend():
    """Its ``held`` view (a kernel reading what the engine holds): a batch stores no gripper
    command, so nothing is held on either backend, boxes touched or not."""
    spec = scenario([robot("r1", 0.0, 0.0, 0.0, "gripperbot"),
                     robot("r2", 1.0, 0.0, 0.0, "gripperbot")],
                    objects=[replace(box("b", 0.45, 0.0, (0.2, 0.2)), mass=0.5)])
    k, rng = 2, np.random.default_rng(4)
    copies, _, _ = _run_both(spec, k, ["r1", "r2"],
                             lambda s: rng.uniform(-0.3, 0.3, (k, 2, 2)), 30, reset_at=15)
    assert copies.backend == "copies" and "gripper" in copies.maps[0].observe
    assert not copies.observation()["gripper"].any()


def test_a_driven_robot_carrying_a_kind_of_python_code_runs_on_the_copies(tmp_path):
    """office with its first walker carrying a lidar beside its sonar (measured every step,
    for its driver): the copies backend, reading what the world backend reads."""
    text = (ROOT / "scenarios" / "office.scenario").read_text()
    text = text.replace("../worlds/", f"{ROOT / 'worlds'}/")
    text = text.replace("type        single\nname        walker1",
                        f"type        {SCANNER.label}\nname        walker1")
    assert f"{SCANNER.label}\nname        walker1" in text
    spec = tmp_path / "office.scenario"
    spec.write_text(text)
    k, rng = 2, np.random.default_rng(3)
    copies, _, snap = _run_both(str(spec), k, None,
                                lambda s: rng.uniform(-0.22, 0.22, (k, 1, 2)), 40)
    assert copies.kinds.stage is not None and "lidar" in copies.kinds.stage.labels
    for c in range(k):
        name = f"c{c}_walker1"
        assert np.allclose(copies.snapshot().extra["lidar"].of(name), snap.extra["lidar"].of(
            name), rtol=0, atol=TOL)


def test_acting_kinds_of_python_code_act_before_the_compiled_drive_as_in_a_world():
    """A kind stopping its robot through frame.physics.set_velocity acts before the motors'
    compiled drive (a world's stage before its composed call), which moves the robot on."""
    spec = scenario([robot("r1", 0.0, 0.0, 0.0, PUSHED.label)])
    k = 2
    copies, _, _ = _run_both(spec, k, ["r1"], lambda s: np.full((k, 1, 2), 0.2), 20)
    assert np.allclose(copies.snapshot().poses[:, :2], [0.04, 0.0], rtol=0, atol=TOL)
    # a motion kind of Python code driving through the engine's drive: on the copies too
    spec = scenario([robot("r1", 0.0, 0.0, 0.0, WHEELED.label),
                     robot("r2", 0.0, 1.0, 0.0, WHEELED.label)])
    rng = np.random.default_rng(1)
    copies, _, _ = _run_both(spec, k, ["r1", "r2"],
                             lambda s: rng.uniform([0.2, -0.5], [0.4, 0.5], (k, 2, 2)), 30,
                             reset_at=15)
    assert copies.motion == Wheel.label and copies.backend == "copies"
    assert np.linalg.norm(copies.snapshot().poses[:, :2] - [[0, 0], [0, 1]] * k, axis=1).min() \
        > 0.02


def test_a_velocity_drive_flies_on_the_copies_as_on_the_world_backend(tmp_path):
    """holonomic robots (their velocity module's kernel handing the engine's set_velocity,
    no stage of Python code): two agents a copy flown at random and a third tracking a
    figure-eight with its driver (the reference in its copy's own frame, as the driver reads
    its pose there), a copy reset half way; every observation and every robot's place as the
    world backend's."""
    text = "[WORLD]\nfile " + str(ROOT / "worlds" / "empty.world") + "\n"
    for i, (pose, more) in enumerate((("-1 0 0", ""), ("1 0.5 1", ""), (
            "0 -1 0", "driver tracking shape eight size 1 period 4\n")), 1):
        text += f"[ROBOT_{i}]\ntype holonomic\nname q{i}\nposition {pose}\n{more}"
    path = tmp_path / "quads.scenario"
    path.write_text(text + "[SETTINGS]\ndt 0.02\nmode lockstep\n")
    k, rng = 3, np.random.default_rng(5)
    copies, world, snap = _run_both(str(path), k, None,
                                    lambda s: rng.uniform(-1.5, 1.5, (k, 2, 3)), 80,
                                    reset_at=40)
    assert copies.agents == ("q1", "q2") and copies.motion == "velocity"
    assert copies.kinds.stage is None  # compiled, as motors
    mine = copies.snapshot()
    rows = [snap.index[name] for name in mine.robots]
    theirs = snap.poses[rows, :2] - np.repeat(world.offsets, 3, axis=0)
    assert np.allclose(mine.poses[:, :2], theirs, rtol=0, atol=TOL)
    q3 = mine.poses[[mine.index[f"c{c}_q3"] for c in range(k)], :2]
    assert (np.linalg.norm(q3 - [0.0, -1.0], axis=1) > 0.3).all()  # off on its eight
    assert not np.allclose(q3[0], q3[1])  # copy 0 started over half way
