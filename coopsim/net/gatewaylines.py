"""The JSON-lines gateway's line format: request lines in, reply and stream lines out.

A request line names its destination port first, then carries the five items of a message
(docs/protocol.md section 6)::

    ["/robot1/sonar", 0, "", 200, [], []]

:func:`parse_request` decodes one into its port and :class:`~coopsim.net.protocol.Message`,
:func:`format_reply` writes a reply line, :func:`auth_reply` answers a connection's first line
when the gateway has a token. Used by the gateway (:mod:`coopsim.net.gateway`, admitting
connections) and by each connection's thread (:mod:`coopsim.net.gatewayconn`).
"""

from __future__ import annotations

import hmac
import json
import math

import msgpack

from . import protocol as p
from ..model.errors import ProtocolError
from .protocol import Message

MAX_LINE = p.MAX_MESSAGE_BYTES  # a longer line gets an error line, then the connection closes
SLICE_MS = 100  # how often a waiting thread checks whether the gateway is closing
AUTH_PORT = "/auth"  # the port name of the auth line
AUTH_WAIT = 10.0  # s a connection has to send its auth line


def parse_request(line: bytes) -> tuple[str, Message]:
    """Decode one request line into its port name and message.

    Raises:
        ProtocolError: BAD_MESSAGE with a sentence saying what is wrong.
    """
    try:
        items = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise ProtocolError(p.BAD_MESSAGE, "not a line of UTF-8 JSON; send e.g. "
                            '["/robot1/sonar", 0, "", 200, [], []]') from None
    if not isinstance(items, list) or len(items) != 6:
        raise ProtocolError(p.BAD_MESSAGE, "a line is a JSON array of 6 items: "
                                           "[port, error_code, text, command, params, data]")
    port = items[0]
    if not isinstance(port, str) or not port.startswith("/"):
        raise ProtocolError(p.BAD_MESSAGE, 'the first item is a port name such as "/robot1"')
    if not all(_encodable(s) for s in (port, items[2]) if isinstance(s, str)):
        raise ProtocolError(p.BAD_MESSAGE, "a string is not valid Unicode (a lone surrogate "
                                           "such as \\ud800 has no UTF-8 form)")
    try:
        wire = msgpack.packb(items[1:], use_bin_type=True)
    except (OverflowError, TypeError, ValueError):  # integers beyond 64 bits, and the like
        command = items[3]  # echoed when it is itself a protocol integer (section 2)
        known = type(command) is int and -2**63 <= command < 2**64
        raise p.BadMessage("a number does not fit the protocol's types",
                           command if known else -1) from None
    return port, Message.from_wire(wire)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def format_line(items: list) -> bytes:
    """One line: a JSON array (non-finite numbers in the last item, data, become null)."""
    items = [*items[:-1], [d if math.isfinite(d) else None for d in items[-1]]]
    return json.dumps(items, ensure_ascii=False).encode("utf-8", "backslashreplace") + b"\n"


def format_reply(msg: Message) -> bytes:
    """One reply line: the five items as a JSON array (non-finite numbers become null)."""
    return format_line([msg.error, msg.text, msg.command, list(msg.params), list(msg.data)])


def auth_reply(line: bytes, token: str) -> Message:
    """The answer to a connection's first line: ok if it is the auth line with ``token``."""
    usage = f'the first line must be ["{AUTH_PORT}", 0, "TOKEN", 0, [], []]'
    if not line:
        return Message(p.NOT_ALLOWED, f"no auth line within {AUTH_WAIT:g} s; closing", -1)
    try:
        port, msg = parse_request(line)
    except ProtocolError:
        return Message(p.NOT_ALLOWED, f"{usage}; closing", -1)
    if port != AUTH_PORT or msg.command != 0:
        return msg.fail(p.NOT_ALLOWED, f"{usage}; closing")
    if not hmac.compare_digest(msg.text.encode(), token.encode()):
        return msg.fail(p.NOT_ALLOWED, "wrong token; closing")
    return msg.reply("authenticated")
