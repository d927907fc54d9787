"""``tool.move_to`` of an arm from its URDF, in process (lockstep, ``mujoco`` engine, 500 Hz):
reachable points, and the distance from each to where the tool ends (``tool`` reading).
Goal: <= 5 mm.

Two ways to pick the points:

* :func:`errors`: given points (the Z1's, in front of it, its tool pointing down);
* :func:`check` (the table's, every arm): points the arm itself reaches: the joints are sent
  to :data:`SAMPLES` seeded random offsets (at most :data:`SPREAD` rad) from home within the
  limits, the tool's pose read there, the arm sent home, then ``move_to`` each pose (position
  and orientation) in turn from where the last one ended.

    PYTHONPATH=.:tests/robots python -m robotchecks.arm_move [URDF [TOOL]]   (default: the Z1)
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from . import Check

DT = 0.002  # s: 500 Hz
DOWN = (0.0, math.pi / 2, 0.0)  # roll, pitch, yaw: a tool frame whose x points down (Z1's)
#: m, base frame: z >= 0.25 keeps the Z1's gripper (0.15 m) off the floor.
POINTS = ((0.35, 0.0, 0.25), (0.30, 0.15, 0.25), (0.40, -0.10, 0.30), (0.25, -0.20, 0.25),
          (0.40, 0.05, 0.25))
GOAL_MM = 5.0
SAMPLES, SPREAD, SEED = 4, 0.5, 52
SETTLE_S = 0.3  # s held after each move before the tool is read
#: The tool link of each arm file of example-robot-data (else :func:`tool_of` picks one).
TOOLS = {"z1.urdf": "link06", "panda.urdf": "panda_hand_tcp",
         "panda_collision.urdf": "panda_hand_tcp", "kinova.urdf": "j2s6s200_end_effector",
         "xarm7.urdf": "link_eef", "so100.urdf": "gripper", "so101.urdf": "gripper_frame_link",
         "baxter.urdf": "left_gripper", "talos_left_arm.urdf": "gripper_left_base_link"}
#: Homes (rad) where the defaults do not do: the Z1 folded at zero is singular; Baxter's
#: shoulder (s1, 50 N m in its file) holds its stretched arm only with the real robot's
#: gravity springs, which the URDF lacks: its arm works hanging, elbow bent.
HOMES = {"z1.urdf": (0.0, 0.8, -0.8, 0.0, 0.0, 0.0),
         "baxter.urdf": (0.0, 1.0, 0.0, 1.5, 0.0, 0.5, 0.0)}


def tool_of(d) -> str:
    """The tool link of description ``d``: the file's named one (:data:`TOOLS`), else
    ``tool0`` when there is one (ROS-Industrial's flange), else the deepest link on the
    longest chain of 1 to 7 revolute joints without a prismatic one."""
    name = os.path.basename(d.source)
    if name in TOOLS:
        return TOOLS[name]
    if any(link.name == "tool0" for link in d.links):
        return "tool0"
    joint = {j.child: j for j in d.joints}
    best = (0, 0, "")
    for link in d.links:
        moving, depth, at = 0, 0, link.name
        while at in joint:
            kind = joint[at].kind
            if kind == "prismatic":
                moving = 99
                break
            moving += kind in ("revolute", "continuous")
            depth, at = depth + 1, joint[at].parent
        if 1 <= moving <= 7:
            best = max(best, (moving, depth, link.name))
    return best[2]


def _arm(urdf: str, tool: str, home, folder: str, z: float):
    """(stepper, LocalRobot) of one arm at (0, 0, ``z``) on a 4 m floor."""
    from coopsim.formats.files import load
    from coopsim.sim.drivers import LocalRobot
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    Path(folder, "w.world").write_text("[FLOOR]\nsize 4 4 0.1\n")
    path = Path(folder, "s.scenario")
    homed = f"home {' '.join(f'{q:g}' for q in home)}\n" if home else ""
    path.write_text(f"[WORLD]\nfile w.world\n[SETTINGS]\nengine mujoco\ndt {DT}\n"
                    f"mode lockstep\nseed 1\n[ROBOT_1]\nname a1\ndescription {urdf}\n"
                    f"tool {tool}\n{homed}position 0 0 {z:g}\n")
    stepper = Stepper(Simulation(load(str(path))), mode="lockstep")
    stepper.tick()
    return stepper, LocalRobot(stepper.sim, "a1")


def _seconds(reply) -> float:
    """The move's time (s) from a ``move_to`` reply (its text's first word)."""
    if isinstance(reply, (int, float)):
        return float(reply)
    return float(str(getattr(reply, "text", reply)).split()[0])


def _settle(stepper, max_s: float = 10.0):
    """Step until the arm's joints stop (every rate < 1e-3 rad/s), at most ``max_s`` s of
    sim time, then :data:`SETTLE_S` more; the last snapshot."""
    for k in range(int(max_s / DT)):
        snap = stepper.tick()
        joints = np.asarray(snap.reading("a1", "joints"))
        dof = int(joints[0])
        if k > 10 and np.abs(joints[1 + 7:1 + 7 + dof]).max() < 1e-3:
            break
    for _ in range(int(SETTLE_S / DT)):
        snap = stepper.tick()
    return snap


def rpy(qw: float, qx: float, qy: float, qz: float) -> tuple[float, float, float]:
    """Roll, pitch, yaw (rad) of a unit quaternion, R = Rz(yaw) Ry(pitch) Rx(roll)."""
    roll = math.atan2(2 * (qw * qx + qy * qz), 1 - 2 * (qx * qx + qy * qy))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (qw * qy - qz * qx))))
    yaw = math.atan2(2 * (qw * qz + qx * qy), 1 - 2 * (qy * qy + qz * qz))
    return roll, pitch, yaw


def _targets(bot, home: np.ndarray) -> list[np.ndarray]:
    """:data:`SAMPLES` joint targets near ``home`` within the arm's limits (seeded)."""
    lower, upper = _limits(bot)
    rng = np.random.default_rng(SEED)
    out = []
    for _ in range(SAMPLES):
        q = home + rng.uniform(-SPREAD, SPREAD, len(home))
        out.append(np.clip(q, lower + 0.05, upper - 0.05))
    return out


