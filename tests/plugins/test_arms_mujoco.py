"""The arm types driven through their modules on the real MuJoCo engine: a joint move reaches
its angles in the time ``move_time`` says (and moves in the very first step), ``tool.move_to``
puts the tool point within 2 mm of a world point, a trajectory passes its waypoints, the
gripper picks a cube up and puts it down, and the refusals (limits, NaN, too fast, wrong
count, out of reach, nothing to grab, too heavy, too wide) leave the arm where it was; the
same over a real socket with the commands' documented ids."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from coopsim.client import Client, RemoteError
from coopsim.model.arm import move_time
from coopsim.model.commands import FAILED, OUT_OF_RANGE, WRONG_ARITY
from coopsim.model.errors import ProtocolError
from coopsim.model.specs import ObjectSpec
from coopsim.plugins.robots.arms import IRB120, MH5
from coopsim.sim.drivers import LocalRobot
from coopsim.sim.simulation import Simulation

from helpers import robot, scenario, step_by_hand
from nethelpers import live, wait_until

pytest.importorskip("mujoco")

DT = 0.001
SETTLE = 0.15  # s: the servos' settling after a move's end (a 60 rad/s loop)
DOWN = math.pi  # roll of a tool pointing down


def cube(name="CUBE", x=0.35, y=0.0, size=0.04, mass=0.2, z=None) -> ObjectSpec:
    return ObjectSpec(name, "box", (size, size, size), (x, y, size / 2 if z is None else z),
                      0.0, mass)


def spec(kind="irb120", objects=(), mode="lockstep", dt=DT):
    s = scenario([robot("a1", 0.0, 0.0, type=kind)], objects, dt=dt, mode=mode)
    return replace(s, settings=replace(s.settings, engine="mujoco"))


def arm_sim(kind="irb120", objects=()) -> tuple[Simulation, LocalRobot]:
    sim = Simulation(spec(kind, objects))
    return sim, LocalRobot(sim, "a1")


def angles(bot, dof=6) -> np.ndarray:
    return np.array(list(bot.joints.read())[1:1 + dof])


def tool(bot) -> np.ndarray:
    return np.array(list(bot.tool.read()))


def steps_for(seconds: float) -> int:
    return int(math.ceil(seconds / DT))


def test_a_joint_move_starts_at_once_and_ends_when_move_time_says():
    sim, bot = arm_sim()
    q0 = angles(bot)
    q1 = np.array([0.5, 0.3, -0.2, 0.1, 1.0, 0.0])
    step_by_hand(sim, 1, lambda: bot.joints.set_positions(*q1, 1.0))
    after_one = angles(bot)
    assert np.all(np.sign(after_one - q0)[:5] == np.sign(q1 - q0)[:5])  # moving already
    t = move_time(IRB120, q0, q1, 1.0)
    step_by_hand(sim, steps_for(t + SETTLE))
    assert np.allclose(angles(bot), q1, atol=0.002)
    reading = list(bot.joints.read())
    assert reading[0] == 6 and np.allclose(reading[7:13], 0.0, atol=0.05)  # at rest


def test_move_to_puts_the_tool_point_within_two_millimetres():
    sim, bot = arm_sim()
    for target in ((0.35, 0.1, 0.15), (0.30, -0.2, 0.30)):
        reply = bot.tool.move_to(*target, DOWN, 0.0, 0.3, 0.8)
        seconds, *q = (float(w) for w in reply.split())
        assert seconds > 0 and len(q) == 6
        step_by_hand(sim, steps_for(seconds + SETTLE))
        here = tool(bot)
        assert np.linalg.norm(here[:3] - target) < 0.002
        assert np.allclose(angles(bot), q, atol=0.003)
        w, x, y, z = here[3:]  # the tool's z points down
        assert 1 - 2 * (x * x + y * y) == pytest.approx(-1.0, abs=1e-3)


def test_ik_answers_angles_without_moving_and_says_a_miss():
    sim, bot = arm_sim(kind="mh5")
    before = angles(bot)
    words = bot.tool.ik(0.45, 0.0, 0.2, DOWN, 0.0, 0.0).split()
    assert words[0] == "ok" and float(words[1]) < 0.001 and len(words) == 9
    words = bot.tool.ik(2.0, 0.0, 0.2).split()
    # reach to the wrist, then the flange and the gripper beyond it
    stretched = MH5.reach + 0.08 + MH5.gripper.length
    assert words[0] == "miss" and float(words[1]) == pytest.approx(2.0 - stretched, abs=0.03)
    step_by_hand(sim, 20)
    assert np.allclose(angles(bot), before, atol=1e-3)


def test_a_trajectory_passes_its_waypoints():
    sim, bot = arm_sim(kind="lwa")
    start = angles(bot, 7)
    w1, w2 = start + 0.3, start - 0.2
    step_by_hand(sim, 1, lambda: bot.joints.set_trajectory(0.5, *w1, 1.0, *w2))
    seen = []
    for _ in range(steps_for(1.0 + SETTLE)):
        step_by_hand(sim, 1)
        seen.append(angles(bot, 7))
    seen = np.array(seen)
    assert np.abs(seen[steps_for(0.5) - 1] - w1).max() < 0.05  # within the servo's lag
    assert np.abs(seen[steps_for(0.5) - 20:steps_for(0.5) + 20] - w1).max(axis=1).min() < 0.01
    assert np.allclose(seen[-1], w2, atol=0.002)


def test_the_gripper_picks_a_cube_up_and_puts_it_down():
    sim, bot = arm_sim(objects=[cube()])
    for target in ((0.35, 0.0, 0.10), (0.35, 0.0, 0.025)):
        seconds = float(bot.tool.move_to(*target, DOWN, 0.0, 0.0, 0.8).split()[0])
        step_by_hand(sim, steps_for(seconds + SETTLE))
    empty = list(bot.force.read())[2]  # the fingers' own weight, the tool pointing down
    assert bot.gripper.grab() == "CUBE"
    assert bot.gripper.read().text == "CUBE" and list(bot.gripper.read()) == [1.0, 0.2]
    seconds = float(bot.tool.move_to(0.30, 0.15, 0.25, DOWN, 0.0, 0.0, 0.8).split()[0])
    step_by_hand(sim, steps_for(seconds + SETTLE))
    lifted = sim.snapshot.object_pose3d[0, :3]
    assert lifted[2] > 0.2 and np.linalg.norm(lifted[:2] - [0.30, 0.15]) < 0.02
    fz = list(bot.force.read())[2]
    assert fz - empty == pytest.approx(0.2 * 9.81, abs=0.2)  # the cube's weight on the wrist
    assert bot.gripper.release() == "CUBE"
    step_by_hand(sim, steps_for(1.0))
    dropped = sim.snapshot.object_pose3d[0, :3]
    assert dropped[2] == pytest.approx(0.02, abs=0.005)  # on the floor again
    assert np.linalg.norm(dropped[:2] - [0.30, 0.15]) < 0.05


def test_grabs_the_gripper_cannot_make_are_refused_with_the_numbers():
    sim, bot = arm_sim(objects=[cube("HEAVY", 0.35, 0.0, mass=4.0),
                                cube("WIDE", 0.0, 0.35, size=0.10, mass=0.5)])
    with pytest.raises(ProtocolError) as err:
        bot.gripper.grab()  # at home, 0.3 m above the floor
    assert err.value.code == FAILED and "no movable object within 0.03 m" in str(err.value)
    for target, words in (((0.35, 0.0, 0.03), ("HEAVY weighs 4 kg", "3 kg payload")),
                          ((0.0, 0.35, 0.12), ("WIDE is 0.1 m across", "0.068 m"))):
        seconds = float(bot.tool.move_to(*target, DOWN, 0.0, 0.0, 1.0).split()[0])
        step_by_hand(sim, steps_for(seconds + SETTLE))
        with pytest.raises(ProtocolError) as err:
            bot.gripper.grab()
        assert err.value.code == FAILED and all(w in str(err.value) for w in words)
    assert sim.world.held == {}


def test_refused_commands_leave_the_arm_where_it_is():
    sim, bot = arm_sim()
    step_by_hand(sim, 50)
    before = angles(bot)
    bad = [(lambda: bot.joints.set_positions(0, 2.5, 0, 0, 0, 0), OUT_OF_RANGE, "joint_2"),
           (lambda: bot.joints.set_positions(math.nan, 0, 0, 0, 0, 0), OUT_OF_RANGE, "finite"),
           (lambda: bot.joints.set_velocities(9.0, 0, 0, 0, 0, 0), OUT_OF_RANGE, "joint_1"),
           (lambda: bot.joints.set_trajectory(0.1, 0, 0, 0, 0, 0, 0, 0.2, 2.0, 0, 0, 0, 0, 0),
            OUT_OF_RANGE, "segment 1-2"),
           (lambda: bot.joints.set_positions(0, 0, 0), WRONG_ARITY, "6 angles"),
           (lambda: bot.tool.move_to(3.0, 0.0, 0.5), OUT_OF_RANGE, "m beyond what the arm")]
    for call, code, words in bad:
        with pytest.raises(ProtocolError) as err:
            step_by_hand(sim, 1, call)
        assert err.value.code == code and words in str(err.value)
    step_by_hand(sim, 100)
    assert np.allclose(angles(bot), before, atol=1e-3)


def test_the_arm_modules_over_a_real_socket_with_their_documented_ids():
    with live(spec(mode="realtime"), paused=True) as run, \
            Client(run.network.endpoint, timeout=10.0) as client:
        bot = client.robot("a1")
        ids = {f"{m}.{c.name}": c.id for m in ("joints", "tool", "force", "pose")
               for c in getattr(bot, m).commands().values()}
        assert ids == {"joints.read": 4000, "joints.set_positions": 4001,
                       "joints.set_velocities": 4002, "joints.set_trajectory": 4003,
                       "joints.stop": 4004, "joints.wait": 4005, "tool.read": 4100,
                       "tool.move_to": 4101, "tool.ik": 4102, "force.read": 4200,
                       "pose.read": 4300}
        before = list(bot.joints.read())
        with pytest.raises(RemoteError) as err:
            bot.joints.set_positions(0.0, 0.0, 1.5, 0.0, 0.0, 0.0)
        assert err.value.code == OUT_OF_RANGE and "[-110.0, 70.0] deg" in str(err.value)
        with pytest.raises(RemoteError) as err:
            bot.tool.move_to(0.0, 0.0, 2.0)
        assert err.value.code == OUT_OF_RANGE and "beyond what the arm of a1" in str(err.value)
        step(run, 20)
        assert list(bot.joints.read())[1:7] == pytest.approx(before[1:7], abs=1e-3)
        bot.joints.set_positions(0.2, 0.0, 0.0, 0.0, 1.5, 0.0, 1.0)
        step(run, 300)
        assert list(bot.joints.read())[1:7] == pytest.approx([0.2, 0, 0, 0, 1.5, 0], abs=0.003)
        assert list(bot.pose.read()) == pytest.approx([0.0, 0.0, 0.0, 0.0])
        assert len(list(bot.tool.read())) == 7 and len(list(bot.force.read())) == 6


def step(run, n: int) -> None:
    """Take ``n`` steps of a paused run and wait until they are taken."""
    want = run.stepper.snapshot.step + n
    run.stepper.step(n)
    wait_until(lambda: run.stepper.snapshot.step >= want, timeout=120.0)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["mh5", "lwa", "mobile_lwa"])
def test_every_arm_type_holds_its_home_and_reaches_a_point(kind):
    sim, bot = arm_sim(kind)
    dof = {"mh5": 6}.get(kind, 7)
    home = angles(bot, dof)
    step_by_hand(sim, 200)
    assert np.allclose(angles(bot, dof), home, atol=0.002)  # holds under gravity
    x, y, z = tool(bot)[:3]
    target = (x + 0.05, y + 0.05, z - 0.05)
    seconds = float(bot.tool.move_to(*target, DOWN, 0.0, 0.0, 1.0).split()[0])
    step_by_hand(sim, steps_for(seconds + SETTLE))
    assert np.linalg.norm(tool(bot)[:3] - target) < 0.002


def test_a_move_to_goes_on_under_waits_and_gives_way_to_a_joints_command():
    """The lockstep pattern: move_to (an action between two steps), then one joints.wait per
    step; a later joints command replaces the move at once."""
    sim, bot = arm_sim()
    target = (0.30, 0.15, 0.20)
    seconds = float(bot.tool.move_to(*target, DOWN, 0.0, 0.0, 1.0).split()[0])
    step_by_hand(sim, steps_for(seconds + SETTLE), bot.joints.wait)
    assert np.linalg.norm(tool(bot)[:3] - target) < 0.002
    bot.tool.move_to(0.35, -0.15, 0.20, DOWN, 0.0, 0.0, 1.0)
    home = IRB120.start
    step_by_hand(sim, 1, lambda: bot.joints.set_positions(*home, 1.0))
    step_by_hand(sim, steps_for(move_time(IRB120, angles(bot), home, 1.0) + SETTLE))
    assert np.allclose(angles(bot), home, atol=0.002)


def run_twice_the_same() -> list[np.ndarray]:
    sim, bot = arm_sim(objects=[cube()])
    out = []
    seconds = float(bot.tool.move_to(0.35, 0.0, 0.025, DOWN, 0.0, 0.0, 1.0).split()[0])
    step_by_hand(sim, steps_for(seconds + 0.05), bot.joints.wait)
    bot.gripper.grab()
    step_by_hand(sim, 1, lambda: bot.joints.set_trajectory(0.2, *(angles(bot) + 0.2)))
    step_by_hand(sim, 250)
    out += [np.array(sim.snapshot.readings[m]) for m in ("joints", "tool", "force")]
    return out + [np.array(sim.snapshot.object_pose3d)]


@pytest.mark.slow
def test_the_same_commands_give_the_same_run_bit_for_bit():
    first, second = run_twice_the_same(), run_twice_the_same()
    assert all(np.array_equal(a, b) for a, b in zip(first, second))


@pytest.mark.slow
def test_the_mobile_manipulators_tool_rides_with_its_base():
    sim, bot = arm_sim("mobile_lwa")
    tool0, pose0 = tool(bot)[:3], np.array(list(bot.pose.read()))
    step_by_hand(sim, steps_for(1.0), lambda: bot.motors.set_speeds(0.5, 0.5))
    pose1 = np.array(list(bot.pose.read()))
    moved = pose1[:2] - pose0[:2]
    assert moved[0] > 0.3 and abs(moved[1]) < 0.02 and abs(pose1[3]) < 0.02
    assert np.allclose(tool(bot)[:3] - tool0, [*moved, 0.0], atol=0.01)  # carried along
    assert list(bot.odometry.read())[0] == pytest.approx(moved[0], abs=0.05)
