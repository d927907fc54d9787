"""A Foxglove WebSocket client for the tests (the ``websockets`` package): subscribes to topics
as the server advertises them and decodes each message with the schema its channel names
(protobuf from the advertised FileDescriptorSet, JSON as JSON)."""

from __future__ import annotations

import base64
import json
import struct
import time

from google.protobuf import descriptor_pb2, message_factory
from websockets.sync.client import connect

SUBPROTOCOLS = ["foxglove.sdk.v1", "foxglove.websocket.v1"]


def protobuf_class(schema_name: str, data: bytes):
    """The message class of ``schema_name`` built from a FileDescriptorSet."""
    files = descriptor_pb2.FileDescriptorSet.FromString(data)
    return message_factory.GetMessages(files.file)[schema_name]


def decoder(encoding: str, schema_name: str, schema: bytes):
    """A function decoding one message of a channel."""
    if encoding == "protobuf":
        cls = protobuf_class(schema_name, schema)
        return cls.FromString
    assert encoding == "json", encoding
    return lambda data: json.loads(data)


PLAYING, PAUSED, BUFFERING, ENDED = range(4)


def parse_state(data: bytes) -> tuple:
    """A playback state: (status, current time ns, speed, did seek, request id)."""
    status, ns, speed, seek, size = struct.unpack_from("<BQfBI", data)
    return status, ns, speed, bool(seek), data[18:18 + size].decode()


class FoxgloveClient:
    """One connection to a Foxglove WebSocket server.

    Args:
        url: ``ws://HOST:PORT``.
        wanted: Called with a topic name; subscribe when it returns True.
    """

    def __init__(self, url: str, wanted=lambda topic: True, timeout: float = 20.0) -> None:
        self._connection = connect(url, subprotocols=SUBPROTOCOLS, open_timeout=timeout)
        self.ws = self._connection.__enter__()
        self.wanted = wanted
        self.server_info: dict = {}
        self.channels: dict[int, dict] = {}
        self._subs: dict[int, tuple[str, object]] = {}  # subscription id -> (topic, decode)
        self.times: list[int] = []  # server Time messages, ns
        self.binary_ops: list[int] = []
        self.states: list[tuple] = []  # playback states (binary opcode 5), parse_state's
        self.statuses: list[dict] = []  # status messages: {level, message, id}

    def close(self) -> None:
        self._connection.__exit__(None, None, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def receive(self, until, timeout: float = 20.0) -> dict[str, list]:
        """Messages received, by topic ((log time ns, decoded) pairs), until ``until(got)``
        is true; AssertionError after ``timeout`` s."""
        got: dict[str, list] = {}
        deadline = time.monotonic() + timeout
        while not until(got):
            left = deadline - time.monotonic()
            counts = ", ".join(f"{k}: {len(v)}" for k, v in got.items())
            assert left > 0, f"timed out; got {{{counts}}}"
            try:
                frame = self.ws.recv(timeout=min(left, 1.0))
            except TimeoutError:
                continue
            self._take(frame, got)
        return got

    def _take(self, frame, got: dict) -> None:
        if isinstance(frame, str):
            msg = json.loads(frame)
            if msg["op"] == "serverInfo":
                self.server_info = msg
            elif msg["op"] == "advertise":
                self._subscribe(msg["channels"])
            elif msg["op"] == "status":
                self.statuses.append(msg)
            return
        op = frame[0]
        self.binary_ops.append(op)
        if op == 1:
            sub, ns = struct.unpack_from("<IQ", frame, 1)
            topic, decode = self._subs[sub]
            got.setdefault(topic, []).append((ns, decode(bytes(frame[13:]))))
        elif op == 2:
            self.times.append(struct.unpack_from("<Q", frame, 1)[0])
        elif op == 5:
            self.states.append(parse_state(bytes(frame[1:])))

    def _subscribe(self, channels: list[dict]) -> None:
        subs = []
        for ch in channels:
            self.channels[ch["id"]] = ch
            if not self.wanted(ch["topic"]):
                continue
            schema = ch["schema"]
            raw = base64.b64decode(schema) if ch["encoding"] == "protobuf" else schema.encode()
            sub = len(self._subs) + 1
            self._subs[sub] = (ch["topic"], decoder(ch["encoding"], ch["schemaName"], raw))
            subs.append({"id": sub, "channelId": ch["id"]})
        if subs:
            self.ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))

    def playback(self, play: bool, speed: float = 1.0, seek_ns: int | None = None,
                 request: str = "r1") -> None:
        """Send a playback control request (binary opcode 3 of the SDK's protocol)."""
        rid = request.encode()
        self.ws.send(struct.pack("<BBfBQI", 3, 0 if play else 1, speed, seek_ns is not None,
                                 seek_ns or 0, len(rid)) + rid)