def _limits(bot) -> tuple[np.ndarray, np.ndarray]:
    """The arm's joint limits (rad) from its robot type's arm spec."""
    from coopsim.model.plugins import ROBOT_TYPES

    arm = ROBOT_TYPES.get(bot._sim.world.robot(bot.name).type).ARM
    return np.array(arm.lower, dtype=float), np.array(arm.upper, dtype=float)


def reached(urdf: str, tool: str = "", home=None) -> list[float]:
    """The tool's distance (mm) from each pose the arm reached by joint moves, after
    ``move_to`` that pose (module doc)."""
    from coopsim.formats.description import load_description
    from coopsim.description.robot import DescriptionSpec

    tool = tool or tool_of(load_description(DescriptionSpec(str(urdf))))
    home = HOMES.get(os.path.basename(str(urdf))) if home is None else home
    with tempfile.TemporaryDirectory() as tmp:
        stepper, bot = _arm(str(urdf), tool, home, tmp, 1.0)
        joints = np.asarray(stepper.tick().reading("a1", "joints"))
        lower, upper = _limits(bot)  # the angles as read may lie a hair past a limit at 0
        start = np.clip(joints[1:1 + int(joints[0])], lower, upper)
        poses = []
        for q in _targets(bot, start):
            bot.joints.set_positions(*q, 0.5)
            poses.append(np.asarray(_settle(stepper).reading("a1", "tool"))[:7].copy())
        bot.joints.set_positions(*start, 0.5)
        _settle(stepper)
        out = []
        for pose in poses:
            seconds = _seconds(bot.tool.move_to(*pose[:3], *rpy(*pose[3:7]), 0.5))
            for _ in range(math.ceil((seconds + SETTLE_S) / DT)):
                snap = stepper.tick()
            out.append(1000 * float(np.linalg.norm(np.asarray(snap.reading("a1", "tool"))[:3]
                                                   - pose[:3])))
        return out


def check(urdf: str) -> Check:
    """:func:`reached`, ok when every point is within :data:`GOAL_MM`."""
    found = reached(urdf)
    worst = max(found)
    return Check(f"move_to {len(found)} reached poses: worst {worst:.2f} mm, median "
                 f"{float(np.median(found)):.2f} mm", worst <= GOAL_MM)


def errors(urdf: str, tool: str, home: str = "", points=POINTS) -> list[float]:
    """The tool's distance from each of ``points`` (tool pointing down) after its move, mm."""
    from coopsim.sim.stepper import Stepper  # noqa: F401 -- the arm's run (_arm)

    homes = tuple(float(w) for w in home.split()[1:]) if home else None
    with tempfile.TemporaryDirectory() as tmp:
        stepper, arm = _arm(urdf, tool, homes, tmp, 0.0)
        out = []
        for point in points:
            seconds = _seconds(arm.tool.move_to(*point, *DOWN, 0.5))
            for _ in range(math.ceil((seconds + SETTLE_S) / DT)):
                stepper.tick()
            at = np.asarray(stepper.tick().reading("a1", "tool"))[:3]
            out.append(1000 * float(np.linalg.norm(at - point)))
        return out


def main() -> None:
    from .kinds import share
    urdf = sys.argv[1] if len(sys.argv) > 1 else str(share() / "z1_description/urdf/z1.urdf")
    found = reached(urdf, sys.argv[2] if len(sys.argv) > 2 else "")
    print(" ".join(f"{e:.2f}" for e in found), f"mm; largest {max(found):.2f} mm")


if __name__ == "__main__":
    main()
