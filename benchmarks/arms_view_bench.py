"""Benchmark: what showing arms costs per step, against the step itself (issue 34).

One ``irb120`` on the mujoco engine at 1 kHz (dt 0.001 s) moving between two poses, ticked
unpaced on this thread (``Stepper.tick``). In the same run, per step and on the same snapshots:
the Foxglove arm messages (``ArmScene.messages``: ``/scene/arms`` and ``/tf/arms``), the ROS 2
arm messages (``RosScene.arm_messages``: ``/R/joint_states`` and the arm's ``/tf``), the state
stream message (``encode_state``, with the objects' 3D block) and the recording's block encoding
with the objects' 3D block (``FrameEncoder.encode``, one step per block, the worst case). Each
figure is the median over blocks of its mean per step, and the ratio to the step's own time.

Usage: python benchmarks/arms_view_bench.py [--blocks 9] [--block-steps 200] [--cubes 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from coopsim.foxglove.arms import ArmScene
from coopsim.model.plugins import module_columns
from coopsim.model.snapshot import column_values
from coopsim.model.specs import (FloorSpec, ObjectSpec, RobotSpec, ScenarioSpec, Settings,
                                 WorldSpec)
from coopsim.net.statestream import encode_state
from coopsim.recording import format as rf
from coopsim.ros2.scene import RosScene
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

POSES = ((0.8, 0.3, -0.2, 0.4, 0.6, -0.5), (-0.6, 0.1, 0.3, -0.4, 0.9, 0.5))


def _spec(cubes: int) -> ScenarioSpec:
    objects = tuple(ObjectSpec(f"cube{k}", "box", (0.05, 0.05, 0.05),
                               (0.4, -0.2 + 0.1 * k, 0.025), 0.0, 0.1) for k in range(cubes))
    return ScenarioSpec(WorldSpec(FloorSpec(3.0, 3.0)),
                        robots=(RobotSpec("irb120", "irb", (0.0, 0.0, 0.0), 0.0),),
                        objects=objects, name="arms_view",
                        settings=Settings(dt=0.001, mode="lockstep", engine="mujoco"))


def _move(stepper: Stepper, pose) -> None:
    from coopsim.model.plugins import MODULES
    joints = MODULES.get("joints")
    robot = stepper.sim.world.robots[0]
    command = next(c for c in joints.commands if c.name == "set_positions")
    row = joints.command_row(command, (*pose, 1.0), None, robot.info)
    stepper.slots.put("irb", "joints", row, attach=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=9)
    ap.add_argument("--block-steps", type=int, default=200)
    ap.add_argument("--cubes", type=int, default=3)
    args = ap.parse_args()
    stepper = Stepper(Simulation(_spec(args.cubes)), mode="lockstep", speed=0)
    layout = stepper.sim.world.describe()
    fox, ros = ArmScene(layout), RosScene(layout, stepper.snapshot)
    columns = module_columns()
    encoder = rf.FrameEncoder(rf.robot_columns(columns))
    costs = {k: [] for k in ("step", "foxglove", "ros2", "stream", "record")}
    for b in range(args.blocks):
        _move(stepper, POSES[b % 2])
        spent = dict.fromkeys(costs, 0.0)
        for k in range(args.block_steps):
            t0 = time.perf_counter()
            snap = stepper.tick()
            t1 = time.perf_counter()
            fox.messages(snap, 0)
            t2 = time.perf_counter()
            ros.arm_messages(snap, 0)
            t3 = time.perf_counter()
            encode_state(snap, "lockstep", 1.0, 0.0, 0, False, 0).to_wire()
            t4 = time.perf_counter()
            robots = np.concatenate([snap.poses, snap.velocities,
                                     column_values(snap, columns)], axis=1).T[:, None, :]
            bodies = snap.object_poses.T[:, None, :]
            three = np.concatenate([snap.pose3d[:, 2:7], snap.twist3d[:, 2:6]], 1).T[:, None]
            objects3d = snap.object_pose3d[:, 2:7].T[:, None, :]
            encoder.encode(k, [snap.step], [snap.time], [k], 0, robots, bodies, k == 0,
                           three_d=three, objects_3d=objects3d)
            t5 = time.perf_counter()
            for key, dt in zip(costs, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
                spent[key] += dt
        for key in costs:
            costs[key].append(spent[key] / args.block_steps)
    step = statistics.median(costs["step"])
    print(f"one irb120 at 1 kHz, {args.cubes} cubes, {args.blocks} blocks of "
          f"{args.block_steps} steps (median of block means):")
    for key, values in costs.items():
        us = statistics.median(values) * 1e6
        print(f"  {key:9s} {us:8.1f} us/step  {statistics.median(values) / step:6.3f} x step")
    print(f"  sim speed {0.001 / step:.1f}x real time on this thread")


if __name__ == "__main__":
    main()
