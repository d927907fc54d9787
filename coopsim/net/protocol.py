"""The wire protocol: the five-field message, its error codes and every command's id and arity.

A message is ONE ZeroMQ frame holding a msgpack array of exactly five items::

    [error_code: int, text: str, command: int, params: [int, ...], data: [float, ...]]

(CoopDynSim's message; its M and N counts are the array lengths.) Requests carry error_code 0.
``docs/protocol.md`` is the normative description; this module is its executable twin.
This module imports neither pymunk nor zmq, so clients on a real robot can use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import msgpack

from ..model.errors import ProtocolError

PROTOCOL_VERSION = 1
DEFAULT_NAMESERVER = "tcp://127.0.0.1:10000"  # YARP's default port
MAX_MESSAGE_BYTES = 65536  # larger messages make the server drop the connection

# -- error codes ---------------------------------------------------------------------------------
OK = 0
BAD_MESSAGE = 1  # not msgpack, not a 5-array, wrong field types, more than one frame
UNKNOWN_COMMAND = 2  # the server has no such command id (or the robot lacks that module)
WRONG_ARITY = 3  # wrong number of params or data
OUT_OF_RANGE = 4  # a value outside its allowed range (or not finite)
UNKNOWN_NAME = 5  # no such port, robot, object, module, parameter or target
NOT_ALLOWED = 6  # valid, but not allowed in the current mode or state
VERSION_MISMATCH = 7  # the client speaks another protocol version
FAILED = 8  # valid, but could not be carried out (bad file, object off the floor, ...)
TIMEOUT = 9  # the simulation did not answer in time (e.g. a step that never came)
INTERNAL = 10  # a bug in the server; the request changed nothing it could roll back

ERROR_NAMES = {
    OK: "ok", BAD_MESSAGE: "bad message", UNKNOWN_COMMAND: "unknown command",
    WRONG_ARITY: "wrong arity", OUT_OF_RANGE: "out of range", UNKNOWN_NAME: "unknown name",
    NOT_ALLOWED: "not allowed", VERSION_MISMATCH: "version mismatch", FAILED: "failed",
    TIMEOUT: "timeout", INTERNAL: "internal error",
}


@dataclass(frozen=True)
class Message:
    """One protocol message.

    Attributes:
        error: Error code; 0 in requests and successful replies.
        text: Free text (a port name, a parameter name, an error sentence, a JSON document).
        command: Command id.
        params: Integer parameters.
        data: Floating-point data.
    """

    error: int = 0
    text: str = ""
    command: int = 0
    params: tuple[int, ...] = ()
    data: tuple[float, ...] = ()

    def to_wire(self) -> bytes:
        """Pack as one msgpack array of five items (floats as float64)."""
        return msgpack.packb(
            [self.error, self.text, self.command, list(self.params),
             [float(x) for x in self.data]], use_bin_type=True)

    @classmethod
    def from_wire(cls, frame: bytes, max_bytes: int | None = MAX_MESSAGE_BYTES) -> "Message":
        """Unpack and type-check one frame.

        Args:
            frame: The frame's bytes.
            max_bytes: Largest frame accepted; servers limit requests, while replies and state
                frames (a large swarm's layout) are read with None: no limit.

        Raises:
            ProtocolError: code BAD_MESSAGE with a sentence saying what is wrong.
        """
        if max_bytes is not None and len(frame) > max_bytes:
            raise ProtocolError(BAD_MESSAGE, f"message of {len(frame)} bytes is over the "
                                             f"{max_bytes}-byte limit")
        try:
            items = msgpack.unpackb(frame, raw=False, strict_map_key=True)
        except Exception as exc:  # noqa: BLE001 -- msgpack raises many unrelated types
            raise ProtocolError(BAD_MESSAGE, f"not a msgpack message ({type(exc).__name__})") \
                from None
        return cls(*_check_fields(items))

    def fail(self, code: int, text: str) -> "Message":
        """An error reply to this request."""
        return Message(code, text, self.command)

    def reply(self, text: str = "", params: Sequence[int] = (),
              data: Sequence[float] = ()) -> "Message":
        """A successful reply to this request."""
        return Message(OK, text, self.command, tuple(params), tuple(data))


def _check_fields(items) -> tuple:
    if not isinstance(items, (list, tuple)) or len(items) != 5:
        raise ProtocolError(BAD_MESSAGE, "a message is an array of exactly 5 items: "
                                         "[error_code, text, command, params, data]")
    error, text, command, params, data = items
    if not _is_int(error) or not _is_int(command):
        raise ProtocolError(BAD_MESSAGE, "error_code and command must be integers")
    if not isinstance(text, str):
        raise ProtocolError(BAD_MESSAGE, "text must be a string")
    if not isinstance(params, (list, tuple)) or not all(_is_int(p) for p in params):
        raise ProtocolError(BAD_MESSAGE, "params must be an array of integers")
    if not isinstance(data, (list, tuple)) or not all(_is_number(d) for d in data):
        raise ProtocolError(BAD_MESSAGE, "data must be an array of numbers")
    return error, text, command, tuple(params), tuple(float(d) for d in data)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**64


def _is_number(value) -> bool:
    return (isinstance(value, float) or _is_int(value)) and not isinstance(value, bool)


# -- commands ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Command:
    """A command's id and what it takes.

    Attributes:
        id: Command id, unique within its server (per module on robot servers).
        name: Short name (for docs, clients and error sentences).
        module: Module label on robot servers; "" for commands every robot has.
        params: (min, max) number of integer params.
        data: (min, max) number of floats.
        text: Whether the text field is required ("req"), optional ("opt") or ignored ("").
    """

    id: int
    name: str
    module: str = ""
    params: tuple[int, int] = (0, 0)
    data: tuple[int, int] = (0, 0)
    text: str = ""

    def check(self, msg: Message) -> None:
        """Raise ProtocolError(WRONG_ARITY / OUT_OF_RANGE) when ``msg`` does not fit."""
        for what, got, (lo, hi) in (("params", msg.params, self.params),
                                    ("data", msg.data, self.data)):
            if not lo <= len(got) <= hi:
                want = str(lo) if lo == hi else f"{lo} to {hi}"
                raise ProtocolError(WRONG_ARITY, f"{self.name} takes {want} {what}, "
                                                 f"got {len(got)}")
        if self.text == "req" and not msg.text:
            raise ProtocolError(WRONG_ARITY, f"{self.name} needs the text field")
        if not all(math.isfinite(d) for d in msg.data):
            raise ProtocolError(OUT_OF_RANGE, f"{self.name}: data must be finite numbers")


HELLO = Command(0, "hello", params=(0, 1), text="opt")

NAME_COMMANDS = {c.id: c for c in (
    HELLO,
    Command(1, "lookup", text="req"),
    Command(2, "list", text="opt"),
)}

ROBOT_COMMANDS = {c.id: c for c in (
    HELLO,
    Command(1, "modules"),
    Command(2, "detach"),
    Command(10, "param_list", text="req"),
    Command(11, "param_info", text="req"),
    Command(12, "param_get", text="req"),
    Command(13, "param_set", data=(1, 1), text="req"),
    Command(100, "set_speeds", "motors", data=(2, 2)),
    Command(101, "set_power", "motors", data=(2, 2)),
    Command(102, "stop", "motors"),
    Command(103, "read", "motors"),
    Command(200, "read", "sonar"),
    Command(300, "read", "target"),
    Command(301, "read_color", "target", text="req"),
    Command(400, "read", "odometry"),
    Command(401, "reset", "odometry"),
    Command(500, "read", "gps"),
    Command(600, "read", "compass"),
    Command(700, "read", "bumper"),
    Command(800, "read", "support"),
)}

#: Commands that move the robot: in lockstep they attach it and are answered after the step.
MOTION_COMMANDS = frozenset((100, 101, 102))

SIM_COMMANDS = {c.id: c for c in (
    HELLO,
    Command(1, "status"),
    Command(2, "pause"),
    Command(3, "resume"),
    Command(4, "step", params=(0, 1)),
    Command(5, "reset"),
    Command(6, "set_mode", text="req"),
    Command(7, "set_speed", data=(1, 1)),
    Command(8, "set_dt", data=(1, 1)),
    Command(9, "set_lease", data=(1, 1)),
    Command(10, "list_robots"),
    Command(11, "list_objects"),
    Command(12, "list_targets"),
    Command(13, "insert_object", params=(0, 3), data=(8, 8), text="req"),
    Command(14, "update_object", params=(0, 3), data=(8, 8), text="req"),
    Command(15, "remove_object", text="req"),
    Command(16, "insert_robot", params=(0, 3), data=(4, 4), text="req"),
    Command(17, "update_robot", params=(0, 3), data=(4, 4), text="req"),
    Command(18, "remove_robot", text="req"),
    Command(19, "insert_target", data=(3, 3), text="req"),
    Command(20, "update_target", params=(1, 1), data=(3, 3), text="req"),
    Command(21, "remove_target", params=(1, 1)),
    Command(22, "load", text="req"),
    Command(23, "state"),
    Command(24, "detach", text="req"),
    Command(25, "set_param", data=(1, 1), text="req"),
    Command(26, "record", params=(0, 1), text="opt"),
)}

PLAYBACK_COMMANDS = {c.id: c for c in (
    HELLO,
    Command(1, "status"),
    Command(2, "play"),
    Command(3, "pause"),
    Command(4, "seek", data=(1, 1)),
    Command(5, "step", params=(1, 1)),
    Command(6, "set_speed", data=(1, 1)),
)}

#: Topic of the state stream's frames (first frame of each multipart PUB message).
STATE_TOPIC = b"state"


def hello_reply(request: Message, server_name: str) -> Message:
    """Answer a hello: the protocol version in params, the server's name in text.

    A client may send its own version as params[0]; another major version is refused.
    """
    if request.params and request.params[0] != PROTOCOL_VERSION:
        return request.fail(VERSION_MISMATCH,
                            f"this server speaks protocol {PROTOCOL_VERSION}, "
                            f"the client {request.params[0]}")
    return request.reply(server_name, params=(PROTOCOL_VERSION,))
