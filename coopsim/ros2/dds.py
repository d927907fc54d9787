"""DDS through Eclipse Cyclone DDS's Python binding (``cyclonedds``, the optional ``ros2``
extra): the participant, its loopback-only configuration, writers of ready-made CDR payloads
and readers with a callback.

ROS 2 maps a topic ``/robot1/odom`` of type ``nav_msgs/msg/Odometry`` to the DDS topic
``rt/robot1/odom`` of type ``nav_msgs::msg::dds_::Odometry_``; the IDL structs below mirror the
ROS 2 definitions field for field (the readers decode with them). The endpoints announce no
XTypes type information (:mod:`.untyped`), so every ROS 2 RMW matches them by that type name.
Payloads are written as coopsim encodes them (:mod:`.messages`), not built as Python objects
first.
"""

from __future__ import annotations

import functools
import os
import socket
import types
from dataclasses import dataclass

from ..model.errors import CoopsimError
from .untyped import ENDPOINTS, release, untyped_topic

DOMAIN_MAX = 232  # the largest domain id whose RTPS ports fit under 65535 (ROS 2's limit too)

# Cyclone drops the XTypes type information in Fast DDS's discovery (vendor id 1.15, eProsima),
# whatever else is configured. coopsim's endpoints announce none, so every match is by type
# name whatever the peer announces; but Cyclone also reads the type look-up replies that two
# Fast DDS participants send each other (a ROS node and coopsim's services node), fails to
# validate Fast DDS's type object of every type holding a sequence, marks that type invalid, and
# from then on drops the discovery of each Fast DDS endpoint of it: a Kilted node's second
# sensor_msgs/Image reader (/R/camera3d/depth after image_raw) matched no writer for a whole run
# on a busy machine (docs/ros2.md). Ignored, no Fast DDS type enters Cyclone's type library.
IGNORE_FAST_DDS_TYPES = ("<Compatibility><IgnoreTypeInformation>1.15</IgnoreTypeInformation>"
                         "</Compatibility>")

# Discovery by unicast on loopback only: no multicast, peers probed on 127.0.0.1 at the
# participant indices 0..MaxAutoParticipantIndex (the RTPS well-known ports), so every DDS
# participant on this machine that looks on loopback finds the run and nothing beyond does.
LOOPBACK_CONFIG = """<CycloneDDS><Domain id="any"><General>
<Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces>
<AllowMulticast>false</AllowMulticast></General>
<Discovery><ParticipantIndex>auto</ParticipantIndex>
<MaxAutoParticipantIndex>{peers}</MaxAutoParticipantIndex>
<Peers><Peer address="127.0.0.1"/></Peers></Discovery>
""" + IGNORE_FAST_DDS_TYPES + "</Domain></CycloneDDS>"
LOOPBACK_PEERS = 32
#: Beyond loopback: Cyclone's defaults (or the user's CYCLONEDDS_URI) and the type rule above.
OPEN_CONFIG = f'<CycloneDDS><Domain id="any">{IGNORE_FAST_DDS_TYPES}</Domain></CycloneDDS>'


def require_dds(what: str = "--ros2"):
    """Import cyclonedds or say how to install it."""
    try:
        import cyclonedds.domain  # noqa: F401
    except ImportError:
        raise CoopsimError(f"{what} needs the Cyclone DDS binding: "
                           "pip install 'coopsim[ros2]'") from None
    import cyclonedds
    return cyclonedds


def check_domain(domain: int) -> int:
    """The domain id, or an error naming its range."""
    if not 0 <= int(domain) <= DOMAIN_MAX:
        raise CoopsimError(f"--ros2-domain must be within 0..{DOMAIN_MAX}, not {domain}")
    return int(domain)


def loopback_config(peers: int = LOOPBACK_PEERS) -> str:
    """The Cyclone DDS configuration that keeps discovery and data on 127.0.0.1."""
    return LOOPBACK_CONFIG.format(peers=peers)


def open_config() -> str:
    """The Cyclone DDS configuration beyond loopback: the user's ``CYCLONEDDS_URI`` (files or
    XML, comma-separated; Cyclone's defaults without it), then :data:`OPEN_CONFIG`."""
    return ",".join(filter(None, (os.environ.get("CYCLONEDDS_URI", "").strip(), OPEN_CONFIG)))


