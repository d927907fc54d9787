"""A small helper for arm controllers: move the tool and wait until it is there.

Usage (library): ``from arm import Arm`` beside this file, then ``arm = Arm(bot)`` for a robot
of the coopsim client (``Client().robot(name)``) whose type has an arm (irb120, mh5, lwa,
mobile_lwa). Needs only the coopsim client (pyzmq, msgpack): no numpy.

``Arm.move(x, y, z)`` asks the server's inverse kinematics for the joint angles (``tool.ik``:
world frame, m; the tool pointing straight down, turned by ``yaw`` rad about the vertical),
sends them as one synchronised move (``joints.set_positions``, a motion command: in lockstep it
is the step's command) and then one ``joints.wait`` per step until the tool
point is within ``tol`` m of the goal and has stopped: in lockstep one loop iteration is one
simulation step, so the controller never races ahead of the arm. ``grab`` and ``release`` are
the gripper's actions (answered at once, between two steps).
"""

from __future__ import annotations

import math

DOWN = math.pi  # roll of a tool pointing straight down (its z along the world's -z)


class Arm:
    """One arm robot driven through its ``tool``, ``joints`` and ``gripper`` modules.

    Args:
        bot: A :class:`coopsim.client.Robot` with an arm.
        speed: Fraction [0.001, 1] of the joints' top speeds for every move.
        tol: How near the goal the tool point must come, m.
        settle: Below this tool speed (m/s) the arm has stopped.
        patience: Steps a move may take before it is given up as arrived (a goal the servos
            cannot quite reach: a collision, a heavy load).
    """

    def __init__(self, bot, speed: float = 0.8, tol: float = 0.004, settle: float = 0.02,
                 patience: int = 4000) -> None:
        self.bot, self.speed, self.tol = bot, speed, tol
        self.settle, self.patience = settle, patience
        self.steps = 0  # simulation steps waited so far

    def tool(self) -> tuple[float, float, float]:
        """The tool point now (x, y, z m, world frame)."""
        reading = self.bot.tool.read()
        return reading[0], reading[1], reading[2]

    def move(self, x: float, y: float, z: float, yaw: float = 0.0) -> bool:
        """Move the tool point to (x, y, z) m (world frame), pointing down; True when it
        arrived within ``tol`` (False when ``patience`` ran out first).

        Raises:
            RemoteError: the point is out of reach (error 4 says how far off).
        """
        words = self.bot.tool.ik(x, y, z, DOWN, 0.0, yaw).split()  # an action: no step
        if words[0] != "ok":  # out of reach: move_to refuses it with the sentence (error 4)
            self.bot.tool.move_to(x, y, z, DOWN, 0.0, yaw, self.speed)
        self.bot.joints.set_positions(*(float(w) for w in words[3:]), self.speed)
        last, t_last = self.tool(), None
        for _ in range(self.patience):
            info = self.bot.joints.wait()  # one step of the move
            self.steps += 1
            here = self.tool()
            if t_last is not None:
                moving = math.dist(here, last) / max(info.time - t_last, 1e-9)
                if math.dist(here, (x, y, z)) <= self.tol and moving <= self.settle:
                    return True
            last, t_last = here, info.time
        return False

    def grab(self) -> str:
        """Close the gripper on the nearest object within reach; its name.

        Raises:
            RemoteError: nothing to hold, or too wide or heavy for the gripper (error 7).
        """
        return self.bot.gripper.grab()

    def release(self) -> str:
        """Open the gripper; the name of the object let go."""
        return self.bot.gripper.release()

    def hold(self, steps: int) -> None:
        """Let ``steps`` simulation steps pass with the arm where it is."""
        for _ in range(steps):
            self.bot.joints.wait()
            self.steps += 1
