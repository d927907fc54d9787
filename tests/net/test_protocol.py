"""Tests of coopsim.net.protocol: the five-field message on the wire, its checks and the tables."""

from __future__ import annotations

import math

import msgpack
import pytest

from coopsim.model.commands import EXTERNAL_ROBOT, NOT_SHARED, OVER_BUDGET

from coopsim.model.plugins import MODULES

from coopsim.net import protocol as p
from coopsim.model.errors import ProtocolError
from coopsim.net.protocol import Command, Message


def _bad(frame: bytes) -> ProtocolError:
    """Decode ``frame`` and return the BAD_MESSAGE error it must raise."""
    with pytest.raises(ProtocolError) as info:
        Message.from_wire(frame)
    assert info.value.code == p.BAD_MESSAGE, info.value
    assert info.value.text.strip(), "an error carries a sentence"
    return info.value


# --- to and from the wire -------------------------------------------------------------------------

def test_round_trip_keeps_every_field():
    msg = Message(0, "/robot1/motors", 100, (1, -2, 2**40), (0.25, -1.5, 1e300))
    assert Message.from_wire(msg.to_wire()) == msg


def test_wire_is_one_plain_msgpack_array_of_five():
    wire = Message(3, "héllo", 7, (1,), (2.0,)).to_wire()
    assert msgpack.unpackb(wire, raw=False) == [3, "héllo", 7, [1], [2.0]]


def test_data_goes_out_as_float64_even_when_given_ints():
    wire = Message(0, "", 100, (), (1, 2)).to_wire()
    assert wire.endswith(msgpack.packb(1.0) + msgpack.packb(2.0))  # 0xcb: float64
    assert all(type(x) is float for x in msgpack.unpackb(wire)[4])


def test_integers_are_accepted_where_floats_are_expected():
    msg = Message.from_wire(msgpack.packb([0, "", 100, [], [1, -2]]))
    assert msg.data == (1.0, -2.0)
    assert all(type(x) is float for x in msg.data)


def test_float32_and_tuples_are_accepted():
    frame = msgpack.packb((0, "", 13, (), (0.5,)), use_single_float=True)
    assert Message.from_wire(frame).data == (0.5,)


def test_largest_and_smallest_integers_of_msgpack_are_accepted():
    msg = Message.from_wire(msgpack.packb([0, "", 4, [2**64 - 1, -2**63], []]))
    assert msg.params == (2**64 - 1, -2**63)


def test_reply_and_fail_keep_the_command():
    req = Message(0, "x", 12, (1,), (2.0,))
    assert req.reply("y", (3,), (4.0,)) == Message(0, "y", 12, (3,), (4.0,))
    assert req.fail(p.UNKNOWN_NAME, "no such") == Message(p.UNKNOWN_NAME, "no such", 12)


# --- every BAD_MESSAGE case -----------------------------------------------------------------------

NOT_MSGPACK = [b"", b"\xc1", b"\x95\x00", b"\xdd\xff\xff\xff\xff", b"hello world\x00",
               b"\x95\x00\xa3\xff\xfe\xfd\x01\x90\x90"]  # the last: text is not UTF-8


@pytest.mark.parametrize("frame", NOT_MSGPACK)
def test_not_msgpack(frame):
    assert "msgpack" in _bad(frame).text


@pytest.mark.parametrize("items", [
    7, "text", None, {"error": 0}, [], [0, "", 1, []], [0, "", 1, [], [], []],
    [0, "", 1, [], [], 0, 0, 0],
], ids=repr)
def test_not_an_array_of_five(items):
    assert "5 items" in _bad(msgpack.packb(items)).text


@pytest.mark.parametrize("items, word", [
    (["0", "", 1, [], []], "integer"),
    ([0.0, "", 1, [], []], "integer"),
    ([False, "", 1, [], []], "integer"),
    ([0, "", 1.0, [], []], "integer"),
    ([0, "", True, [], []], "integer"),
    ([0, "", None, [], []], "integer"),
    ([0, b"bytes", 1, [], []], "text"),
    ([0, None, 1, [], []], "text"),
    ([0, 5, 1, [], []], "text"),
    ([0, "", 1, 3, []], "params"),
    ([0, "", 1, [1.5], []], "params"),
    ([0, "", 1, [True], []], "params"),
    ([0, "", 1, ["1"], []], "params"),
    ([0, "", 1, {"a": 1}, []], "params"),
    ([0, "", 1, [[1]], []], "params"),
    ([0, "", 1, [], 1.0], "data"),
    ([0, "", 1, [], ["1.0"]], "data"),
    ([0, "", 1, [], [None]], "data"),
    ([0, "", 1, [], [False]], "data"),
    ([0, "", 1, [], [[1.0]]], "data"),
    ([0, "", 1, [], b"\x00" * 8], "data"),
], ids=repr)
def test_wrong_field_types(items, word):
    assert word in _bad(msgpack.packb(items, use_bin_type=True)).text


def test_ext_types_are_wrong_types_not_crashes():
    frame = msgpack.packb([0, "", 1, [msgpack.ExtType(5, b"xx")], []])
    assert "params" in _bad(frame).text


def test_message_over_the_size_limit():
    frame = Message(0, "x" * p.MAX_MESSAGE_BYTES, 1).to_wire()
    assert str(p.MAX_MESSAGE_BYTES) in _bad(frame).text