@functools.lru_cache(maxsize=None)
def idl_types() -> dict:
    """The IDL structs of every type coopsim publishes or reads, by short name
    (``nav_msgs/Odometry``), declared under their DDS type names."""
    require_dds()
    from cyclonedds.idl import IdlStruct
    from cyclonedds.idl import types as t

    def struct(short: str, fields: dict):
        pkg, name = short.split("/")
        cls = types.new_class(name, (IdlStruct,), {"typename": f"{pkg}::msg::dds_::{name}_"},
                              lambda ns: ns.update(__annotations__=fields))
        return dataclass(cls)

    out = {}
    out["builtin_interfaces/Time"] = T = struct("builtin_interfaces/Time",
                                                {"sec": t.int32, "nanosec": t.uint32})
    H = struct("std_msgs/Header", {"stamp": T, "frame_id": str})
    V = struct("geometry_msgs/Vector3", {"x": t.float64, "y": t.float64, "z": t.float64})
    P = struct("geometry_msgs/Point", {"x": t.float64, "y": t.float64, "z": t.float64})
    Q = struct("geometry_msgs/Quaternion", {"x": t.float64, "y": t.float64, "z": t.float64,
                                            "w": t.float64})
    pose = struct("geometry_msgs/Pose", {"position": P, "orientation": Q})
    twist = struct("geometry_msgs/Twist", {"linear": V, "angular": V})
    wrench = struct("geometry_msgs/Wrench", dict(force=V, torque=V))  # its fields, not the module
    out["geometry_msgs/WrenchStamped"] = struct("geometry_msgs/WrenchStamped",
                                                {"header": H, "wrench": wrench})
    cov = t.array[t.float64, 36]
    pwc = struct("geometry_msgs/PoseWithCovariance", {"pose": pose, "covariance": cov})
    twc = struct("geometry_msgs/TwistWithCovariance", {"twist": twist, "covariance": cov})
    tf = struct("geometry_msgs/Transform", {"translation": V, "rotation": Q})
    tfs = struct("geometry_msgs/TransformStamped", {"header": H, "child_frame_id": str,
                                                    "transform": tf})
    meta = struct("nav_msgs/MapMetaData", {"map_load_time": T, "resolution": t.float32,
                                           "width": t.uint32, "height": t.uint32,
                                           "origin": pose})
    out.update({
        "std_msgs/Header": H, "geometry_msgs/Twist": twist,
        "std_msgs/String": struct("std_msgs/String", {"data": str}),  # robot_description
        "geometry_msgs/PoseStamped": struct("geometry_msgs/PoseStamped",  # external robots
                                            {"header": H, "pose": pose}),
        "nav_msgs/Odometry": struct("nav_msgs/Odometry", {
            "header": H, "child_frame_id": str, "pose": pwc, "twist": twc}),
        "sensor_msgs/LaserScan": struct("sensor_msgs/LaserScan", {
            "header": H, "angle_min": t.float32, "angle_max": t.float32,
            "angle_increment": t.float32, "time_increment": t.float32,
            "scan_time": t.float32, "range_min": t.float32, "range_max": t.float32,
            "ranges": t.sequence[t.float32], "intensities": t.sequence[t.float32]}),
        "sensor_msgs/PointCloud2": struct("sensor_msgs/PointCloud2", {
            "header": H, "height": t.uint32, "width": t.uint32,
            "fields": t.sequence[struct("sensor_msgs/PointField", {
                "name": str, "offset": t.uint32, "datatype": t.uint8, "count": t.uint32})],
            "is_bigendian": bool, "point_step": t.uint32, "row_step": t.uint32,
            "data": t.sequence[t.uint8], "is_dense": bool}),
        "sensor_msgs/Imu": struct("sensor_msgs/Imu", {
            "header": H, "orientation": Q, "orientation_covariance": t.array[t.float64, 9],
            "angular_velocity": V, "angular_velocity_covariance": t.array[t.float64, 9],
            "linear_acceleration": V,
            "linear_acceleration_covariance": t.array[t.float64, 9]}),
        "sensor_msgs/JointState": struct("sensor_msgs/JointState", {
            "header": H, "name": t.sequence[str], "position": t.sequence[t.float64],
            "velocity": t.sequence[t.float64], "effort": t.sequence[t.float64]}),
        "tf2_msgs/TFMessage": struct("tf2_msgs/TFMessage",
                                     {"transforms": t.sequence[tfs]}),
        "nav_msgs/OccupancyGrid": struct("nav_msgs/OccupancyGrid", {
            "header": H, "info": meta, "data": t.sequence[t.int8]}),
        "rosgraph_msgs/Clock": struct("rosgraph_msgs/Clock", {"clock": T}),
        "sensor_msgs/Image": struct("sensor_msgs/Image", {
            "header": H, "height": t.uint32, "width": t.uint32, "encoding": str,
            "is_bigendian": t.uint8, "step": t.uint32, "data": t.sequence[t.uint8]}),
        "sensor_msgs/CameraInfo": struct("sensor_msgs/CameraInfo", {
            "header": H, "height": t.uint32, "width": t.uint32, "distortion_model": str,
            "d": t.sequence[t.float64], "k": t.array[t.float64, 9],
            "r": t.array[t.float64, 9], "p": t.array[t.float64, 12],
            "binning_x": t.uint32, "binning_y": t.uint32,
            "roi": struct("sensor_msgs/RegionOfInterest", {
                "x_offset": t.uint32, "y_offset": t.uint32, "height": t.uint32,
                "width": t.uint32, "do_rectify": bool})}),
    })
    return out


