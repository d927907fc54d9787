"""The wire protocol: the five-field message, its error codes and every command's id and arity.

A message is ONE ZeroMQ frame holding a msgpack array of exactly five items::

    [error_code: int, text: str, command: int, params: [int, ...], data: [float, ...]]

(CoopDynSim's message; its M and N counts are the array lengths.) Requests carry error_code 0.
``docs/protocol.md`` is the normative description; this module is its executable twin.
This module imports neither pymunk nor zmq, so clients on a real robot can use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import msgpack

# The error codes are declared with the commands (coopsim.model.commands); re-exported here.
from ..model.commands import (BAD_MESSAGE, BUSY, ERROR_NAMES, FAILED, INTERNAL,  # noqa: F401
                              NOT_ALLOWED, OK, OUT_OF_RANGE, OWNED, POSE_FLOOD, POSE_REFUSED,
                              TELEOPERATED, TIMEOUT, UNKNOWN_COMMAND, UNKNOWN_NAME,
                              VERSION_MISMATCH, WRONG_ARITY, Command, PoseCommand)
from ..model.errors import ProtocolError

#: The wire's version, answered by every server's hello (command 0). A change to a message, a
#: command, an error code or the state stream bumps it in the same commit, with an entry in the
#: changelog that opens docs/protocol.md.
PROTOCOL_VERSION = 14
#: Client versions a server serves. Version 8 made the state stream's and ``/sim state``'s
#: per-robot columns the world's own, changing with its layout (docs/protocol.md, Changelog):
#: a client of version 2 to 7 may take them for fixed for the whole run, so it is refused.
#: Version 9 only adds the layout document's optional ``scenery`` key (a map key a version-8
#: client skips), so a version-8 client is served as itself. Version 10 only adds commands,
#: replies, error codes and layout keys (none changes an old one), so versions 8 and 9 are
#: served as themselves; versions 11 to 14 only add again, so versions 8 to 13 are.
SERVED_VERSIONS = (8, 9, 10, 11, 12, 13, 14)
#: Where a client of another version reads what changed (quoted in the version-mismatch error).
CHANGELOG = "docs/protocol.md, 'Changelog'"
DEFAULT_NAMESERVER = "tcp://127.0.0.1:10000"  # YARP's default port
MAX_MESSAGE_BYTES = 65536  # larger requests are refused (error 1)
#: The servers' ZeroMQ MAXMSGSIZE, which libzmq applies to each frame: a larger frame drops the
#: connection before the server sees it (so no reply); up to it, an oversized request gets error 1.
MAX_FRAME_BYTES = 4 * MAX_MESSAGE_BYTES

#: What a registered name is (docs/protocol.md section 1, the name server): ``rep`` a
#: request/reply server (a ROUTER: send it requests), ``pub`` a stream (a PUB: subscribe to it).
#: The name server's lookup answers the index in params[0].
PORT_KINDS = ("rep", "pub")


def kind_of(lookup_reply: "Message") -> str:
    """The kind a lookup reply names (``rep`` when the name server is too old to say)."""
    index = lookup_reply.params[0] if lookup_reply.params else 0
    return PORT_KINDS[index] if 0 <= index < len(PORT_KINDS) else "rep"


def not_a_server(name: str, kind: str) -> str:
    """The sentence of the NOT_ALLOWED error for a request sent to a name that is a stream."""
    return (f"{name} is a {kind} port (a stream), not a request/reply server: it takes no "
            "requests; subscribe to it (a ZeroMQ SUB socket, or the JSON gateway's subscribe "
            "line: command 1)")


class BadMessage(ProtocolError):
    """A request that is not a well-typed five-item message (code BAD_MESSAGE).

    Attributes:
        command: The request's command id when it could be read, else -1.
    """

    def __init__(self, text: str, command: int = -1) -> None:
        super().__init__(BAD_MESSAGE, text)
        self.command = command


def error_reply(exc: ProtocolError) -> "Message":
    """The reply to a request that failed to decode: the error, its sentence, and the request's
    command id when it was readable (-1 when not)."""
    return Message(exc.code, exc.text, getattr(exc, "command", -1))


@dataclass(frozen=True)
class Message:
    """One protocol message.

    Attributes:
        error: Error code; 0 in requests and successful replies.
        text: Free text (a port name, a parameter name, an error sentence, a JSON document).
        command: Command id.
        params: Integer parameters.
        data: Floating-point data.
        frames: Binary frames that travel after the message's own ZeroMQ frame (protocol 11:
            a camera read's pixels when its text ends with ``frame``); bytes-like, not part of
            the msgpack array nor of equality.
    """

    error: int = 0
    text: str = ""
    command: int = 0
    params: tuple[int, ...] = ()
    data: tuple[float, ...] = ()
    frames: tuple = field(default=(), compare=False, repr=False)

    def to_wire(self) -> bytes:
        """Pack as one msgpack array of five items (floats as float64)."""
        return pack(self.error, self.text, self.command, self.params, self.data)

    @classmethod
    def from_wire(cls, frame: bytes, max_bytes: int | None = MAX_MESSAGE_BYTES) -> "Message":
        """Unpack and type-check one frame.

        Args:
            frame: The frame's bytes.
            max_bytes: Largest frame accepted; servers limit requests, while replies and state
                frames (a large swarm's layout) are read with None: no limit.

        Raises:
            BadMessage: a ProtocolError of code BAD_MESSAGE with a sentence saying what is
                wrong, and the request's command id when it could be read (else -1).
        """
        return new_message(*fields_of(frame, max_bytes))

    def fail(self, code: int, text: str) -> "Message":
        """An error reply to this request."""
        return new_message(code, text, self.command, (), ())

    def reply(self, text: str = "", params: Sequence[int] = (),
              data: Sequence[float] = (), frames: Sequence = ()) -> "Message":
        """A successful reply to this request (``frames``: binary frames sent after it)."""
        return new_message(OK, text, self.command, tuple(params), tuple(data), tuple(frames))


def fields_of(frame: bytes, max_bytes: int | None = None) -> tuple:
    """A frame's five fields ``(error, text, command, params, data)`` checked as
    :meth:`Message.from_wire` checks them (it is this plus a Message): a client's lockstep
    loop reads its reply's fields straight from them.

    Raises:
        BadMessage: as :meth:`Message.from_wire`.
    """
    if max_bytes is not None and len(frame) > max_bytes:
        raise BadMessage(f"message of {len(frame)} bytes is over the {max_bytes}-byte limit")
    try:
        items = _unpackb(frame)  # msgpack's defaults: raw=False, strict_map_key=True
    except Exception as exc:  # noqa: BLE001 -- msgpack raises many unrelated types
        raise BadMessage(f"not a msgpack message ({type(exc).__name__})") from None
    return _check_fields(items)


_new = object.__new__


def new_message(error: int, text: str, command: int, params: tuple, data: tuple,
                frames: tuple = ()) -> Message:
    """A :class:`Message` of fields already of their types (tuples), built without the frozen
    dataclass's ``__init__`` (one ``object.__setattr__`` a field: 3x the cost), equal to
    ``Message(error, text, command, params, data, frames)``. On every request and reply."""
    msg = _new(Message)
    fields = msg.__dict__
    fields["error"], fields["text"], fields["command"] = error, text, command
    fields["params"], fields["data"], fields["frames"] = params, data, frames
    return msg


_Packer, _unpackb = msgpack.Packer, msgpack.unpackb


def pack(error: int, text: str, command: int, params: Sequence[int],
         data: Sequence[float]) -> bytes:
    """One message's frame (:meth:`Message.to_wire`) from its fields, without a Message: the
    five-item msgpack array, data as float64. A Packer a call (msgpack's ``packb`` makes one
    too, through keyword arguments; one shared between threads would share its buffer)."""
    return _Packer().pack([error, text, command, list(params), list(map(float, data))])


_INTS, _NUMBERS = frozenset((int,)), frozenset((int, float))


def _check_fields(items) -> tuple:
    # The common case first, checked by exact types in C (map, set): msgpack decodes integers
    # as int (always within 64 bits), floats as float, booleans as bool (refused), so a
    # message made only of those is well formed; anything else goes the long way, which says
    # what is wrong. On every request and reply of a lockstep loop.
    if type(items) is list and len(items) == 5:
        error, text, command, params, data = items
        if type(error) is int and type(command) is int and type(text) is str \
                and type(params) is list and type(data) is list \
                and set(map(type, params)) <= _INTS and set(map(type, data)) <= _NUMBERS:
            return error, text, command, tuple(params), tuple(map(float, data))
    if not isinstance(items, (list, tuple)) or len(items) != 5:
        raise BadMessage("a message is an array of exactly 5 items: "
                         "[error_code, text, command, params, data]")
    error, text, command, params, data = items
    if not _is_int(command):
        raise BadMessage("command must be an integer")
    # from here on the command id is known: the error reply echoes it (docs/protocol.md s. 2)
    if not _is_int(error):
        raise BadMessage("error_code must be an integer", command)
    if not isinstance(text, str):
        raise BadMessage("text must be a string", command)
    if not isinstance(params, (list, tuple)) or not all(_is_int(p) for p in params):
        raise BadMessage("params must be an array of integers", command)
    if not isinstance(data, (list, tuple)) or not all(_is_number(d) for d in data):
        raise BadMessage("data must be an array of numbers", command)
    return error, text, command, tuple(params), tuple(float(d) for d in data)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**64


def _is_number(value) -> bool:
    return (isinstance(value, float) or _is_int(value)) and not isinstance(value, bool)


# -- commands ------------------------------------------------------------------------------------

HELLO = Command(0, "hello", params=(0, 1), text="opt")

NAME_COMMANDS = {c.id: c for c in (
    HELLO,
    Command(1, "lookup", text="req"),
    Command(2, "list", params=(0, 1), text="opt"),
)}

EXCHANGE = 6  # protocol 13: the robot command that sets motion and answers reads (one trip)
MAX_EXCHANGE_READS = 16  # reads one exchange may name (params[1:])

#: Commands every robot endpoint has; each module adds its own (ids >= 100, declared by the module,
#: see coopsim.model.module and :func:`robot_commands`).
ROBOT_COMMANDS = {c.id: c for c in (
    HELLO,
    Command(1, "modules"),
    Command(2, "detach"),
    Command(3, "commands", text="opt"),
    Command(4, "claim", params=(0, 1), data=(0, 1)),  # protocol 12: data [dead man, s]
    Command(5, "release"),
    Command(10, "param_list", text="req"),
    Command(11, "param_info", text="req"),
    Command(12, "param_get", text="req"),
    Command(13, "param_set", data=(0, 1), text="req"),
    # protocol 10: an external robot's pose, [x, y, yaw] or [x, y, z, qw, qx, qy, qz]
    PoseCommand(20, "external_pose", data=(3, 7)),
    # protocol 13: a motion command and reads in one request, answered after the step that
    # used the command (docs/protocol.md section 3, *Exchange*); data is the motion's
    Command(EXCHANGE, "exchange", params=(1, 1 + MAX_EXCHANGE_READS), data=(0, 4096)),
)}


#: What each command every robot has takes and answers, by id (hello: every server's,
#: docs/protocol.md section 1), generated into docs/reference/protocol.md. Their ``doc`` stays
#: empty: command 3's listing is one sentence a command, and these are longer.
ROBOT_COMMAND_WIRE = {
    1: "Reply: text = module labels, comma-separated.",
    2: "Leaves lockstep and releases the robot (when this connection owns it). Reply: params "
       "`[1]` if it was attached; error 11 when another connection owns it.",
    3: "Request: text = a module label, or empty for all of the robot's commands. Reply: text "
       "= one line per command, `id name module params_min params_max data_min data_max text "
       "kind doc` (`-` for an empty word; kind is `read`, `motion`, `action` or `-`; `doc` is "
       "the rest of the line: one sentence saying what the command does and what its reply "
       "holds, with units, `-` when there is none); params `[count]`; error 5 for a module "
       "the robot lacks.",
    4: "Request: params `[how]` optional: 0, 1 (force) or 2 (teleop claim, protocol 10: "
       "force, and the owner it displaced gets the robot back when this connection gives it "
       "up; docs/protocol.md, *Ownership*); data `[T]` optional (protocol 12): arm this connection's dead man, "
       "`T` s (0 < T ≤ 60; 0 disarms; a teleop claim arms 0.5 s without it). Reply: this "
       "connection owns the robot from now on: text `claimed by <owner>` (how the servers "
       "name this connection; with a dead man armed, ` with a T s dead man` follows), params "
       "`[1]` when it was taken from another owner (with force or a teleop claim; the text "
       "adds `(taken from <owner>)`), else `[0]`; error 11 naming the owner when another "
       "connection owns it and `how` is 0; error 13 when a teleop claim displaced this "
       "connection; error 17 for a teleop claim on an external robot (protocol 12); error 4 "
       "for another `how` or `T` outside 0..60 s.",
    5: "Gives the robot up (it also leaves lockstep). Reply: text `released`, params `[1]`; "
       "`was not owned`, params `[0]`; error 11 when another connection owns it.",
    6: "(version 13) Request: params `[motion id, read id, ...]`: one motion command's id, "
       "then 0 to 16 ids of reads (kind `read`, no text required, not `camera3d`); data = "
       "the motion command's data. Reply: the motion command, carried out as that command "
       "(its checks and errors, ownership, lockstep, patience) and answered when its reply "
       "would be (in lockstep after the step that used it), with the reads of that step: "
       "text = the mode, params `[step, n1, taken1, n2, taken2, ...]` (each read's count of "
       "numbers and the step it was measured at), data `[time, read1..., read2...]` (the "
       "reads' data in order, bit for bit what each read sent alone answers then; a read's "
       "text is not carried). Error 3 for no ids or more than 17, 2 for an id the robot has "
       "not, 4 for a `params[0]` that is no motion command or a later id that is no such "
       "read (docs/protocol.md, *Exchange*).",
    10: "Request: text = module (or `driver`). Reply: text = parameter names (lines); data = "
        "values (NaN for a word parameter).",
    11: "Request: text = `module.name`. Reply: text = `type\\nunit\\ndescription`; data = "
        "`[default, min, max, value]`. For a word parameter (type `str`): text = "
        "`str\\nunit\\ndescription\\ndefault\\nvalue\\nchoices` (choices space-separated, "
        "empty for any word), no data.",
    12: "Request: text = `module.name`. Reply: text = `module.name`, data = `[value]`; for a "
        "word parameter text = `module.name value`, no data.",
    13: "Request: text = `module.name`, data = `[value]`; for a word parameter text = "
        "`module.name word`, no data. Reply: as param_get, with the stored value; error 4 "
        "outside [min, max] (or not one of the choices), or when the module refuses the value "
        "together with the robot's others (version 7: `rotors`' thrust-to-weight outside "
        "[1, 20] or implausible moments of inertia, the bound and the value in the text: "
        "`parameter rotors.kf = 0.01 is refused: thrust-to-weight 4 kf max_speed^2 / (m g) = "
        "943859 (...) is outside [1, 20]: ...`; nothing is stored), error 3 when a number "
        "parameter gets no data or a word parameter gets data.",
    20: "(version 10) Request: data = an external robot's pose, `[x, y, yaw]` (m, m, rad) or "
        "`[x, y, z, qw, qx, qy, qz]` (m; a unit quaternion: the full pose, version 11), world "
        "frame. Reply: text `external`, params `[step]`, data `[time]` (the step and simulated "
        "time the server had reached when it took the pose); the connection sending it owns "
        "the robot (error 11 for another's); error 14 for a refused pose (a number not "
        "finite, 3 or 7 numbers expected, a quaternion not of unit length, off the floor, a "
        "jump beyond the robot's `max_speed` and `max_jump`, or a robot not marked "
        "`external`), error 15 beyond its `max_rate` (docs/in-the-loop.md); version 11: "
        "served by the stepper's thread, so a stream goes better to the pose channel "
        "`/external` (docs/protocol.md section 3), which takes the same pose by robot name on "
        "a thread of its own.",
}


def robot_commands(modules) -> dict[int, Command]:
    """The command table of a robot carrying ``modules`` (Module classes): the common commands
    plus every module's, by id."""
    table = dict(ROBOT_COMMANDS)
    for module in modules:
        table.update((c.id, c) for c in module.commands)
    return table

SIM_COMMANDS = {c.id: c for c in (
    HELLO,
    Command(1, "status", doc=(
        'Reply: text = mode; params `[step, paused, mode (0 realtime, 1 lockstep, 2 '
        'playback), missed deadlines, robots, attached]`; data `[time, dt, speed, real-time '
        'factor, wall time, lease]`.')),
    Command(2, "pause", doc=(
        'Reply: as status.')),
    Command(3, "resume", doc=(
        'Reply: as status; error 6 once the run has finished (a reset starts it over).')),
    Command(4, "step", params=(0, 1), doc=(
        'Request: params `[n]`, 1 ≤ n ≤ 1,000,000 (default 1), **while paused** (error 6 when'
        ' the run is running: pause it first; also once it has finished). Reply: as status, '
        "after the steps, or after 8 s at most (under the gateway's 10 s): then the status "
        'shows how far it got, and the rest of the steps are still taken, until a pause (2), '
        'resume (3) or reset (5) drops them: that stops the run within one step (and answers '
        'a step still waiting at once).')),
    Command(5, "reset", doc=(
        'Reply: back to the scenario and its seed; as status.')),
    Command(6, "set_mode", text="req", doc=(
        'Request: text `realtime` or `lockstep`. Reply: as status.')),
    Command(7, "set_speed", data=(1, 1), doc=(
        'Request: data `[factor]`, 0..1000, 0 = as fast as possible. Reply: as status.')),
    Command(8, "set_dt", data=(1, 1), doc=(
        'Request: data `[dt]` s, 0.0005..0.1. Reply: as status.')),
    Command(9, "set_lease", data=(1, 1), doc=(
        'Request: data `[seconds]`, 0.05..60 (error 4 beyond: a lease is how long a hung '
        'controller may hold the run and its robot). Reply: as status.')),
    Command(10, "list_robots", doc=(
        'Reply: text = names (lines); params `[n]`; data = poses, 3 per robot.')),
    Command(11, "list_objects", doc=(
        'Reply: text = names (lines); params `[n]`; data = poses.')),
    Command(12, "list_targets", doc=(
        'Reply: text = colours (lines); params `[n]`; data = `x, y, z` per target.')),
    Command(13, "insert_object", params=(0, 3), data=(8, 8), text="req", doc=(
        'Request: text `name shape` (box, cylinder, sphere); data `[length, width, height, x,'
        ' y, z, yaw, mass]`; params colour. Names and ranges: docs/protocol.md section 4; '
        "error 4 with the files' sentence outside them; error 8 with the engine's sentence "
        "for an object the run's engine cannot hold (a 2D engine: one whose bottom is above "
        "the floor); error 8 beyond 25,000 objects in the world (`object 'x' is refused: a "
        'world holds at most 25000 objects, this one would hold 25001`); on `mujoco` (version'
        ' 7), error 8 for an object that would start inside another body or inside static '
        'geometry, where they are now (`object b at (1, 1, 0.1) starts overlapping object a '
        'at (1, 1, 0.1) (0.2 m deep): bodies must not start inside each other or inside '
        'static geometry (more than 0.005 m): move it`; docs/files.md, *Where bodies may '
        'start on mujoco*). Reply: as list_objects.')),
    Command(14, "update_object", params=(0, 3), data=(8, 8), text="req", doc=(
        'Request: as insert, existing name. Reply: as list_objects.')),
    Command(15, "remove_object", text="req", doc=(
        'Request: text = name. Reply: as list_objects.')),
    Command(16, "insert_robot", params=(0, 3), data=(4, 4), text="req", doc=(
        'Request: text `name type`, or (version 11) `name type external [stale S] [max_speed '
        'V] [max_jump M] [max_rate HZ]` for an external robot with the settings of a '
        '`[ROBOT_n]` `external` line (docs/in-the-loop.md; error 4 for an unknown setting or '
        "a value not > 0) (any registered robot type the run's engine can build: `single`, "
        "`team2`, a plugin's; the state's `types` lists them); data `[x, y, z, yaw]`; params "
        'colour. The name follows the rule of docs/protocol.md section 4 (error 4); a name in'
        ' use is error 8; on `mujoco` (version 7), error 8 for a robot that would start below'
        ' the floor (`robot cf (crazyflie) at (0, 1, -9000) is below the floor: a body must '
        'start on or above the floor (z >= 0)`) or inside another body or static geometry '
        '(the sentence of insert_object); nothing is built or served. Reply: as list_robots.')),
    Command(17, "update_robot", params=(0, 3), data=(4, 4), text="req", doc=(
        'Request: as insert, existing name (re-placed, keeps its endpoint; refused as '
        'insert_robot, the robot stays where it was). Reply: as list_robots.')),
    Command(18, "remove_robot", text="req", doc=(
        'Request: text = name (a team2 goes whole). Reply: as list_robots.')),
    Command(19, "insert_target", data=(3, 3), text="req", doc=(
        'Request: text = colour; data `[x, y, z]` (ranges: docs/protocol.md section 4). '
        'Reply: params `[index]`.')),
    Command(20, "update_target", params=(1, 1), data=(3, 3), text="req", doc=(
        'Request: params `[index]`; text colour; data `[x, y, z]`. Reply: as list_targets.')),
    Command(21, "remove_target", params=(1, 1), doc=(
        'Request: params `[index]`. Reply: as list_targets.')),
    Command(22, "load", text="req", doc=(
        "Request: text = path of a `.scenario` or `.world` inside the run's *data folders* "
        "(docs/protocol.md section 4); a relative path is looked for from the simulator's "
        'folder, then in each data folder. Reply: as status; error 8 with `path:line: ...` '
        'for a bad file, or one that is not a regular file (a FIFO or device is never opened '
        'for reading; nothing changes), or a map that would make more than 20,000 walls '
        '(`path:line: map makes N walls, at most 20000`); the file is read and its world '
        'built on a thread of its own, so `/sim` answers other requests meanwhile and the '
        'reply comes when the new world is in place (error 9 only when the stepper has not '
        'put it in place within 120 s); error 6 for another load while one is under way; '
        'error 6 with the reason for another suffix, or a file, or a world file the scenario '
        'names, outside the data folders, and with `path:line: ...` for a file naming Python '
        'code (a `[MONITORS]` `python` metric) when the run was not started with `coopsim run'
        ' --allow-python` (nothing is imported).')),
    Command(23, "state", doc=(
        'Reply: text = JSON, [the state document](state.md); params `[step, layout_version]`.')),
    Command(24, "detach", text="req", doc=(
        "Request: text = robot. Reply: an operator's detach: the robot leaves lockstep and is"
        ' freed from its owner (section 3, *Ownership*); text `detached`, params `[1]` when '
        'it was attached; text `was not attached`, params `[0]` for a robot that was not; '
        'error 5 for a name that is no robot.')),
    Command(25, "set_param", data=(0, 1), text="req", doc=(
        'Request: text `robot module.name`, data `[value]`; for a word parameter text `robot '
        "module.name word` and no data. `module` may be `driver` (the robot's in-process "
        'driver). Reply: text `robot module.name`, data `[stored value]`; for a word, text '
        '`robot module.name word`.')),
    Command(26, "record", params=(0, 1), text="opt", doc=(
        'Request: params `[1]` start (default) or `[0]` stop; text = a new `.mcap` file '
        'inside the data folders (optional: default `<scenario>-<UTC time>.mcap`; a relative '
        "path is taken in the run's recordings folder, `recordings/` in the simulator's "
        'folder). Reply: text = the file; params `[on]`. Starting while recording answers the'
        ' current file; the state\'s `recording` field holds the file or "", `recording_error`'
        ' why writing it failed. Error 6 outside the data folders, and after 10 starts within'
        ' a minute; error 8 for an existing file, another suffix, a missing folder (none is '
        'created but the recordings folder), or a file that cannot be started (disk full: the'
        ' sentence says so and no file is left). Not allowed in a replay.')),
    # protocol 11: a mesh's triangles (model/meshwire.py)
    Command(27, "mesh", text="req", doc=(
        "Request: text = a world mesh's name (`MESH_1`: the state document's "
        "`scenery.meshes[].name`) or `ROBOT FILE` (a robot's mesh file basename, as the "
        "`file` of its `links` visuals). Reply: (version 11) the mesh file's triangles in its"
        " own frame and units (the state document's `scale` and pose place them), equal "
        'corners welded and, beyond 20,000 triangles, decimated by vertex clustering: params '
        "`[V, T, source triangles, i0, i1, ...]` (the T triangles' vertex indices, three "
        "each, 0-based, counter-clockwise as in the file), data the V vertices' `x, y, z`. "
        "Only files the world and its robots' descriptions already read are found: nothing in"
        ' the request names a path. Error 5 for no such mesh, robot or robot mesh file; 3 for'
        ' text of another form; 8 when the file cannot be read now (version 12: read as every'
        ' file the server reads: a FIFO, device or directory in its place is `not a regular '
        'file`, a file over 64 MiB is refused unread, `mesh too large`); not allowed in a '
        'replay (error 6). Python: `client.sim().mesh(name)` -> (vertices, faces).')),
)}

PLAYBACK_COMMANDS = {c.id: c for c in (
    HELLO,
    Command(1, "status", doc=(
        'Reply: status.')),
    Command(2, "play", doc=(
        'Reply: status; at the end (or at the start when playing backwards) it starts over.')),
    Command(3, "pause", doc=(
        'Reply: status.')),
    Command(4, "seek", data=(1, 1), doc=(
        'Request: data `[position]` s. Reply: shows the last recorded step at or before it. '
        'Outside the recording it clamps to the first or last step and the text says so: `99 '
        's is outside the recording (0 .. 20 s); clamped to 20 s`.')),
    Command(5, "step", params=(1, 1), doc=(
        'Request: params `[n]`, n may be negative. Reply: pauses and moves n recorded steps; '
        'clamped at the first or last, and the text says so.')),
    Command(6, "set_speed", data=(1, 1), doc=(
        'Request: data `[factor]`, 0.01 ≤ |factor| ≤ 1000; negative plays backwards. Reply: '
        'status; error 4 outside that range.')),
)}

#: Topic of the state stream's frames (first frame of each multipart PUB message).
STATE_TOPIC = b"state"


def hello_reply(request: Message, server_name: str) -> Message:
    """Answer a hello: the protocol version in params, the server's name in text.

    A client may send its own version as params[0]: one of :data:`SERVED_VERSIONS` is answered
    with that version (the version the connection speaks); any other is refused with
    VERSION_MISMATCH and a sentence naming both versions and the changelog. Without a version
    the answer is this server's.
    """
    if not request.params:
        return request.reply(server_name, params=(PROTOCOL_VERSION,))
    if request.params[0] not in SERVED_VERSIONS:
        return request.fail(VERSION_MISMATCH, version_mismatch(request.params[0]))
    return request.reply(server_name, params=(request.params[0],))


def version_mismatch(client_version: int) -> str:
    """The sentence of the VERSION_MISMATCH error for a client of ``client_version``."""
    return (f"this server speaks coopsim protocol {PROTOCOL_VERSION}, the client "
            f"protocol {client_version}; what changed between them is listed in {CHANGELOG} "
            "(update the client)")
