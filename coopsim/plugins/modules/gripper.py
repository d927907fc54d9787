"""``gripper``: grab the movable object the chassis touches, hold it, release it.

A grab looks for the nearest object with mass whose outline is within ``reach`` m of the
chassis edge and holds it through the engine's run-time constraints
(:meth:`coopsim.sim.simulation.Simulation.attach`): a weld (``weld`` 1, the default: the object
keeps its pose relative to the robot) or a pin (``weld`` 0: it may turn about the contact
point). The pymunk engine holds it with real joints (it still collides and drags on the floor);
the kinematic engine carries it rigidly. Frames and units: world frame, metres, kilograms.
"""

from __future__ import annotations

import math

import numpy as np

from ...model.commands import FAILED, Command
from ...model.errors import ProtocolError, SimulationError
from ...model.module import Module
from ...model.params import ParamSpec
from . import armkernels


class Gripper(Module):
    """Holds one movable object: grab the touched one, release it, read what is held.

    On the wire (robot endpoint commands; the protocol's section 3):

    - ``grab`` (1000): an action: holds the nearest object with mass whose outline is within
      ``gripper.reach`` m (default 0.05) of the chassis edge, welded (``gripper.weld`` 1,
      default) or pinned (0: it may turn about the contact point); text = its name. Error 8
      when nothing movable is within reach or the robot holds something already
      (``gripperbot`` robots). **On a robot with a 3D arm** (``irb120``, ``mh5``, ``lwa``,
      ``mobile_lwa``) it holds the nearest movable object whose centre is within
      ``gripper.reach`` m (default 0.03 for these types) beyond its half-size (half its largest
      extent) of the tool point, welded to the arm's last link; error 8 with the numbers for
      nothing within reach, an object wider at its narrowest than the gripper's stroke
      (``WIDE is 0.1 m across at its narrowest, wider than the 0.068 m the gripper of a1 opens``)
      or heavier than the arm's payload
      (``HEAVY weighs 4 kg, more than the 3 kg payload of a1's arm``)
    """

    label = "gripper"
    description = "grab the touched movable object (within reach m), hold it, release it"
    params = (
        ParamSpec("reach", "float", "largest gap between chassis edge and object to grab, m",
                  0.05, 0.0, 0.5, "m"),
        ParamSpec("weld", "bool", "1: hold rigidly; 0: a pin (the object may turn)", True),
    )
    commands = (
        Command(1000, "grab", "gripper", kind="action",
                doc="hold the nearest movable object within reach; text: its name"),
        Command(1001, "release", "gripper", kind="action",
                doc="let go; text: the object released, or 'nothing held'"),
        Command(1002, "read", "gripper", kind="read",
                doc="[held (1 or 0), its mass kg]; text: its name ('' when none)"),
    )
    fields = ("held", "mass")
    kernel_views = ("held",)  # the run's held board, made once a grasp (armviews)
    kernel_sense = armkernels.gripper_sense

    @classmethod
    def answer_robot(cls, command, robot, row, text, snap):
        """From the snapshot's ``held`` board, so a read right after a grab or release shows
        it (the reading row is measured only at the next step)."""
        name = (snap.extra.get("held") or {}).get(robot, "")
        try:
            mass = snap.object_spec(name).mass if name else 0.0
        except KeyError:  # a replay keeps no object specs
            mass = math.nan
        return name, [1.0 if name else 0.0, mass]

    @classmethod
    def act(cls, command, sim, robot, msg):
        if command.name == "release":
            return sim.detach(robot) or "nothing held"
        holding = (sim.snapshot.extra.get("held") or {}).get(robot)
        if holding:
            raise ProtocolError(FAILED, f"gripper grab: {robot} holds {holding} already; "
                                        "release it first")
        params = sim.world.robot(robot).modules[cls.label]
        info = sim.world.robot(robot).info
        if info is not None and info.arm is not None:
            target = grasped(sim, robot, info.arm, float(params["reach"]))
            try:
                sim.attach(robot, target, "weld")
            except SimulationError as exc:
                raise ProtocolError(FAILED, f"gripper grab: {exc}") from None
            return target
        target = touched(sim, robot, float(params["reach"]))
        if target is None:
            raise ProtocolError(FAILED, f"gripper grab: no movable object within "
                                        f"{float(params['reach']):g} m of {robot}'s chassis")
        try:
            sim.attach(robot, target, "weld" if params["weld"] else "pin")
        except SimulationError as exc:
            raise ProtocolError(FAILED, f"gripper grab: {exc}") from None
        return target