@dataclass(frozen=True)
class Qos:
    """The QoS of one topic, in ROS 2's words.

    Attributes:
        reliable: Reliable (else best effort). A reliable writer serves best-effort readers
            too; a best-effort reader accepts both kinds of writer.
        latched: Transient local durability (late joiners get the last ``depth`` samples).
        depth: Keep-last history depth (with ``keep_all``: the most samples kept).
        keep_all: Keep every sample up to ``depth`` (more are refused and counted in the
            reader's sample-rejected status) instead of the last ``depth``.
    """

    reliable: bool = True
    latched: bool = False
    depth: int = 10
    keep_all: bool = False

    def policies(self):
        from cyclonedds.core import Policy
        from cyclonedds.qos import Qos as CQos
        from cyclonedds.util import duration
        rel = (Policy.Reliability.Reliable(max_blocking_time=duration(milliseconds=100))
               if self.reliable else Policy.Reliability.BestEffort)
        dur = Policy.Durability.TransientLocal if self.latched else Policy.Durability.Volatile
        if self.keep_all:
            return CQos(rel, dur, Policy.History.KeepAll, Policy.ResourceLimits(
                max_samples=self.depth, max_instances=-1, max_samples_per_instance=self.depth))
        return CQos(rel, dur, Policy.History.KeepLast(self.depth))


STREAM = Qos()  # odometry, scans, tf, clock
LATCHED = Qos(latched=True, depth=1)  # /map, /tf_static
COMMANDS = Qos(reliable=False)  # cmd_vel: best effort reads every publisher's


class Participant:
    """One DDS participant on a domain, loopback-only unless told otherwise.

    Args:
        domain: DDS domain id (ROS_DOMAIN_ID), 0..232.
        loopback: Keep discovery and data on 127.0.0.1 (:data:`LOOPBACK_CONFIG`); else
            Cyclone's defaults or ``CYCLONEDDS_URI`` (every interface, multicast discovery),
            with :data:`IGNORE_FAST_DDS_TYPES` in both.
    """

    def __init__(self, domain: int = 0, loopback: bool = True) -> None:
        require_dds()
        from cyclonedds.domain import Domain, DomainParticipant
        self.domain_id = check_domain(domain)
        before, self.tied = _socket_fds(), 0
        try:
            self._domain = Domain(self.domain_id,
                                  loopback_config() if loopback else open_config())
            self.participant = DomainParticipant(self.domain_id)
        except Exception as exc:  # noqa: BLE001 - Cyclone's DDSException, said as a sentence
            raise CoopsimError(f"cannot join DDS domain {self.domain_id}: {exc}") from None
        if loopback:
            self.tied = tie_to_loopback(_socket_fds() - before)
        self._topics: dict[str, object] = {}
        #: Called with ``writer=`` or ``reader=`` (the Cyclone entity) for each ROS topic's
        #: endpoint made (:class:`.graph.GraphInfo` lists them as the node's).
        self.on_endpoint = None

    def topic(self, name: str, short: str):
        """The DDS topic of ROS topic ``name`` (``/robot1/odom`` -> ``rt/robot1/odom``)."""
        from cyclonedds.topic import Topic
        topic = self._topics.get(name)
        if topic is None:
            topic = self._topics[name] = untyped_topic(self, "rt" + name,
                                                       idl_types()[short])
        return topic

    def writer(self, name: str, short: str, qos: Qos = STREAM) -> "RawWriter":
        """A writer of ROS topic ``name``; a volatile one (not ``latched``) writes nothing
        while no reader has matched it (:class:`Matched`)."""
        from cyclonedds.core import Listener
        from cyclonedds.pub import DataWriter
        topic = self.topic(name, short)
        gate = None if qos.latched else Matched()
        listener = Listener(on_publication_matched=gate.update) if gate else None
        with ENDPOINTS:  # never while a type's information is restored (.untyped)
            writer = DataWriter(self.participant, topic, qos=qos.policies(), listener=listener)
        if self.on_endpoint is not None:
            self.on_endpoint(writer=writer)
        return RawWriter(writer, gate)

    def raw_writer(self, dds_topic: str, datatype, qos: Qos = STREAM) -> "RawWriter":
        """A writer on a DDS topic of its own name and IDL type (``ros_discovery_info``)."""
        from cyclonedds.pub import DataWriter
        topic = self._topics.get(dds_topic)
        if topic is None:
            topic = self._topics[dds_topic] = untyped_topic(self, dds_topic, datatype)
        with ENDPOINTS:
            return RawWriter(DataWriter(self.participant, topic, qos=qos.policies()))

    def reader(self, name: str, short: str, on_data, qos: Qos = COMMANDS):
        """A reader whose ``on_data(reader)`` is called on Cyclone's thread as data comes
        (with ``on_data`` None, one that is only read: :mod:`.cmdvel`)."""
        from cyclonedds.core import Listener
        from cyclonedds.sub import DataReader
        listener = Listener(on_data_available=on_data) if on_data is not None else None
        topic = self.topic(name, short)
        with ENDPOINTS:
            reader = DataReader(self.participant, topic, qos=qos.policies(), listener=listener)
        if self.on_endpoint is not None:
            self.on_endpoint(reader=reader)
        return reader

    def close(self) -> None:
        """Leave the domain (every writer and reader of this participant goes with it)."""
        if self.participant is not None:  # at once, not when collected: .untyped's records
            self.participant._delete(self.participant._ref)  # of its types end here
        release(self)
        self._topics.clear()
        self.participant = None
        self._domain = None


