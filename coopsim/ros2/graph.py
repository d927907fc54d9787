"""coopsim as a node of the ROS 2 graph: ``/coopsim`` in ``ros2 node list``.

A DDS participant is not yet a ROS 2 node: the ROS 2 graph learns which nodes a participant
holds, and which of its writers and readers belong to which node, from the
``ros_discovery_info`` topic (``rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_``, reliable,
transient local, keep last 1) that every RMW publishes for its participant. The bridge
publishes one for its Cyclone participant: one node, ``/coopsim``, holding every writer and
reader the bridge made, sent again whenever it makes another. ``rclpy``'s
``node.get_node_names()`` (and so ``ros2 node list``) then lists ``coopsim``, and
``get_publishers_info_by_topic`` (``ros2 topic info -v``) names it as the node of each topic's
publishers and subscriptions, on Jazzy and Kilted alike.

Kilted needs a second copy of the message. An RMW finds an endpoint's node by the GID of the
participant its discovery names (the parameter ``PID_PARTICIPANT_GUID``), which Cyclone DDS
never sends: Fast DDS 2 (Jazzy) then takes the participant from the endpoint's GUID prefix, as
the RTPS specification implies, but Fast DDS 3 (Kilted) leaves it unknown (16 zero bytes), and
rmw_dds_common, finding no participant of that GID, named every endpoint
``_CREATED_BY_BARE_DDS_APP_``. So the node and its endpoints go out twice, under the
participant's GID and under the unknown one (:data:`UNKNOWN`), each from a writer of its own
(transient local, keep last 1: late joiners get both). The cost: ``ros2 node list`` lists
``/coopsim`` twice (its endpoints once). On close the copy under the unknown GID is emptied
(the participant's own goes with the participant), so no node keeps it listed.

A GID (``rmw_dds_common/msg/Gid``) is the entity's 16-byte DDS GUID (prefix and entity id),
as RMWs from ROS 2 Iron on write it (Jazzy, Kilted).
"""

from __future__ import annotations

import functools
import threading
import types
from dataclasses import dataclass

from .cdr import Writer

# What a stock ROS 2 node must set to find a loopback-only run, measured with rclpy on Fast DDS
# (docs/ros2.md, *Finding coopsim*): with its defaults it looks by multicast and drops the
# loopback addresses of a participant it cannot tell is on its own host, so it never matches.
RECIPE = "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"

NODE = "coopsim"  # the node's name in the ROS 2 graph (namespace "/")
TOPIC = "ros_discovery_info"  # a DDS topic name: no "rt/" prefix, it is not a ROS topic
#: The GID Fast DDS 3 gives the participant of an endpoint whose discovery does not name it
UNKNOWN = bytes(16)


@functools.lru_cache(maxsize=None)
def idl_type():
    """The IDL struct of ``ParticipantEntitiesInfo`` (ROS 2 Iron and later: GIDs of 16 bytes)."""
    from cyclonedds.idl import IdlStruct
    from cyclonedds.idl import types as t

    def struct_(module: str, name: str, fields: dict):
        cls = types.new_class(name, (IdlStruct,), {"typename": f"{module}::{name}_"},
                              lambda ns: ns.update(__annotations__=fields))
        return dataclass(cls)

    module = "rmw_dds_common::msg::dds_"
    gid = struct_(module, "Gid", {"data": t.array[t.uint8, 16]})
    node = struct_(module, "NodeEntitiesInfo", {
        "node_namespace": t.bounded_str[256], "node_name": t.bounded_str[256],
        "reader_gid_seq": t.sequence[gid], "writer_gid_seq": t.sequence[gid]})
    return struct_(module, "ParticipantEntitiesInfo", {
        "gid": gid, "node_entities_info_seq": t.sequence[node]})


def startup_line(domain: int, loopback: bool) -> str:
    """The line ``coopsim run --ros2`` prints on stderr: where DDS is, and what a ROS 2 shell
    must export to find it (``ROS_DOMAIN_ID`` too when the domain is not ROS 2's default 0)."""
    if not loopback:
        return f"ros2: DDS domain {domain} (every interface)"
    recipe = (f"ROS_DOMAIN_ID={domain} " if domain else "") + RECIPE
    return f"ros2: DDS domain {domain}, loopback only: export {recipe} in your ROS 2 shells"


def guid_bytes(entity) -> bytes:
    """A Cyclone entity's GUID: its 16 bytes as the wire has them."""
    return entity.get_guid().bytes


def entities_info(participant: bytes, readers, writers, node: str | None = NODE,
                  namespace: str = "/") -> bytes:
    """``ParticipantEntitiesInfo`` in CDR (little endian, header included): one node holding
    the readers and writers of the given GUIDs (16 bytes each); with ``node`` None, no node."""
    out = Writer()
    out.buf += participant
    if node is None:
        out.u32(0)
        return out.bytes()
    out.u32(1)  # one node
    out.string(namespace)
    out.string(node)
    for gids in (readers, writers):
        out.u32(len(gids))
        for gid in gids:
            out.buf += gid
    return out.bytes()


class GraphInfo:
    """Publishes the participant's ``ros_discovery_info`` (the node ``/coopsim`` and its
    endpoints, under the participant's GID and under :data:`UNKNOWN`), again each time
    :meth:`add` is given an endpoint it has not listed.

    Args:
        dds: The bridge's :class:`~.dds.Participant`.
    """

    def __init__(self, dds) -> None:
        from .dds import LATCHED
        self.dds = dds
        self._readers: list[bytes] = []
        self._writers: list[bytes] = []
        self._lock = threading.Lock()  # the bridge's thread and the caller's make endpoints
        self.writer = dds.raw_writer(TOPIC, idl_type(), LATCHED)
        self.unknown = dds.raw_writer(TOPIC, idl_type(), LATCHED)  # Fast DDS 3's copy
        self.sent = 0
        self.publish()  # the node, before it has any topic

    def add(self, reader=None, writer=None) -> None:
        """List a reader or writer (Cyclone entities) of the node and publish the new list."""
        with self._lock:
            for entity, into in ((reader, self._readers), (writer, self._writers)):
                if entity is not None:
                    into.append(guid_bytes(entity))
            self.publish()

    def publish(self) -> None:
        """Send the node and its endpoints (transient local: late joiners get the last)."""
        pp = guid_bytes(self.dds.participant)
        readers, writers = list(self._readers), list(self._writers)
        self.writer.write(entities_info(pp, readers, writers))
        self.unknown.write(entities_info(UNKNOWN, readers, writers))
        self.sent += 1

    def close(self, wait: float = 1.0) -> None:
        """Empty the copy under :data:`UNKNOWN` (no participant's leaving removes it from
        the nodes' graphs), waiting up to ``wait`` s for the readers to acknowledge it."""
        from cyclonedds.util import duration
        with self._lock:
            self.unknown.write(entities_info(UNKNOWN, [], [], node=None))
        try:
            self.unknown.writer.wait_for_acks(duration(seconds=wait))
        except Exception:  # noqa: BLE001 - not acknowledged in time: nothing more to do
            pass