def touched(sim, robot: str, reach: float) -> str | None:
    """The movable object whose outline is nearest ``robot``'s chassis edge, if within
    ``reach`` m (objects another robot holds are left out)."""
    snap = sim.snapshot
    i = snap.robot_index(robot)
    x, y = snap.poses[i, :2]
    radius = sim.world.robot(robot).radius
    taken = set((snap.extra.get("held") or {}).values())
    best, gap = None, reach
    for spec, pose in zip(snap.object_specs, snap.object_poses):
        if spec.static or spec.name in taken:
            continue
        d = outline_distance(spec, pose, x, y) - radius
        if d <= gap:
            best, gap = spec.name, d
    return best


def outline_distance(spec, pose, x: float, y: float) -> float:
    """Distance from (x, y) to the object's outline, m (negative inside a circle; 0 inside a
    box)."""
    dx, dy = x - pose[0], y - pose[1]
    if spec.shape != "box":
        return math.hypot(dx, dy) - spec.radius
    c, s = math.cos(pose[2]), math.sin(pose[2])
    u, v = c * dx + s * dy, -s * dx + c * dy  # in the box's frame
    return math.hypot(max(abs(u) - spec.size[0] / 2, 0.0), max(abs(v) - spec.size[1] / 2, 0.0))


# -- the 3D branch: a parallel gripper on an arm's flange ------------------------------------

def grasped(sim, robot: str, arm, reach: float) -> str:
    """The movable object the arm's gripper can hold now: the nearest whose centre is within
    ``reach`` m beyond its half-size of the tool point (world frame).

    Raises:
        ProtocolError: FAILED with the numbers: nothing within reach, an object wider than
            the gripper's stroke or heavier than the arm's payload.
    """
    from ...model.arm import world_frames

    snap = sim.snapshot
    row = snap.robot_index(robot)
    q = snap.readings["joints"][row][1:1 + arm.dof] if "joints" in snap.readings \
        else arm.start
    tip = world_frames(arm, snap.pose3d[row], q)[-1, :3, 3]
    taken = set((snap.extra.get("held") or {}).values())
    centres = object_centres(snap)
    best, gap = None, math.inf
    for spec, centre in zip(snap.object_specs, centres):
        if spec.static or spec.name in taken:
            continue
        d = float(np.linalg.norm(centre - tip)) - max(_extents(spec)) / 2
        if d <= reach and d < gap:
            best, gap = spec, d
    if best is None:
        raise ProtocolError(FAILED, f"gripper grab: no movable object within {reach:g} m "
                                    f"(beyond its half-size) of {robot}'s tool point "
                                    f"({tip[0]:.3f}, {tip[1]:.3f}, {tip[2]:.3f})")
    stroke = arm.gripper.stroke if arm.gripper is not None else 0.0
    width = min(_extents(best))
    if width > stroke:
        raise ProtocolError(FAILED, f"gripper grab: {best.name} is {width:g} m across at its "
                                    f"narrowest, wider than the {stroke:g} m the gripper of "
                                    f"{robot} opens")
    if best.mass > arm.payload:
        raise ProtocolError(FAILED, f"gripper grab: {best.name} weighs {best.mass:g} kg, more "
                                    f"than the {arm.payload:g} kg payload of {robot}'s arm")
    return best.name


def _extents(spec) -> tuple[float, float, float]:
    """An object's extents along its x, y, z, m (a sphere's are its diameter)."""
    length, width, height = spec.size
    if spec.shape == "sphere":
        return (length, length, length)
    if spec.shape == "cylinder":
        return (length, length, height or length)
    return (length, width, height or width)


def object_centres(snap) -> np.ndarray:
    """(M, 3) the objects' centres now, m, world frame (3D poses when the engine gives them;
    else the planar ones at half the object's height)."""
    if snap.object_pose3d is not None:
        return np.asarray(snap.object_pose3d)[:, :3]
    out = np.zeros((len(snap.object_specs), 3))
    for i, (spec, pose) in enumerate(zip(snap.object_specs, snap.object_poses)):
        out[i] = pose[0], pose[1], max(spec.position[2], _extents(spec)[2] / 2)
    return out
