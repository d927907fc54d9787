"""``servos``: the held joints of a robot from a description file (every moving joint that no
other module drives: not a wheel, not an arm's or a gripper's, not a rotor's), each a position
servo within the file's effort (:mod:`coopsim.description.servos`; docs/robots.md "Legged
robots, humanoids and the held joints").

Reading: ``count`` (the held joints, at most 32 shown), then ``t1..t32``: each one's set point
(rad, or m for a prismatic joint), in the file's order of the held joints; NaN beyond
``count``. Commands:

* ``set_targets t1..tcount``: one set point per held joint (the first 32 when there are more),
  each within the joint's limits (else error 4 naming it, and nothing changes); the servos
  pull the joints to them from the step that takes the command on, and hold them until set
  again;
* ``home``: every held joint back to its start position (the section's ``stance``, else 0
  within the limits).

The robot's ``posture`` reading says where the joints are (all moving joints, in the file's
order); the state document's ``links`` names them.
"""

from __future__ import annotations

import numpy as np

from ...model.commands import OUT_OF_RANGE, Command
from ...model.errors import ProtocolError
from ...description.servos import MAX_SERVOS, check_targets
from ...model.module import Module

SET, HOME = 1.0, 2.0  # the stored command's mode (0: none)


def _servos(robot) -> tuple:
    """The held joints of ``robot`` (a RobotInfo: its imported type's ``SERVOS``)."""
    from ...model.plugins import ROBOT_TYPES

    label = getattr(robot, "type", "")
    kind = ROBOT_TYPES.get(label) if label and label in ROBOT_TYPES else None
    return tuple(getattr(kind, "SERVOS", ()) or ())


class Servos(Module):
    """A described robot's held joints: set points (rad or m) in the file's order.

    On the wire (robot endpoint commands; the protocol's section 3):

    - ``read`` (4500): request nothing; reply ``[count, t1 .. t32]``: a robot from a
      description file with joints no other module drives (protocol 12): its ``count`` held
      joints' set points (rad; m for a prismatic joint) in the file's order of those joints,
      NaN beyond ``count`` (docs/robots.md, *Legged robots, humanoids and the held joints*)
    - ``set_targets`` (4501): request data = one set point per held joint, ``count`` values
      (the first 32 when it has more); reply a motion command: each held joint's position servo
      pulls it to its set point from the step that takes the command on and holds it there; a
      set point past the joint's limits (or not a number), or a count other than the held
      joints', is error 4 naming the joint and its limits, and nothing changes
    """

    label = "servos"
    described_by = ("held",)  # every described robot with a joint no other module drives
    description = ("a robot from a description file: position servos on the joints no other "
                   "module drives (legs, torso, head, hands), set points in rad or m")
    commands = (
        Command(4500, "read", "servos", kind="read",
                doc="count, t1..t32: the held joints' set points (rad or m) in the file's "
                    "order; NaN beyond count"),
        Command(4501, "set_targets", "servos", data=(1, MAX_SERVOS), kind="motion",
                doc="one set point per held joint (rad or m), each within its limits"),
        Command(4502, "home", "servos", kind="motion",
                doc="every held joint back to its start position"),
    )
    fields = ("count", *(f"t{j}" for j in range(1, MAX_SERVOS + 1)))
    command_fields = ("mode", *(f"t{j}" for j in range(1, MAX_SERVOS + 1)))

    @classmethod
    def command_row(cls, command, data, params, robot):
        servos = _servos(robot)
        if not servos:
            raise ProtocolError(OUT_OF_RANGE, f"{getattr(robot, 'name', 'this robot')} has no "
                                              "held joints: servos commands need one")
        if command.name == "home":
            return (HOME, *([0.0] * MAX_SERVOS))
        shown = servos[:MAX_SERVOS]
        why = check_targets(shown, tuple(data))
        if why:
            raise ProtocolError(OUT_OF_RANGE, why)
        return (SET, *map(float, data), *([0.0] * (MAX_SERVOS - len(data))))

    @classmethod
    def actuate(cls, frame, rows, p, commands):
        board = frame.extra.setdefault("_servos", {})
        fresh = [k for k, r in enumerate(rows)
                 if commands[k, 0] != 0.0
                 and not np.array_equal(board.get(int(r), ()), commands[k])]
        if fresh:
            targets = np.full((len(fresh), MAX_SERVOS), np.nan)  # NaN: the joint's home
            for i, k in enumerate(fresh):
                if commands[k, 0] == SET:
                    targets[i] = commands[k, 1:]
                board[int(rows[k])] = commands[k].copy()
            frame.physics.servo_targets(np.asarray(rows)[fresh], targets)
        return None

    @classmethod
    def sense(cls, frame, rows, p, prev):
        t = frame.physics.servo_targets(rows, None)
        out = np.empty((len(rows), 1 + MAX_SERVOS))
        out[:, 0] = np.count_nonzero(~np.isnan(t), axis=1)
        out[:, 1:] = t
        return out
