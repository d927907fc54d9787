"""``arm_pick``: pick-and-place with many arms at once (a batch driver), in-process.

Every arm hosting it works on its own, over and over: it takes the nearest movable object
within ``reach`` m of its base (horizontally) that no other arm has taken, and moves it to the
mirror image of where it lay across its base's x axis (an object 0.15 m to the left of the arm
goes 0.15 m to its right, and back the next time), with the tool pointing down:

  above the object (``lift`` m over its top) -> down to its top -> grab -> up -> above the
  place -> down until its bottom is just over the surface it lay on -> release -> up.

Each move is a synchronised joint move (``joints.set_positions`` at ``speed`` of the top speeds)
to angles from the ``tool`` module's ``ik`` action; a move is over when every joint is within
``tol`` rad of its target and turns slower than 0.05 rad/s (or after ``patience`` s). An arm
found holding an object when the driver starts (a run whose layout was changed by hand, a driver
rebuilt) takes up its task from the grasp. The angles are cached by where the point lies
relative to the arm's pedestal (1 mm), the angles it starts from (0.01 rad) and the joint count:
many identical arms in the same layout (the 100-arm benchmark) solve each move once. The
readings are read as arrays for all arms; only an arm starting a new move makes calls of its
own, so the step costs little between moves.

Parameters: ``speed`` (0-1], ``lift`` m, ``reach`` m, ``tol`` rad, ``patience`` s. It posts
how many objects its arms have put down so far as ``Snapshot.extra["arm_pick_placed"]``; the
arms' joints and the objects' poses show the work (a ``stacked`` or ``delivered`` rule can grade
it).
"""

from __future__ import annotations

import math

import numpy as np

from ...model.arm import MAX_JOINTS
from ...model.driver import Driver
from ...model.errors import CoopsimError
from ..params import number

GRASP = 0.005  # m: the tool point this far above the object's top when grabbing
DROP = 0.003  # m: the placed object's bottom this far above the surface it lay on
ABOVE_PICK, AT_PICK, LIFT, ABOVE_PLACE, AT_PLACE, LEAVE = range(6)
SETTLED = 0.05  # rad/s: slower joints have stopped
# ndarray.all and any without their Python wrappers (every step calls them)
_ALL, _ANY = np.logical_and.reduce, np.logical_or.reduce
PLACED = "arm_pick_placed"  # Snapshot.extra: how many objects the arms have put down so far


