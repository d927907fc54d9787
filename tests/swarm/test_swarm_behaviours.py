"""The subsumption stack: priorities, last-command-wins, reflexes, and the path follower driving
a unicycle robot integrated here (tests/swarm/swarm_sim.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.model.specs import FloorSpec
from coopsim.swarm import (Arbitrator, AvoidCollision, Drive, Drop, GoTo, PathFollower, PickUp,
                           RespectBorders, RobotController, RobotState, Rotate, Sequence, Stop,
                           SwarmError, wheel_speeds)

from swarm_sim import MAX_SPEED, KinematicRobot, run


class Fixed:
    """A behaviour with a set activity and output, recording whether it was asked."""

    def __init__(self, name: str, on: bool, speeds=(0.0, 0.0)) -> None:
        self.name, self.on, self.speeds, self.asked = name, on, speeds, 0

    def active(self, state) -> bool:
        self.asked += 1
        return self.on

    def act(self, state):
        return self.speeds


STATE = RobotState(0.0, 0.0, 0.0)


def test_only_the_highest_priority_active_behaviour_acts():
    high, mid, low = Fixed("high", False), Fixed("mid", True, (0.1, 0.2)), Fixed("low", True)
    decision = Arbitrator([high, mid, low]).decide(STATE)
    assert (decision.behaviour, decision.left, decision.right, decision.index) == \
        ("mid", 0.1, 0.2, 1)
    assert high.asked == 1 and low.asked == 0  # lower layers are not even consulted
    high.on = True
    assert Arbitrator([high, mid, low]).decide(STATE).behaviour == "high"
    with pytest.raises(SwarmError, match="no behaviour is active"):
        Arbitrator([Fixed("off", False)]).decide(STATE)


def test_reflex_beats_command_beats_squad_behaviour():
    bot = KinematicRobot(0.0, 0.0)
    squad_layer = Fixed("squadish", True, (0.3, 0.3))
    ctl = RobotController(bot, reflexes=[AvoidCollision()], squad_behaviours=[squad_layer])
    assert ctl.decide(STATE).behaviour == "squadish" and ctl.layer == "squad"
    ctl.give(GoTo(2.0, 0.0))
    assert ctl.decide(STATE).behaviour == "command" and not ctl.finished
    bumped = RobotState(0.0, 0.0, 0.0, bumper=(1, 0))
    assert ctl.decide(bumped).behaviour == "avoid" and ctl.layer == "reflex"


def test_the_last_command_wins():
    ctl = RobotController(KinematicRobot(0.0, 0.0))
    ctl.give(GoTo(1.0, 0.0))
    ctl.give(GoTo(0.0, 1.0))  # to the left: the robot must turn left, not go straight
    d = ctl.decide(STATE)
    assert d.right > d.left
    ctl.give(Sequence((GoTo(1.0, 0.0), GoTo(2.0, 0.0))))
    assert ctl.command == Sequence((GoTo(1.0, 0.0), GoTo(2.0, 0.0)))
    ctl.give(Stop())  # replaces the sequence, which does not come back
    assert ctl.decide(STATE) == ctl.last and (ctl.last.left, ctl.last.right) == (0.0, 0.0)
    assert ctl.command == Stop() and ctl.sequences.command is None
    with pytest.raises(SwarmError, match="not a command"):
        ctl.give("forward")


def test_pick_up_and_drop_set_the_carried_flag_in_sequence():
    bot = KinematicRobot(0.0, 0.0)
    ctl = RobotController(bot)
    ctl.give(Sequence((PickUp("flagB"), GoTo(0.5, 0.0), Drop())))
    seen = []
    run([bot], lambda: seen.append((ctl.step().behaviour, ctl.carrying)), lambda: ctl.finished)
    assert ("sequence", "flagB") in seen
    assert ctl.carrying is None and math.hypot(bot.x - 0.5, bot.y) < 0.15


@pytest.mark.parametrize("angle", [math.pi / 2, -2.5])
def test_rotate_turns_by_the_angle(angle):
    bot = KinematicRobot(1.0, 1.0, yaw=0.3)
    ctl = RobotController(bot)
    ctl.give(Rotate(angle))
    run([bot], ctl.step, lambda: ctl.finished, max_time=20)
    assert math.cos(bot.yaw - (0.3 + angle)) > math.cos(0.06)
    assert math.hypot(bot.x - 1.0, bot.y - 1.0) < 1e-9  # on the spot


@pytest.mark.parametrize("yaw", [0.0, 2.0, math.pi, -1.0])
def test_path_follower_reaches_a_waypoint(yaw):
    bot = KinematicRobot(-1.0, 0.5, yaw)
    follower = PathFollower([(1.5, -1.0)], tolerance=0.1)

    def step():
        bot.motors.set_speeds(*follower.speeds(bot.x, bot.y, bot.yaw))

    t = run([bot], step, lambda: follower.done(bot.x, bot.y), max_time=30)
    assert math.hypot(bot.x - 1.5, bot.y + 1.0) <= 0.1
    assert t < 10.0  # 2.9 m at up to 0.6 m/s, plus turning and slowing down
    assert max(max(abs(l), abs(r)) for l, r in bot.commanded) <= MAX_SPEED + 1e-12


def test_path_follower_passes_every_waypoint_in_order():
    pts = [(1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
    bot = KinematicRobot(0.0, 0.0)
    follower = PathFollower(pts, tolerance=0.1)
    passed = []

    def step():
        passed.append(follower.index)
        bot.motors.set_speeds(*follower.speeds(bot.x, bot.y, bot.yaw))

    run([bot], step, lambda: follower.done(bot.x, bot.y), max_time=40)
    assert sorted(set(passed)) == [0, 1, 2] and passed == sorted(passed)
    assert math.hypot(bot.x, bot.y - 1.0) <= 0.1


def test_wheel_speeds_saturate_but_keep_the_curvature():
    drive = Drive(max_speed=0.6, axle=0.34)
    left, right = wheel_speeds(1.0, 4.0, drive)
    assert max(abs(left), abs(right)) == pytest.approx(0.6)
    assert (right - left) / 0.34 / ((left + right) / 2) == pytest.approx(4.0)


def test_avoid_collision_turns_ninety_degrees_away_then_moves_on():
    bot = KinematicRobot(0.0, 0.0, 0.0)
    reflex = AvoidCollision(d_crit=0.3, half_angle=math.radians(36))
    ctl = RobotController(bot, reflexes=[reflex])
    ctl.give(GoTo(3.0, 0.0))
    echoes = [2.0] * 11
    echoes[6] = 0.2  # an echo at +18 degrees (left of the nose)
    near = RobotState(0.0, 0.0, 0.0, tuple(echoes))
    d = ctl.decide(near)
    assert d.behaviour == "avoid" and d.right < d.left  # turns right, away from it
    ctl.robot.motors.set_speeds(d.left, d.right)
    # The echo is gone from now on; the latched manoeuvre still runs to its end.
    run([bot], ctl.step, lambda: reflex.phase == "advance", max_time=10)
    assert abs(math.remainder(bot.yaw + math.pi / 2, 2 * math.pi)) < 0.1 + 0.2  # 90 deg right
    assert math.hypot(bot.x, bot.y) <= 0.3 * 0.05 + 1e-9  # turned on the spot (+ one step on)
    run([bot], ctl.step, lambda: ctl.layer == "command", max_time=10)
    assert -bot.y == pytest.approx(0.3 * math.tan(math.radians(36)), abs=0.03)


def test_respect_borders_turns_back_from_the_floor_edge_and_water():
    floor = FloorSpec(4.0, 4.0)
    water = np.array([[0.5, -0.5], [1.5, -0.5], [1.5, 0.5], [0.5, 0.5]])
    reflex = RespectBorders(floor, [water], margin=0.25)
    assert reflex.active(RobotState(1.85, -1.0, 0.0))  # 0.15 m from x = 2, heading out
    assert not reflex.active(RobotState(1.85, -1.0, math.pi))  # heading back in
    assert not reflex.active(RobotState(0.0, -1.0, 0.0))  # far from everything
    assert reflex.active(RobotState(0.35, 0.0, 0.0))  # 0.15 m from the water, heading in
    assert not reflex.active(RobotState(0.35, 0.0, math.pi))
    assert reflex.active(RobotState(1.0, 0.0, math.pi))  # in the water: leave
    out = RobotState(1.85, -1.0, 0.3)
    assert reflex.active(out)  # act() follows active() on the same state, as the arbitrator does
    left, right = reflex.act(out)
    assert left == -right and right > 0  # turning on the spot, counter-clockwise (inwards)
