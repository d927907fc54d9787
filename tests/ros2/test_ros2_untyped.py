"""The bridge's DDS endpoints announce no XTypes type information (coopsim/ros2/untyped.py: what
lets Fast DDS 3 match them by type name), however many topics share a type; a topic the rest of
the process makes of the same IDL class keeps its information; the node's ``ros_discovery_info``
and the start-up line (coopsim/ros2/graph.py); beyond loopback, the user's ``CYCLONEDDS_URI``
is kept and Fast DDS's type information ignored (coopsim/ros2/dds.py)."""

from __future__ import annotations

import ctypes
import os

import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")

from cyclonedds.core import Entity  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402

from coopsim.ros2 import untyped  # noqa: E402
from coopsim.ros2.cdr import Reader  # noqa: E402
from coopsim.ros2.dds import OPEN_CONFIG, Participant, idl_types, open_config  # noqa: E402
from coopsim.ros2.graph import GraphInfo, entities_info, startup_line  # noqa: E402

NOT_FOUND = -60  # DDS_RETCODE_NOT_FOUND: the entity has no type information


def typeinfo(entity) -> int:
    get = Entity._dll_handle.dds_get_typeinfo
    get.restype = ctypes.c_int32
    out = ctypes.c_void_p()
    return get(ctypes.c_int32(entity._ref), ctypes.byref(out))


@pytest.fixture
def dds():
    p = Participant(100 + (os.getpid() + 11) % 120)
    yield p
    p.close()


def test_every_endpoint_of_every_type_announces_none(dds):
    for short in sorted(k for k in idl_types() if "/" in k):
        for robot in ("a", "b"):  # a second topic of the type: its type object is shared
            writer = dds.writer(f"/{robot}/{short.replace('/', '_')}", short)
            assert typeinfo(writer.writer) == NOT_FOUND, short
    reader = dds.reader("/a/cmd_vel", "geometry_msgs/Twist", lambda r: None)
    assert typeinfo(reader) == NOT_FOUND


def test_a_topic_made_elsewhere_of_the_same_class_keeps_its_information(dds):
    dds.writer("/a/odom", "nav_msgs/Odometry")
    other = Topic(dds.participant, "rt/elsewhere", idl_types()["nav_msgs/Odometry"])
    assert typeinfo(DataWriter(dds.participant, other)) == 0


def test_a_closed_participants_type_objects_are_forgotten():
    p = Participant(100 + (os.getpid() + 13) % 120)
    p.writer("/a/odom", "nav_msgs/Odometry")
    assert untyped._HIDDEN
    p.close()
    assert not untyped._HIDDEN


def test_beyond_loopback_the_users_configuration_comes_first(monkeypatch):
    monkeypatch.delenv("CYCLONEDDS_URI", raising=False)
    assert open_config() == OPEN_CONFIG
    mine = ('<CycloneDDS><Domain id="any"><General><AllowMulticast>false</AllowMulticast>'
            "</General></Domain></CycloneDDS>")
    monkeypatch.setenv("CYCLONEDDS_URI", mine)
    assert open_config() == f"{mine},{OPEN_CONFIG}"
    p = Participant(100 + (os.getpid() + 17) % 120, loopback=False)  # Cyclone takes both
    p.close()


def test_ros_discovery_info_lists_the_node_and_its_endpoints(dds):
    graph = GraphInfo(dds)
    writer = dds.writer("/a/odom", "nav_msgs/Odometry")
    graph.add(writer=writer.writer)
    data = entities_info(b"P" * 16, [b"r" * 16], [b"w" * 16, b"v" * 16])
    r = Reader(data)

    def raw(n: int) -> bytes:
        out, r.pos = r.data[r.pos:r.pos + n], r.pos + n
        return out
    assert raw(16) == b"P" * 16
    assert r.u32() == (1,)
    assert (r.string(), r.string()) == ("/", "coopsim")
    assert r.u32() == (1,) and raw(16) == b"r" * 16
    assert r.u32() == (2,) and raw(32) == b"w" * 16 + b"v" * 16
    assert graph.sent >= 2  # the node alone at first, then with the writer


def test_the_start_up_line_says_what_to_export():
    assert startup_line(0, True) == ("ros2: DDS domain 0, loopback only: export "
                                     "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST in your ROS 2 "
                                     "shells")
    assert startup_line(7, True) == ("ros2: DDS domain 7, loopback only: export ROS_DOMAIN_ID=7 "
                                     "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST in your ROS 2 "
                                     "shells")
    assert startup_line(0, False) == "ros2: DDS domain 0 (every interface)"