def test_message_just_under_the_limit_is_fine():
    text = "x" * (p.MAX_MESSAGE_BYTES - 64)
    assert Message.from_wire(Message(0, text, 1).to_wire()).text == text


# --- arity and range checks of a command ----------------------------------------------------------

SET_SPEEDS = p.robot_commands(MODULES.get(m) for m in MODULES.labels())[100]


def _check_code(command: Command, msg: Message) -> int:
    with pytest.raises(ProtocolError) as info:
        command.check(msg)
    assert info.value.text.startswith(command.name), info.value.text
    return info.value.code


@pytest.mark.parametrize("data", [(), (1.0,), (1.0, 2.0, 3.0)])
def test_wrong_number_of_data(data):
    assert _check_code(SET_SPEEDS, Message(0, "", 100, (), data)) == p.WRONG_ARITY


def test_wrong_number_of_params():
    step = p.SIM_COMMANDS[4]
    assert _check_code(step, Message(0, "", 4, (1, 2))) == p.WRONG_ARITY
    step.check(Message(0, "", 4))
    step.check(Message(0, "", 4, (5,)))


def test_arity_sentence_names_what_is_expected():
    with pytest.raises(ProtocolError, match="set_speeds takes 2 data, got 1"):
        SET_SPEEDS.check(Message(0, "", 100, (), (1.0,)))
    with pytest.raises(ProtocolError, match="insert_object takes 0 to 3 params, got 4"):
        p.SIM_COMMANDS[13].check(Message(0, "a box", 13, (1, 2, 3, 4), (1.0,) * 8))


def test_required_text():
    lookup = p.NAME_COMMANDS[1]
    assert _check_code(lookup, Message(0, "", 1)) == p.WRONG_ARITY
    lookup.check(Message(0, "/sim", 1))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_data_must_be_finite(bad):
    assert _check_code(SET_SPEEDS, Message(0, "", 100, (), (0.0, bad))) == p.OUT_OF_RANGE


def test_every_table_is_consistent():
    for table in (p.NAME_COMMANDS, p.ROBOT_COMMANDS, p.SIM_COMMANDS, p.PLAYBACK_COMMANDS):
        assert table[0] is p.HELLO
        for cid, command in table.items():
            assert cid == command.id
            assert 0 <= command.params[0] <= command.params[1]
            assert 0 <= command.data[0] <= command.data[1]
            assert command.text in ("", "opt", "req")


def test_robot_command_ids_follow_their_modules():
    bases = {"motors": 100, "sonar": 200, "target": 300, "odometry": 400, "gps": 500,
             "compass": 600, "bumper": 700, "support": 800}
    table = p.robot_commands(MODULES.get(label) for label in bases)
    for command in table.values():
        if command.module:
            assert command.id // 100 * 100 == bases[command.module], command
            assert command.kind in ("read", "motion", "action")
    assert all(not c.module for c in p.ROBOT_COMMANDS.values())
    assert {c.name for c in p.ROBOT_COMMANDS.values()} >= {
        "hello", "modules", "detach", "commands", "param_list", "param_info", "param_get",
        "param_set"}
    assert [p.ROBOT_COMMANDS[i].name for i in (10, 11, 12, 13)] == [
        "param_list", "param_info", "param_get", "param_set"]
    assert {c.id for c in table.values() if c.kind == "motion"} == {100, 101, 102}


def test_command_lines_round_trip():
    for command in p.robot_commands(MODULES.get(m) for m in MODULES.labels()).values():
        again = Command.parse(command.describe())
        assert (again.id, again.name, again.module, again.params, again.data, again.text,
                again.kind) == (command.id, command.name, command.module, command.params,
                                command.data, command.text, command.kind)


def test_error_codes_are_distinct_and_named():
    codes = [p.OK, p.BAD_MESSAGE, p.UNKNOWN_COMMAND, p.WRONG_ARITY, p.OUT_OF_RANGE,
             p.UNKNOWN_NAME, p.NOT_ALLOWED, p.VERSION_MISMATCH, p.FAILED, p.TIMEOUT, p.INTERNAL,
             p.OWNED, p.BUSY, p.TELEOPERATED, p.POSE_REFUSED, p.POSE_FLOOD]
    assert codes == list(range(16))
    codes.append(NOT_SHARED)  # 16: shared control's (version 10)
    codes.append(EXTERNAL_ROBOT)  # 17: motion to an external robot (version 11)
    codes.append(OVER_BUDGET)  # 18: an image read over its budgets (version 12)
    assert set(p.ERROR_NAMES) == set(codes) and p.ERROR_NAMES[OVER_BUDGET] == "over budget"


# --- hello ----------------------------------------------------------------------------------------

def test_hello_answers_version_and_name():
    reply = p.hello_reply(Message(0, "", 0), "/sim")
    assert (reply.error, reply.text, reply.params) == (0, "/sim", (p.PROTOCOL_VERSION,))
    assert p.hello_reply(Message(0, "", 0, (p.PROTOCOL_VERSION,)), "/sim").error == 0


def test_hello_refuses_another_version():
    reply = p.hello_reply(Message(0, "", 0, (p.PROTOCOL_VERSION + 1,)), "/sim")
    assert reply.error == p.VERSION_MISMATCH
    assert str(p.PROTOCOL_VERSION) in reply.text

