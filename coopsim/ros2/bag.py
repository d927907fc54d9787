"""``coopsim export FILE --ros2 OUT``: a recording as a rosbag2 folder (MCAP storage).

``OUT/`` holds ``OUT_0.mcap`` (profile ``ros2``: ``ros2msg`` schemas, CDR messages) and
``metadata.yaml`` (rosbag2's bag description, version 5, readable by ``ros2 bag`` from Humble
on), with the topics the live bridge publishes (:mod:`.scene`): per recorded step ``/clock``,
``/tf`` and every robot's odometry, scans at their module's rate, ``/map`` and ``/tf_static``
at the start and after every layout change, and shared control's ``/squads/<squad>/feedback``
(recording format 7). Times are sim time (the recording's clock, from 0).
The export streams (one recorded chunk in memory at a time) and writes into ``OUT.part/``,
renamed when done, so a failed export leaves no half bag.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from mcap.writer import CompressionType, Writer

from ..model.errors import CoopsimError
from ..replay.player import recorded_steps
from . import messages as m
from .feedback import WRENCH, messages as feedback_messages
from .images import camera_messages
from .scene import RosScene

METADATA_VERSION = 5
# The QoS each topic is offered with, as rosbag2 records it (a YAML list of one profile in
# rmw's enum numbers: history 3 "unknown" as rosbag2 writes an offered profile, reliability 1
# reliable, durability 1 transient local or 2 volatile, liveliness 1 automatic). /map and
# /tf_static are offered transient-local, as a live map server and tf2 offer them, so
# `ros2 bag play` re-offers them latched; the other topics are reliable and volatile, as the
# live bridge offers them (coopsim.ros2.dds.STREAM).
_NEVER = "    sec: 2147483647\n    nsec: 4294967295\n"


def _qos_profile(durability: int) -> str:
    return (f"- history: 3\n  depth: 0\n  reliability: 1\n  durability: {durability}\n"
            f"  deadline:\n{_NEVER}  lifespan:\n{_NEVER}"
            f"  liveliness: 1\n  liveliness_lease_duration:\n{_NEVER}"
            "  avoid_ros_namespace_conventions: false\n")


_LATCHED_QOS, _STREAM_QOS = _qos_profile(1), _qos_profile(2)
_LATCHED = ("/map", "/tf_static")


def offered_qos(topic: str) -> str:
    """The ``offered_qos_profiles`` YAML text of ``topic`` (never empty: rosbag2 players read
    it as a list of profiles)."""
    return _LATCHED_QOS if topic in _LATCHED else _STREAM_QOS


class _Bag:
    """The MCAP file of a bag: a channel per topic made on first use, counts kept. Written by
    the Foxglove SDK's MCAP writer (compiled) when the ``foxglove`` extra is installed, else by
    the ``mcap`` library; both write the same records."""

    def __init__(self, path: Path) -> None:
        self.channels: dict[str, tuple[object, str]] = {}  # topic -> (channel, short type)
        self.counts: dict[str, int] = {}
        self.first: int | None = None
        self.last = 0
        try:
            import foxglove
        except ImportError:
            foxglove = None
        self._out = _SdkOut(path, foxglove) if foxglove is not None else _LibOut(path)

    def write(self, topic: str, short: str, data: bytes, ns: int) -> None:
        channel = self.channels.get(topic)
        if channel is None:
            qos = offered_qos(topic)
            channel = self.channels[topic] = (self._out.channel(topic, short, qos), short)
            self.counts[topic] = 0
        count = self.counts[topic]
        self._out.add(channel[0], data, ns, count)
        self.counts[topic] = count + 1
        if self.first is None:
            self.first = ns
        self.last = ns  # steps come in time order

    def close(self) -> None:
        self._out.close()


class _LibOut:
    """Through the ``mcap`` library (pure Python, about 13 us a message)."""

    def __init__(self, path: Path) -> None:
        self.file = open(path, "wb")
        self.writer = Writer(self.file, compression=CompressionType.ZSTD)
        self.writer.start(profile="ros2", library="coopsim")
        self._schemas: dict[str, int] = {}

    def channel(self, topic: str, short: str, qos: str) -> int:
        schema = self._schemas.get(short)
        if schema is None:
            schema = self._schemas[short] = self.writer.register_schema(
                name=m.ros_name(short), encoding="ros2msg",
                data=m.schema_text(short).encode("utf-8"))
        return self.writer.register_channel(topic=topic, message_encoding="cdr",
                                            schema_id=schema,
                                            metadata={"offered_qos_profiles": qos})

    def add(self, channel: int, data: bytes, ns: int, sequence: int) -> None:
        self.writer.add_message(channel, log_time=ns, data=data, publish_time=ns,
                                sequence=sequence)

    def close(self) -> None:
        self.writer.finish()
        self.file.close()


class _SdkOut:
    """Through the Foxglove SDK's MCAP writer (Rust) on a private context."""

    def __init__(self, path: Path, sdk) -> None:
        self.sdk = sdk
        self.context = sdk.Context()
        options = sdk.mcap.MCAPWriteOptions(profile="ros2", chunk_size=8 << 20)
        self.writer = sdk.open_mcap(path, allow_overwrite=True, context=self.context,
                                    writer_options=options)

    def channel(self, topic: str, short: str, qos: str):
        schema = self.sdk.Schema(name=m.ros_name(short), encoding="ros2msg",
                                 data=m.schema_text(short).encode("utf-8"))
        return self.sdk.Channel(topic, schema=schema, message_encoding="cdr",
                                context=self.context,
                                metadata={"offered_qos_profiles": qos}).base

    def add(self, channel, data: bytes, ns: int, sequence: int) -> None:
        channel.log(data, ns, None)

    def close(self) -> None:
        self.writer.close()


