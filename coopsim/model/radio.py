"""Radio payloads and messages, for controllers on either host (docs/robots.md, ``radio``).

A payload is any msgpack value. It travels in a message's **text** field as the standard base64
(RFC 4648, with padding) of its msgpack bytes, since the text field is UTF-8 and the data field
holds only floats. The radio itself carries opaque bytes: it checks only the base64 and the size
of the decoded bytes; :func:`pack` and :func:`unpack` are the msgpack convention every coopsim
client follows.

A ``radio.read`` reply holds one message per text line, ``<sender> <base64>``, and per message
three data values: range (m), bearing (rad, from the receiver's heading, + to the left) and the
step it was delivered at.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

import msgpack


@dataclass(frozen=True)
class RadioMessage:
    """One received message.

    Attributes:
        sender: The sending robot's network name.
        range: Distance between the two robots' centres when it was delivered, m.
        bearing: Direction of the sender from the receiver's heading, rad, + to the left.
        step: The step it was delivered at.
        payload: Its bytes.
    """

    sender: str
    range: float
    bearing: float
    step: int
    payload: bytes

    def value(self):
        """The payload's msgpack value (raises ValueError when it is not msgpack)."""
        return unpack_bytes(self.payload)


def pack(value) -> str:
    """The text a ``radio.send`` carries for ``value`` (base64 of its msgpack bytes)."""
    return base64.b64encode(msgpack.packb(value, use_bin_type=True)).decode("ascii")


def decode(text: str) -> bytes:
    """The bytes a payload text carries.

    Raises:
        ValueError: not standard base64.
    """
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ValueError("the payload is not base64 (RFC 4648 standard alphabet, padded)") \
            from None


def unpack_bytes(payload: bytes):
    """The msgpack value of payload bytes (ValueError when they are not one msgpack value)."""
    try:
        return msgpack.unpackb(payload, raw=False, strict_map_key=False)
    except Exception as exc:  # noqa: BLE001 -- msgpack raises many unrelated types
        raise ValueError(f"the payload is not one msgpack value ({type(exc).__name__})") from None


def unpack(text: str):
    """The msgpack value a payload text carries (ValueError when it is not one)."""
    return unpack_bytes(decode(text))


def messages(reading) -> list[RadioMessage]:
    """The messages of a ``radio.read`` reply (a Reading: data and text, either host)."""
    lines = reading.text.split("\n") if reading.text else []
    data = list(reading)
    out = []
    for k, line in enumerate(lines):
        sender, _, text = line.partition(" ")
        rng, bearing, step = data[3 * k:3 * k + 3]
        out.append(RadioMessage(sender, float(rng), float(bearing), int(step), decode(text)))
    return out


class Inbox:
    """Reads a robot's radio without reading a message twice or missing one (as long as it
    polls at least every ``keep`` steps).

    Args:
        bot: A robot handle with a ``radio`` module (network or in-process).
    """

    def __init__(self, bot) -> None:
        self.bot = bot
        self.last = -1  # the last delivery step read

    def poll(self) -> list[RadioMessage]:
        """The messages delivered since the last poll, oldest first."""
        reading = self.bot.radio.read(str(self.last))
        self.last = max(self.last, reading.step)  # all deliveries up to it are in the reply
        return messages(reading)

    def send(self, value) -> str:
        """Broadcast ``value`` (msgpack); the reply's text says how much is queued."""
        return self.bot.radio.send(pack(value))
