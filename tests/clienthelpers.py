"""What the client tests share: the one-robot lockstep scenario and the 'it wandered' check."""

from __future__ import annotations

import math
from pathlib import Path

from coopsim.client import Client
from coopsim.app.run import Run

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = ROOT / "clients"
STEPS = 300
START = (-3.0, -3.0)
SCENARIO = f"""\
[WORLD]
file        {ROOT / "worlds" / "arena.world"}

[ROBOT_1]
type        single
name        robot1
position    {START[0]} {START[1]} 0
orientation 0 0 45

[SETTINGS]
mode        lockstep
dt          0.01
seed        1
"""


def assert_wandered(live: Run) -> None:
    """The robot left its start by > 0.2 m and its chassis is > 0.2 m from every obstacle."""
    with Client(live.network.endpoint, keys=live.network.local_keys) as client:
        state = client.sim().state()
        x, y, _ = client.sim().robots()["robot1"]
    assert math.dist((x, y), START) > 0.2, f"robot1 did not move: at {x:.2f}, {y:.2f}"
    robot = next(r for r in state["robots"] if r["name"] == "robot1")
    gap = clearance(state, x, y) - robot["radius"]
    assert gap > 0.2, f"robot1 ended {gap:.2f} m from an obstacle at {x:.2f}, {y:.2f}"


def clearance(state: dict, x: float, y: float) -> float:
    """Distance from (x, y) to the nearest floor edge or object outline in a /sim state."""
    floor = state["floor"]
    gaps = [floor["length"] / 2 - abs(x), floor["width"] / 2 - abs(y)]
    for obj in state["objects"]:
        dx, dy = x - obj["x"], y - obj["y"]
        if obj["shape"] == "box":  # into the box's frame, then distance to the rectangle
            c, s = math.cos(obj["yaw"]), math.sin(obj["yaw"])
            u, v = abs(c * dx + s * dy), abs(-s * dx + c * dy)
            ou, ov = u - obj["size"][0] / 2, v - obj["size"][1] / 2
            gaps.append(math.hypot(max(ou, 0), max(ov, 0)) + min(max(ou, ov), 0))
        else:  # cylinder, sphere: a circle
            gaps.append(math.hypot(dx, dy) - obj["size"][0] / 2)
    return min(gaps)


def wander_speeds(d) -> tuple[float, float]:
    """The C, JavaScript and Octave ``wander``'s wheel speeds (m/s) from its 11 distances, in
    Python with the same operations in the same order (so the same bits)."""
    right, left, ahead = min(d[0:5]), min(d[6:11]), min(d[3:8])
    if ahead < 0.6:
        turn = 1.0 if right < left else -1.0
        return -0.2 * turn, 0.2 * turn
    steer = 0.25 * (min(right, 2.0) - min(left, 2.0))
    return 0.35 + steer, 0.35 - steer


def wander_reference(live: Run, steps: int = STEPS) -> tuple[float, float, float]:
    """Drive ``live``'s robot1 as the languages' ``wander`` decides, with two plain requests a
    step (sonar read, then set_speeds), stop it and detach; its pose (x, y, yaw) after.

    A language's wander sends one exchange a step instead: on a fresh run of the same
    scenario its robot must end at this pose bit for bit, or the client took the wrong numbers
    out of the exchange's reply."""
    with Client(live.network.endpoint, keys=live.network.local_keys) as client:
        bot = client.robot("robot1")
        for _ in range(steps):
            bot.motors.set_speeds(*wander_speeds(bot.sonar.read()))
        bot.motors.stop()
        bot.detach()
    return robot_pose(live, steps)


def robot_pose(live: Run, steps: int = STEPS) -> tuple[float, float, float]:
    """robot1's pose (x, y, yaw) in ``live`` as /sim says it, once the run (stepping on
    without its controller) is 500 steps past the controller's ``steps``: the robot has come
    to rest after its stop by then (its wheels slow down over a few steps), so the pose does
    not depend on when it is asked."""
    assert live.stepper.wait_step(steps + 500, 60.0) is not None, "the run stopped stepping"
    with Client(live.network.endpoint, keys=live.network.local_keys) as client:
        return tuple(client.sim().robots()["robot1"])