class ArmPick(Driver):
    """Pick and place for every arm hosting it: objects to their mirror spots, forever."""

    label = "arm_pick"
    description = ("many arms picking and placing at once (batch): each moves the nearest "
                   "free object within reach to its mirror spot and back, forever")
    batch = True
    params = (
        number("speed", "fraction of the joints' top speeds for every move", 0.8, 0.01, 1.0),
        number("lift", "clearance above objects and surfaces, m", 0.06, 0.0, 1.0, "m"),
        number("reach", "objects this near the base (horizontally) are taken, m", 0.6, 0.05,
               5.0, "m"),
        number("tol", "a joint this near its target has arrived, rad", 0.01, 1e-4, 1.0, "rad"),
        number("patience", "a move taking longer is over anyway, s", 3.0, 0.01, 600.0, "s"),
    )

    def __init__(self, params, rng) -> None:
        super().__init__(params, rng)
        self.cache: dict[tuple, np.ndarray | None] = {}
        self.arms: dict[str, dict] = {}  # robot -> its task state
        self.taken: dict[int, str] = {}  # object row -> robot working on it
        self.placed = 0  # objects put down so far
        self.names: tuple[str, ...] = ()  # the robots of the arrays below, in their order
        self.goals = np.zeros((0, MAX_JOINTS))  # each arm's move's target angles, NaN: none
        self.since = np.zeros(0)  # when each arm's move started, s
        # what step_batch compares the joints reading with: the goals (0 where none) and
        # zero rates; which arms have no goal; tol and the rates' bound, by joint
        self.aims = np.zeros((0, 2 * MAX_JOINTS))
        self.idle = np.zeros(0, dtype=bool)
        self._within: tuple = (None, None)

    def step_batch(self, bots) -> None:
        snap = bots.snapshot
        if snap.object_pose3d is None or "joints" not in snap.readings:
            return
        if tuple(bots.names) != self.names:
            self._index(bots.names)
        joints = bots.read("joints")
        q = joints[:, 1:1 + MAX_JOINTS]
        # angles within tol of the goal and rates within SETTLED of 0, in one pass: the goals
        # (0 where none) beside zero rates, against tol beside SETTLED
        if self._within[0] != self.p["tol"]:
            self._within = (self.p["tol"], np.repeat([self.p["tol"], SETTLED], MAX_JOINTS))
        arrived = _ALL(np.abs(joints[:, 1:1 + 2 * MAX_JOINTS] - self.aims) <= self._within[1],
                       axis=1)
        over = self.idle | (snap.time - self.since >= self.p["patience"]) | arrived
        if not _ANY(over):  # every arm is on its way: nothing to do this step
            return
        poses, held = bots.read("pose"), bots.read("gripper")[:, 0]
        for i in np.flatnonzero(over):
            name = bots.names[i]
            if name not in self.arms and held[i] > 0.5:
                self._resume(bots, name, poses[i], int(joints[i, 0]))
            else:
                self._next(bots, name, poses[i], q[i], int(joints[i, 0]))

    def _index(self, names) -> None:
        """Lay the arrays out for these robots (their order in the batch)."""
        self.names = tuple(names)
        self.goals = np.full((len(names), MAX_JOINTS), np.nan)
        self.since = np.zeros(len(names))
        self.aims = np.zeros((len(names), 2 * MAX_JOINTS))
        self.idle = np.ones(len(names), dtype=bool)
        for i, name in enumerate(names):
            arm = self.arms.get(name)
            if arm is not None and arm["target"] is not None:
                self._aim(i, arm["target"])
                self.since[i] = arm["since"]

    def _aim(self, i: int, target) -> None:
        """Arm ``i``'s goal: ``target`` angles (None: no move)."""
        self.goals[i] = np.nan
        self.aims[i] = 0.0
        self.idle[i] = target is None
        if target is not None:
            self.goals[i] = 0.0  # the joints an arm lacks read 0
            self.goals[i, :len(target)] = target
            self.aims[i, :len(target)] = target

    def _goal(self, name: str, arm: dict, target, now: float) -> None:
        """The arm's move: its target angles (None: no move) from ``now`` (s)."""
        arm["target"], arm["since"] = target, now
        i = self.names.index(name)
        self._aim(i, target)
        if target is not None:
            self.since[i] = now

    def _next(self, bots, name: str, pose, q, dof: int) -> None:
        """The arm's move is over: act (grab, release) and start its next move."""
        arm = self.arms.setdefault(name, {"phase": LEAVE, "object": None, "target": None,
                                          "since": 0.0, "dof": dof})
        bot = bots.robot(name)
        phase = arm["phase"]
        if phase == AT_PICK:
            if not _try(bot.gripper.grab):
                self._drop_task(arm)
        elif phase == AT_PLACE and _try(bot.gripper.release):
            self.placed += 1
            bots.post(PLACED, self.placed)
        if arm["object"] is None or phase == LEAVE:
            self._drop_task(arm)
            if not self._choose(bots, name, arm, pose):
                self._goal(name, arm, None, bots.time)
                return
            arm["phase"] = ABOVE_PICK
        else:
            arm["phase"] = phase + 1
        self._move(bot, arm, pose, q, bots.time)

    def _resume(self, bots, name: str, pose, dof: int) -> None:
        """Take up an arm found holding an object, as if it had just grabbed it: the held
        object (the nearest to the tool point) is placed at the mirror of where it is now."""
        snap = bots.snapshot
        tool = bots.read("tool")[bots.names.index(name), :3]
        rows = [r for r, spec in enumerate(snap.object_specs) if spec.mass > 0]
        row = min(rows, key=lambda r: float(np.linalg.norm(snap.object_pose3d[r, :3] - tool)))
        arm = self.arms[name] = {"phase": AT_PICK, "object": None, "target": None,
                                 "since": 0.0, "dof": dof}
        self._plan(bots, name, arm, pose, row)
        arm["phase"] = LIFT
        q = bots.read("joints")[bots.names.index(name), 1:1 + MAX_JOINTS]
        self._move(bots.robot(name), arm, pose, q, bots.time)

    def _drop_task(self, arm: dict) -> None:
        if arm["object"] is not None:
            self.taken.pop(arm["object"], None)
        arm["object"], arm["phase"] = None, LEAVE

    def _choose(self, bots, name: str, arm: dict, pose) -> bool:
        """Take the nearest free movable object within reach; plan its pick and place."""
        snap = bots.snapshot
        best, best_d = None, self.p["reach"]
        for row, spec in enumerate(snap.object_specs):
            if spec.mass <= 0 or row in self.taken:
                continue
            d = math.hypot(snap.object_pose3d[row, 0] - pose[0],
                           snap.object_pose3d[row, 1] - pose[1])
            if d <= best_d:
                best, best_d = row, d
        if best is None:
            return False
        self._plan(bots, name, arm, pose, best)
        return True

    def _plan(self, bots, name: str, arm: dict, pose, best: int) -> None:
        """Give the arm object ``best``: where to pick it and where to place it."""
        snap = bots.snapshot
        self.taken[best] = name
        x, y, z = (float(v) for v in snap.object_pose3d[best, :3])
        h = float(snap.object_specs[best].size[2])
        c, s = math.cos(pose[3]), math.sin(pose[3])
        fx, fy = c * (x - pose[0]) + s * (y - pose[1]), -s * (x - pose[0]) + c * (y - pose[1])
        mx, my = pose[0] + c * fx + s * fy, pose[1] + s * fx - c * fy  # (fx, -fy) in the world
        top = z + h / 2 + GRASP
        arm.update(object=best, pick=(x, y, top), place=(mx, my, top + DROP))

    def _move(self, bot, arm: dict, pose, q, now: float) -> None:
        """Start the synchronised move of the arm's current phase."""
        lift, phase = self.p["lift"], arm["phase"]
        x, y, z = arm["pick"] if phase in (ABOVE_PICK, AT_PICK, LIFT) else arm["place"]
        if phase not in (AT_PICK, AT_PLACE):
            z += lift
        target = self._ik(bot, arm["dof"], pose, q, (x, y, z))
        if target is None:  # out of reach: leave this object to the others
            self._drop_task(arm)
        else:
            bot.joints.set_positions(*target, self.p["speed"])
        self._goal(bot.name, arm, target, now)

    def _ik(self, bot, dof: int, pose, q, point) -> np.ndarray | None:
        """Joint angles (rad) putting the tool, pointing down, at ``point`` (world frame), or
        None when out of reach; cached relative to the pedestal (see the module's doc)."""
        c, s = math.cos(pose[3]), math.sin(pose[3])
        dx, dy, dz = point[0] - pose[0], point[1] - pose[1], point[2] - pose[2]
        local = (c * dx + s * dy, -s * dx + c * dy, dz)
        yaw = math.atan2(dy, dx)
        key = (dof, *(round(v, 3) for v in local), *(round(float(v), 2) for v in q[:dof]))
        if key not in self.cache:
            try:
                text = bot.tool.ik(*point, math.pi, 0.0, yaw)
            except CoopsimError:
                text = "miss"
            words = str(text).split()
            self.cache[key] = (np.array([float(w) for w in words[3:3 + dof]])
                               if words and words[0] == "ok" else None)
        return self.cache[key]


def _try(action) -> bool:
    """Run a gripper action; False when it was refused (nothing in reach, too wide, heavy)."""
    try:
        action()
    except CoopsimError:
        return False
    return True
