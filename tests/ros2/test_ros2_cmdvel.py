"""The cmd_vel reader's own decoding of a Twist (coopsim/ros2/cmdvel.py): the payload as every
ROS 2 RMW writes it (CDR or XCDR2, either byte order), the binding's own serialization as the
reference, and what is not a Twist refused."""

from __future__ import annotations

import struct

import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")

from coopsim.ros2.cmdvel import twist  # noqa: E402
from coopsim.ros2.dds import idl_types  # noqa: E402

VALUES = (0.25, -0.5, 0.0, 0.0, 1e-3, -1.75)


def test_the_bindings_twist_decodes_to_its_values():
    kind = idl_types()["geometry_msgs/Twist"]
    vector = kind.__annotations__["linear"]
    payload = kind(linear=vector(*VALUES[:3]), angular=vector(*VALUES[3:])).serialize()
    assert twist(payload) == (VALUES[:3], VALUES[3:])


@pytest.mark.parametrize("header,order", [(b"\x00\x01\x00\x00", "<"), (b"\x00\x00\x00\x00", ">"),
                                          (b"\x00\x07\x00\x00", "<"), (b"\x00\x06\x00\x00", ">")])
def test_either_byte_order_and_either_cdr_version(header, order):
    assert twist(header + struct.pack(f"{order}6d", *VALUES)) == (VALUES[:3], VALUES[3:])


@pytest.mark.parametrize("payload", [b"", b"\x00\x01\x00\x00" + b"\x00" * 40,
                                     b"\x01\x01\x00\x00" + b"\x00" * 48,
                                     b"\x00\x02\x00\x00" + b"\x00" * 48])
def test_what_is_not_a_twist_is_none(payload):
    assert twist(payload) is None
