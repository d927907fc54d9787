"""Shared control's feedback force on ROS 2: geometry_msgs/WrenchStamped on
/squads/<squad>/feedback, decoded by rosbags' own CDR reader (force, map frame, the step's
stamp), once per step; and live, through the bridge of a paused run, to a DDS reader of its
own (another participant), one message a step with the force /squads serves."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from coopsim.client import Client
from coopsim.client.squads import Squads
from coopsim.formats.files import load
from coopsim.model.steering import Feedback
from coopsim.ros2 import feedback as rf
from coopsim.ros2 import messages as m

rosbags = pytest.importorskip("rosbags", reason="rosbags (test extra) reads the messages back")
from rosbags.typesys import Stores, get_typestore  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nethelpers import live  # noqa: E402
from tests.ros2.rosnode import domain  # noqa: E402

STORE = get_typestore(Stores.ROS2_HUMBLE)
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shared-control"


class Snap:
    def __init__(self, board: dict, step: int = 8) -> None:
        self.extra, self.step = {"feedback": board}, step


def feedback(step: int, force) -> Feedback:
    return Feedback("flock", step, step * 0.01, 1, force, force, (0.0, 0.0, 0.0),
                    (0.0, 0.0, 1.0), (0.5, 0.0, 0.0))


def test_the_feedback_is_a_wrench_stamped_in_the_map_frame_once_a_step():
    assert m.DEFINITIONS[rf.WRENCH] and "geometry_msgs/Wrench" in m.schema_text(rf.WRENCH)
    snap = Snap({"flock": feedback(7, (-1.5, 0.25, 0.0))})
    (topic, data), = rf.messages(snap)
    msg = STORE.deserialize_cdr(data, m.ros_name(rf.WRENCH))
    assert topic == "/squads/flock/feedback" and msg.header.frame_id == "map"
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (0, 70_000_000)
    f, t = msg.wrench.force, msg.wrench.torque
    assert (f.x, f.y, f.z, t.x, t.y, t.z) == (-1.5, 0.25, 0.0, 0.0, 0.0, 0.0)
    assert rf.messages(snap, after=7) == [] and rf.messages(Snap({})) == []


def test_the_live_bridge_publishes_every_steps_feedback():
    pytest.importorskip("cyclonedds", reason="cyclonedds (the ros2 extra) is DDS")
    from cyclonedds.core import Listener
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic

    from coopsim.ros2.dds import idl_types

    dom = domain() + 14
    got, seen = [], threading.Condition()

    def on_data(reader) -> None:
        with seen:
            got.extend(reader.take(64))
            seen.notify_all()

    spec = load(EXAMPLE / "shared_flight.scenario")
    with live(spec, paused=True, ros2=True, ros2_domain=dom) as run, \
            Client(run.network.endpoint) as client:
        # a participant of its own on the bridge's (loopback) domain, as a ROS 2 node is
        other = DomainParticipant(dom)
        topic = Topic(other, "rt/squads/flock/feedback", idl_types()[rf.WRENCH])
        reader = DataReader(other, topic, listener=Listener(on_data_available=on_data))
        squads = Squads(client)
        client.sim().step(2)
        with seen:
            assert seen.wait_for(lambda: got, 60)
        for _ in range(3):  # one step at a time: its message carries the force served
            client.sim().step(1)
            fb = squads.feedback("flock")
            stamp = round(fb.time * 1e9) % 1_000_000_000

            def this_step():  # the bridge's thread may deliver the step before later
                return [g for g in got if g.header.stamp.nanosec == stamp]
            with seen:
                assert seen.wait_for(this_step, 60)
                mine = this_step()
            assert len(mine) == 1  # one message a step
            force = mine[0].wrench.force
            assert (force.x, force.y, force.z) == fb.force
        del reader, topic, other