def on_samples(each, malformed):
    """A reader's ``on_data`` (called on Cyclone's listener thread): up to 16 samples taken,
    each handed to ``each(sample)``; a payload the binding cannot read calls ``malformed()``."""
    def on_data(reader) -> None:
        try:
            samples = reader.take(16)
        except Exception:  # noqa: BLE001 - a payload the binding cannot read
            malformed()
            return
        for sample in samples:
            if type(sample).__name__ != "InvalidSample":  # a writer gone (a node that quit):
                each(sample)  # an instance's state changed, no data: nothing to take
    return on_data


def _socket_fds() -> set[int]:
    """This process's open socket descriptors (empty where /proc is not there)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return set()
    fds = set()
    for name in names:
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                fds.add(int(name))
        except OSError:  # closed meanwhile
            continue
    return fds


def tie_to_loopback(fds) -> int:
    """Tie each UDP socket among ``fds`` bound to the wildcard address to the loopback device
    (SO_BINDTODEVICE ``lo``); return how many. Cyclone DDS binds its receiving sockets to
    0.0.0.0 whatever its interface setting says (its transmit socket takes the interface's
    address), so without this a participant configured for 127.0.0.1 still accepts datagrams
    from every network; tied, the kernel delivers it only what arrives on loopback (``ss -uanp``
    shows ``0.0.0.0%lo:7410``). Linux; elsewhere nothing is tied.

    Raises:
        CoopsimError: a socket could not be tied (DDS would listen beyond loopback).
    """
    device = getattr(socket, "SO_BINDTODEVICE", None)
    tied = 0
    for fd in sorted(fds):
        try:
            sock = socket.socket(fileno=os.dup(fd))  # a duplicate: closing it keeps Cyclone's
        except OSError:
            continue
        with sock:
            if sock.type != socket.SOCK_DGRAM or sock.getsockname()[0] not in ("0.0.0.0", "::"):
                continue
            if device is None:
                continue
            try:
                sock.setsockopt(socket.SOL_SOCKET, device, b"lo\0")
            except OSError as exc:
                raise CoopsimError(
                    f"cannot keep DDS on loopback: tying its socket {sock.getsockname()} to "
                    f"'lo' failed ({exc.strerror}); --bind ADDRESS --insecure serves DDS "
                    "beyond loopback knowingly") from None
            tied += 1
    return tied


class Matched:
    """How many readers a writer has matched, as Cyclone's publication-matched listener last
    said (on its own thread, set at the writer's creation so that no match is missed). A
    volatile writer with none skips its writes: nobody would receive them, and a write costs
    Cyclone a serialized copy and its history's bookkeeping even then (docs/ros2.md)."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def update(self, writer, status) -> None:
        self.count = status.current_count


class RawWriter:
    """A DataWriter fed payloads already in CDR (the header included); with a
    :class:`Matched` ``gate``, writes go out only while a reader has matched it."""

    def __init__(self, writer, gate: Matched | None = None) -> None:
        from cyclonedds._clayer import ddspy_write  # the binding's own write of bytes
        self.writer, self._write, self._ref = writer, ddspy_write, writer._ref
        self._gate = gate

    def write(self, payload: bytes) -> None:
        if self._gate is not None and not self._gate.count:
            return
        pad = -len(payload) % 4  # the binding pads to whole words too
        ret = self._write(self._ref, payload + b"\x00" * pad if pad else payload)
        if ret < 0:
            raise CoopsimError(f"DDS write failed ({ret}) on {self.writer.topic.name}")

    def matched(self) -> int:
        """How many readers this writer has found."""
        return len(self.writer.get_matched_subscriptions())
