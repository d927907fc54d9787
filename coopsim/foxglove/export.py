"""``coopsim export FILE --foxglove OUT.mcap``: a recording rewritten with Foxglove's schemas.

Every recorded step becomes the messages the live bridge publishes (:mod:`.scene`), stamped
with the step's recording time, so ``OUT.mcap`` opens in Foxglove with no setup. The export
streams: one chunk of the recording decoded and one chunk of the output buffered at a time. It
writes ``OUT.mcap.part`` and renames it when done, so a failed export leaves no half file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from mcap.writer import CompressionType, Writer

from ..model.errors import CoopsimError
from ..recording.player import recorded_steps
from . import require_sdk
from .scene import (EVENTS, SCENE_BODIES, SCENE_WORLD, STATE, TF, EventLog, Scene, Topic,
                    json_schema, log_message, metric_messages, state_json)

CHUNK = 1 << 20  # bytes of output per chunk


class _Out:
    """An MCAP writer that registers each topic's schema and channel on first use."""

    def __init__(self, stream, sdk) -> None:
        self.sdk = sdk
        self.writer = Writer(stream, chunk_size=CHUNK, compression=CompressionType.ZSTD)
        self.writer.start(profile="", library="coopsim")
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, int] = {}
        self.count = 0

    def write(self, topic: Topic, data: bytes, ns: int) -> None:
        channel = self._channels.get(topic.name)
        if channel is None:
            channel = self._channels[topic.name] = self._register(topic)
        self.writer.add_message(channel, log_time=ns, data=data, publish_time=ns)
        self.count += 1

    def _register(self, topic: Topic) -> int:
        key = topic.schema or topic.name
        schema = self._schemas.get(key)
        if topic.schema:
            if schema is None:
                sdk_schema = getattr(self.sdk.messages, topic.schema).get_schema()
                schema = self.writer.register_schema(sdk_schema.name, "protobuf",
                                                     sdk_schema.data)
            encoding = "protobuf"
        else:
            if schema is None:
                schema = self.writer.register_schema(
                    topic.name.strip("/").replace("/", "."), "jsonschema",
                    json.dumps(json_schema(topic)).encode())
            encoding = "json"
        self._schemas[key] = schema
        return self.writer.register_channel(topic.name, encoding, schema)


def export_foxglove(recording, out: str | os.PathLike) -> tuple[int, int]:
    """Write ``recording`` (an open :class:`~coopsim.recording.reader.Recording`) as a
    Foxglove MCAP at ``out``; return (steps, messages) written.

    Raises:
        CoopsimError: the SDK (its schemas) is missing; ``out`` is the input file.
        OSError: ``out`` cannot be written.
    """
    sdk = require_sdk("--foxglove")
    out = Path(out)
    if out.exists() and out.resolve() == Path(recording.path).resolve():
        raise CoopsimError(f"{out}: the export would overwrite the recording it reads")
    part = out.with_name(out.name + ".part")
    steps = 0
    try:
        with open(part, "wb") as stream:
            writer = _Out(stream, sdk)
            steps = _write_steps(recording, writer)
            writer.writer.finish()
        os.replace(part, out)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return steps, writer.count


def _write_steps(recording, out: _Out) -> int:
    """Every recorded step's messages; return the steps written."""
    scene, key, events, steps = None, None, EventLog(), 0
    for frame, layout, snap in recorded_steps(recording):
        ns = round(frame.position * 1e9)
        if scene is None or key != frame.layout or not scene.fits(snap):
            scene, key = Scene(layout), frame.layout
            out.write(SCENE_WORLD, scene.world.fill(np.zeros(0), ns).tobytes(), ns)
        values = scene.values(snap)
        out.write(SCENE_BODIES, scene.scene.fill(values, ns).tobytes(), ns)
        out.write(TF, scene.tf.fill(values, ns).tobytes(), ns)
        for topic, data in scene.pose_messages(values, ns):
            out.write(topic, data, ns)
        out.write(STATE, state_json(snap), ns)
        for topic, data in metric_messages(snap):
            out.write(topic, data, ns)
        for text in events.new(snap.rules):
            out.write(EVENTS, log_message(ns, text), ns)
        steps += 1
    return steps
