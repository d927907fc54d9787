"""``coopsim export FILE --foxglove OUT.mcap``: a recording rewritten with Foxglove's schemas.

Every recorded step becomes the messages the live bridge publishes (:mod:`.scene`), stamped
with the step's recording time, so ``OUT.mcap`` opens in Foxglove with no setup. The export
streams: one chunk of the recording decoded and one chunk of the output (the SDK's MCAP
writer) buffered at a time. It
writes ``OUT.mcap.part`` and renames it when done, so a failed export leaves no half file.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..model.errors import CoopsimError
from ..replay.player import recorded_steps
from . import make_channel, require_sdk
from .arms import ArmScene
from .layout import layout_json
from .images import image_messages
from .scans import Scans
from .scene import Scene
from .topics import (EVENTS, SCENE_BODIES, SCENE_WORLD, STATE, TF, EventLog, Topic, log_message,
                     metric_messages, pose_topic, state_json)

# bytes of messages per chunk. The writer keeps an index entry per chunk, with an offset per
# channel (a hundred robots: a hundred channels) until the file is finished: the SDK's default
# 1 MiB chunks made that grow about 1 MB per minute of 100 robots; 8 MiB keep it under 10 MB
# an hour, for one 8 MiB buffer.
CHUNK = 8 << 20


class _Out:
    """The SDK's MCAP writer (Rust: chunks, zstd, indexes) on a private context, with a
    channel per topic made on first use."""

    def __init__(self, path: Path, sdk) -> None:
        self.sdk = sdk
        self.context = sdk.Context()
        options = sdk.mcap.MCAPWriteOptions(chunk_size=CHUNK)
        self.writer = sdk.open_mcap(path, allow_overwrite=True, context=self.context,
                                    writer_options=options)
        self._channels: dict[str, object] = {}
        self.count = 0
        self._poses: tuple = (None, [])  # (Scene, the SDK channel of each robot's pose)
        self.metrics: dict[str, None] = {}  # every metric name met, in order

    def write(self, topic: Topic, data: bytes, ns: int) -> None:
        self._channel(topic).log(data, ns, None)
        self.count += 1

    def poses(self, scene: Scene, values, ns: int) -> None:
        """Each robot's PoseInFrame (hundreds a step: the channels are looked up once)."""
        if self._poses[0] is not scene:
            self._poses = (scene, [self._channel(pose_topic(n)) for n in scene.robots])
        data = scene.poses.fill(values, ns).tobytes()
        for channel, (a, b) in zip(self._poses[1], scene.pose_ranges):
            channel.log(data[a:b], ns, None)
        self.count += len(scene.robots)

    def _channel(self, topic: Topic):
        channel = self._channels.get(topic.name)
        if channel is None:
            channel = self._channels[topic.name] = make_channel(self.sdk, self.context,
                                                                topic).base
        return channel

    def close(self) -> None:
        self.writer.close()


def layout_path(out: str | os.PathLike) -> Path:
    """Where the export's Foxglove layout goes: ``OUT.layout.json`` beside ``OUT.mcap``."""
    out = Path(out)
    return out.with_name(out.stem + ".layout.json")


def export_foxglove(recording, out: str | os.PathLike,
                    params: dict | None = None) -> tuple[int, int]:
    """Write ``recording`` (an open :class:`~coopsim.recording.reader.Recording`) as a
    Foxglove MCAP at ``out``, and its layout (:mod:`.layout`) at :func:`layout_path`; return
    (steps, messages) written. ``params`` (robot name -> module label -> values) are the
    robots' module parameters, for the range finders' scans (:mod:`.scans`): a recording
    keeps readings, not parameters; missing ones take the modules' defaults.

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
        writer = _Out(part, sdk)
        try:
            steps = _write_steps(recording, writer, params or {})
        finally:
            writer.close()
        layout_path(out).write_text(layout_json(list(writer.metrics)), encoding="utf-8")
        os.replace(part, out)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return steps, writer.count


def _write_steps(recording, out: _Out, params: dict) -> int:
    """Every recorded step's messages; return the steps written."""
    scene, key, events, steps, images = None, None, EventLog(), 0, {}
    for frame, layout, snap in recorded_steps(recording):
        ns = round(frame.position * 1e9)
        if scene is None or key != frame.layout or not scene.fits(snap):
            scene, key = Scene(layout, snap.pose3d is not None,
                               snap.object_pose3d is not None), frame.layout
            scans, arms = Scans(layout, params), ArmScene(layout)
            out.write(SCENE_WORLD, scene.world.fill(np.zeros(0), ns).tobytes(), ns)
        values = scene.values(snap)
        out.write(SCENE_BODIES, scene.scene.fill(values, ns).tobytes(), ns)
        out.write(TF, scene.tf.fill(values, ns).tobytes(), ns)
        out.poses(scene, values, ns)
        out.write(STATE, state_json(snap), ns)
        for topic, data in scans.messages(snap, ns) + arms.messages(snap, ns):
            out.write(topic, data, ns)
        for topic, data in image_messages(snap, ns, images, lambda t: True, params):
            out.write(topic, data, ns)
        for topic, data in metric_messages(snap):
            out.write(topic, data, ns)
            out.metrics.setdefault(topic.name.removeprefix("/metrics/").replace("/", "."))
        for text in events.new(snap.rules):
            out.write(EVENTS, log_message(ns, text), ns)
        steps += 1
    return steps