def export_ros2(recording, out: str | os.PathLike) -> tuple[int, int]:
    """Write ``recording`` (an open Recording) as the rosbag2 folder ``out``; return (steps,
    messages) written.

    Raises:
        CoopsimError: ``out`` exists (a bag is never overwritten) or is the recording.
        OSError: the folder cannot be written.
    """
    out = Path(out)
    if out.exists():
        raise CoopsimError(f"{out}: already exists (a bag folder is never overwritten)")
    part = out.with_name(out.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    part.mkdir(parents=True)
    try:
        bag = _Bag(part / f"{out.name}_0.mcap")
        try:
            steps = _write_steps(recording, bag)
        finally:
            bag.close()
        (part / "metadata.yaml").write_text(metadata_yaml(bag, f"{out.name}_0.mcap"),
                                            encoding="utf-8")
        os.replace(part, out)
    except BaseException:
        shutil.rmtree(part, ignore_errors=True)
        raise
    return steps, sum(bag.counts.values())


def recorded_params(recording) -> dict:
    """Robot name -> module label -> parameter values, from the scenario the recording names
    when that file still loads (its robots' ranges and rates), else {} (the modules'
    defaults). A recording keeps readings, not parameters."""
    from ..formats.files import load
    from ..sim.world import World
    try:
        spec = load(recording.info().scenario_path)
        world = World(spec)
    except Exception:  # noqa: BLE001 - moved, edited or unloadable: the defaults serve
        return {}
    return {r.name: {label: values.as_dict() for label, values in r.modules.items()}
            for r in world.robots}


def _write_steps(recording, bag: _Bag) -> int:
    scene, key, origins, steps, images, fed = None, None, {}, 0, {}, -1
    params = recorded_params(recording)
    for frame, layout, snap in recorded_steps(recording):
        ns = round(frame.position * 1e9)
        if scene is None or key != frame.layout or not scene.fits(snap):
            scene, key = RosScene(layout, snap, params, origins), frame.layout
            origins = scene.origins
            bag.write("/map", m.GRID, scene.grid(ns), ns)
            bag.write("/tf_static", m.TF, scene.static_transforms(ns), ns)
        bag.write("/clock", m.CLOCK, m.clock(ns), ns)
        bag.write("/tf", m.TF, scene.transforms(snap, ns), ns)
        for topic, data in scene.odometry(snap, ns):
            bag.write(topic, m.ODOMETRY, data, ns)
        for topic, data in scene.imu(snap, ns):
            bag.write(topic, m.IMU, data, ns)
        for topic, short, data in scene.arm_messages(snap, ns):
            bag.write(topic, short, data, ns)
        for topic, data in scene.scans(snap, ns):
            bag.write(topic, m.SCAN, data, ns)
        for topic, short, data in camera_messages(snap, images, params):
            bag.write(topic, short, data, ns)
        for topic, data in scene.clouds():
            bag.write(topic, m.CLOUD, data, ns)
        fed = _feedback(bag, snap, ns, fed)
        steps += 1
    return steps


def _feedback(bag: _Bag, snap, ns: int, after: int) -> int:
    """Shared control's WrenchStamped of each squad computed after step ``after`` (recording
    format 7), as the live bridge publishes them (the header stamped with the sim time it was
    computed at), logged at the recorded step's time ``ns``; the last step written (a reset
    starts over)."""
    board = snap.extra.get("feedback")
    if not board:
        return after
    if min(fb.step for fb in board.values()) < after:
        after = -1  # a reset: the steps start over
    for topic, data in feedback_messages(snap, after):
        bag.write(topic, WRENCH, data, ns)
    return max(after, *(fb.step for fb in board.values()))


def metadata_yaml(bag: _Bag, filename: str) -> str:
    """rosbag2's ``metadata.yaml`` for one MCAP file."""
    first = bag.first or 0
    duration = bag.last - first
    total = sum(bag.counts.values())
    lines = ["rosbag2_bagfile_information:", f"  version: {METADATA_VERSION}",
             "  storage_identifier: mcap", "  duration:", f"    nanoseconds: {duration}",
             "  starting_time:", f"    nanoseconds_since_epoch: {first}",
             f"  message_count: {total}", "  topics_with_message_count:"]
    for topic, (_, short) in bag.channels.items():
        qos = offered_qos(topic)
        lines += ["    - topic_metadata:", f"        name: {topic}",
                  f"        type: {m.ros_name(short)}", "        serialization_format: cdr",
                  f"        offered_qos_profiles: {_yaml_string(qos)}",
                  f"      message_count: {bag.counts[topic]}"]
    lines += ['  compression_format: ""', '  compression_mode: ""',
              "  relative_file_paths:", f"    - {filename}", "  files:",
              f"    - path: {filename}", "      starting_time:",
              f"        nanoseconds_since_epoch: {first}", "      duration:",
              f"        nanoseconds: {duration}", f"      message_count: {total}"]
    return "\n".join(lines) + "\n"


def _yaml_string(text: str) -> str:
    """A YAML double-quoted scalar (rosbag2 keeps the QoS profiles as one YAML string)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
