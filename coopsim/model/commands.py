"""Command declarations and the protocol's error codes: what a server or module accepts.

A :class:`Command` says what one request takes (its id, name, the numbers of integer params and
floats, whether the text field is needed) and what *kind* of request it is, which is all a robot
server needs to dispatch it. Modules declare their commands here, so the protocol's tables, the
robot endpoints, ``coopsim list`` and every client are built from the modules themselves
(docs/protocol.md is the normative description). No zmq, no msgpack: this layer is pure data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

from .errors import ProtocolError

# -- error codes (docs/protocol.md section 3) ------------------------------------------------------
OK = 0
BAD_MESSAGE = 1  # not msgpack, not a 5-array, wrong field types, more than one frame, too large
UNKNOWN_COMMAND = 2  # the server has no such command id (or the robot lacks that module)
WRONG_ARITY = 3  # wrong number of params or data, or a missing text
OUT_OF_RANGE = 4  # a value outside its allowed range (or not finite)
UNKNOWN_NAME = 5  # no such port, robot, object, module, parameter or target
NOT_ALLOWED = 6  # valid, but not allowed in the current mode or state (or outside the data folders)
VERSION_MISMATCH = 7  # the client speaks another protocol version
FAILED = 8  # valid, but could not be carried out (bad file, object off the floor, ...)
TIMEOUT = 9  # the simulation did not answer in time (e.g. a step that never came)
INTERNAL = 10  # a bug in the server; the request changed nothing it could roll back
OWNED = 11  # another connection owns the robot: motion commands are its alone (text names it)
BUSY = 12  # this connection has its share of requests in flight already (inverse kinematics)
TELEOPERATED = 13  # a person's teleop took the robot from this connection; given back on release
# protocol 10: an external robot's pose refused (not finite, a teleport, off the
# floor, or the robot is not external) / more poses than the robot's max_rate (a flood)
POSE_REFUSED = 14
POSE_FLOOD = 15
NOT_SHARED = 16  # a squad whose robots host no ``shared`` driver: it cannot be steered or felt

ERROR_NAMES = {
    OK: "ok", BAD_MESSAGE: "bad message", UNKNOWN_COMMAND: "unknown command",
    WRONG_ARITY: "wrong arity", OUT_OF_RANGE: "out of range", UNKNOWN_NAME: "unknown name",
    NOT_ALLOWED: "not allowed", VERSION_MISMATCH: "version mismatch", FAILED: "failed",
    TIMEOUT: "timeout", INTERNAL: "internal error", OWNED: "owned", BUSY: "busy",
    TELEOPERATED: "teleoperated", POSE_REFUSED: "pose refused", POSE_FLOOD: "pose flood",
}
ERROR_NAMES[NOT_SHARED] = "not shared"
# protocol 11: a motion command to an external robot (its pose is its stream's)
EXTERNAL_ROBOT = 17
ERROR_NAMES[EXTERNAL_ROBOT] = "external robot"
# protocol 12: an image read over the per-read budget, or over its connection's (or everyone's)
# budget of image bytes in flight (coopsim.net.imagereads); nothing was queued
OVER_BUDGET = 18
ERROR_NAMES[OVER_BUDGET] = "over budget"

#: When each error code is answered: the generated reference's error table
#: (docs/reference/protocol.md); docs/protocol.md says how errors travel.
ERROR_WHEN = {
    OK: "success",
    BAD_MESSAGE: "not msgpack; not an array of 5; wrong field types; more than one frame; over "
                 "65,536 bytes",
    UNKNOWN_COMMAND: "no such command id at this server, or the robot lacks that module",
    WRONG_ARITY: "wrong number of params or data; a required text missing or malformed",
    OUT_OF_RANGE: "a value outside its range, or not finite (NaN, inf)",
    UNKNOWN_NAME: "no such port, robot, object, target colour or index, module or parameter",
    NOT_ALLOWED: "valid but not allowed now (e.g. changing the world during a replay); a file "
                 "outside the run's data folders or a path holding a NUL byte (`load`, "
                 "`record`); a lockstep motion command from a controller detached for holding "
                 "the run past its patience",
    VERSION_MISMATCH: "the client's protocol version is not one the server serves",
    FAILED: "valid but could not be done: a bad file (text `path:line: what is wrong`), an "
            "object off the floor, a name taken, on `mujoco` a body that would start below the "
            "floor or inside another body or static geometry, a world's 25,001st object",
    TIMEOUT: "the simulation did not carry the request out in time",
    INTERNAL: "a bug in the server; please report it",
    OWNED: "a motion command, parameter write (`param_set`), action (any command of kind "
           "`action`) or claim, release, detach for a robot another connection owns, or a "
           "`/squads` steer or release for a squad another connection steers; the text names "
           "the owner: `robot2 is owned by the connection from 127.0.0.1:41234: motion commands "
           "from other connections are refused until ...`",
    BUSY: "the connection already has its share of requests in flight (`tool.move_to`/`ik` in "
          "real time: 4), or 64 are in flight from every connection together; nothing was "
          "queued: `busy: this connection has 4 requests in flight (at most 4); send it again "
          "once an answer came`",
    TELEOPERATED: "a motion command, parameter write, action or claim (or a `/squads` steer or "
                  "release) from the connection a person's teleop displaced, while the person "
                  "drives: `robot1 is driven by teleop (the connection from 127.0.0.1:52120): "
                  "... it is yours again, without a claim, when the teleop releases it, "
                  "disconnects or stays silent for the 3 s lease`; changes nothing",
    POSE_REFUSED: "an external robot's pose (`external_pose`, command 20, or the ROS 2 pose "
                  "topics) not taken: a number not finite, not 3 or 7 numbers, a quaternion's "
                  "norm more than 0.1 from 1 (within it, taken normalised), a height below "
                  "-0.05 m or above 1,000 m, a 3-number pose's yaw beyond ±2π rad, off the "
                  "floor, a jump farther from the last pose than its `max_speed` allows (plus "
                  "`max_jump`), or the robot is not external; the text says which: `real: a "
                  "jump of 3.5 m from its last pose (at most 0.6 m at its max_speed 2 m/s): "
                  "refused`. Nothing changes; the stream may go on",
    POSE_FLOOD: "poses of an external robot coming faster than its `max_rate` (a burst of a "
                "tenth of a second's worth is let through): this one is dropped, `real: poses "
                "come faster than its max_rate 1000 Hz: this one is dropped`",
    NOT_SHARED: "`/squads` steer (4) or feedback (5) for a squad whose robots host no `shared` "
                "driver, or before that driver's first step: `squad idle is not under shared "
                "control: its robots host no shared driver (docs/in-the-loop.md)`",
    EXTERNAL_ROBOT: "a motion command, or a teleop claim (`claim` params `[2]`), to an external "
                    "robot, whose pose is its stream's: `real is an external robot: its pose "
                    "comes from its pose stream, so motion command set_speeds (100) is refused "
                    "(docs/in-the-loop.md)`; nothing changes",
    OVER_BUDGET: "a `camera3d` `read` over the image budgets: one read's pixels over 64 MiB "
                 "(`over budget: a 4096x4096 rgbd image is 117440512 bytes of pixels, a read "
                 "may take at most 67108864: ...`), or its connection's reads in flight over "
                 "64 MiB (everyone's over 128 MiB): `over budget: this connection has 50331648 "
                 "bytes of images in flight (at most 67108864), ...`; nothing is rendered",
}

#: Kinds of robot commands: how a robot's endpoint dispatches them.
#: ``read``: answered at once from the last completed step's snapshot;
#: ``motion``: stored in the robot's command slot (latest wins); in lockstep it attaches the
#: controller and is answered after the step that used it;
#: ``action``: carried out on the stepper thread between two steps (odometry reset);
#: ``""``: a server's own command (hello, param_get ...), handled by the server.
KINDS = ("", "read", "motion", "action")
TEXT_RULES = ("", "opt", "req")
FIRST_MODULE_ID = 100  # robot command ids below this belong to every robot (hello, params ...)
MAX_COMMAND_ID = 2**31 - 1


@dataclass(frozen=True)
class Command:
    """A command's id and what it takes.

    Attributes:
        id: Command id, unique within its server (on robot endpoints: across all modules).
        name: Short name (for docs, clients and error sentences); a Python identifier.
        module: Module label on robot endpoints; "" for commands every robot has.
        params: (min, max) number of integer params.
        data: (min, max) number of floats.
        text: Whether the text field is required ("req"), optional ("opt") or ignored ("").
        kind: How a robot's endpoint dispatches it (see :data:`KINDS`).
        doc: One sentence for listings: what it does and what its reply holds, with units.
    """

    id: int
    name: str
    module: str = ""
    params: tuple[int, int] = (0, 0)
    data: tuple[int, int] = (0, 0)
    text: str = ""
    kind: str = ""
    doc: str = ""

    def check(self, msg) -> None:
        """Raise ProtocolError(WRONG_ARITY / OUT_OF_RANGE) when ``msg`` does not fit.

        Args:
            msg: Anything with ``params``, ``data`` and ``text`` (a protocol Message).
        """
        data = msg.data
        for what, got, (lo, hi) in (("params", msg.params, self.params), ("data", data, self.data)):
            if not lo <= len(got) <= hi:
                want = str(lo) if lo == hi else f"{lo} to {hi}"
                raise ProtocolError(WRONG_ARITY, f"{self.name} takes {want} {what}, "
                                                 f"got {len(got)}")
        if self.text == "req" and not msg.text:
            raise ProtocolError(WRONG_ARITY, f"{self.name} needs the text field")
        for d in data:
            if not math.isfinite(d):
                raise ProtocolError(OUT_OF_RANGE, f"{self.name}: data must be finite numbers")

    def validate(self) -> None:
        """Check the declaration itself (used when a plugin registers).

        Raises:
            ValueError: a field is out of its allowed set or range.
        """
        if not 0 <= self.id <= MAX_COMMAND_ID:
            raise ValueError(f"command id {self.id} is outside 0..{MAX_COMMAND_ID}")
        if not self.name.isidentifier():
            raise ValueError(f"command name {self.name!r} is not an identifier")
        for what, (lo, hi) in (("params", self.params), ("data", self.data)):
            if not 0 <= lo <= hi <= 4096:
                raise ValueError(f"command {self.name}: {what} arity {lo}..{hi} is not valid")
        if self.text not in TEXT_RULES or self.kind not in KINDS:
            raise ValueError(f"command {self.name}: text {self.text!r} or kind {self.kind!r} "
                             "is not one of the allowed values")

    def describe(self) -> str:
        """One line of the robot ``commands`` reply (docs/protocol.md): ``id name module
        params_min params_max data_min data_max text kind doc``, with ``-`` for an empty word;
        ``doc``, the last field, is the rest of the line (it holds spaces)."""
        doc = " ".join(self.doc.split())  # one line, whatever the declaration held
        words = (self.id, self.name, self.module or "-", *self.params, *self.data,
                 self.text or "-", self.kind or "-", doc or "-")
        return " ".join(str(w) for w in words)

    @classmethod
    def parse(cls, line: str) -> "Command":
        """Read a line written by :meth:`describe` (clients use this); a line of protocol
        version 1 (nine words, no doc) reads with an empty doc."""
        words = line.split(None, 9)
        cid, name, module, p0, p1, d0, d1, text, kind = words[:9]
        blank = lambda w: "" if w == "-" else w  # noqa: E731
        doc = blank(words[9].strip()) if len(words) > 9 else ""
        return cls(int(cid), name, blank(module), (int(p0), int(p1)), (int(d0), int(d1)),
                   blank(text), blank(kind), doc)


@dataclass(frozen=True)
class PoseCommand(Command):
    """An external robot's pose (protocol 10): its numbers (how many, finite) are the pose
    checks' (coopsim.sim.external: error :data:`POSE_REFUSED`, counted in the robot's
    ``refused``), not a malformed request's, so a hostile stream reads one code whatever is
    wrong with a pose; params and text are checked here as for any command."""

    def check(self, msg) -> None:
        shape = SimpleNamespace(params=msg.params, data=(0.0,) * self.data[0], text=msg.text)
        super().check(shape)
