"""The Foxglove topics coopsim publishes, their JSON schemas, and the messages that are not
scene: ``/sim/state``, the metrics' JSON and the events' ``foxglove.Log``
(:mod:`coopsim.foxglove.scene` draws the scene; docs/foxglove.md lists the topics).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ..model.plugins import timed_events
from ..model.snapshot import rule_metrics
from .proto import Msg


@dataclass(frozen=True)
class Topic:
    """One Foxglove topic: its name and the schema its messages use.

    Attributes:
        name: Topic name (``/scene/bodies``, ``/robots/robot1/pose``...).
        schema: A Foxglove schema (``SceneUpdate``, ``PoseInFrame``, ``FrameTransforms``,
            ``Log``: protobuf, the SDK's ``foxglove.*`` schema) or ``""`` for a JSON topic.
    """

    name: str
    schema: str = ""


SCENE_WORLD = Topic("/scene/world", "SceneUpdate")  # floor, zones, targets
SCENE_BODIES = Topic("/scene/bodies", "SceneUpdate")  # robots, heading, names, rays, objects
TF = Topic("/tf", "FrameTransforms")  # world -> each robot
STATE = Topic("/sim/state")  # JSON: step, time, counts, layout version
EVENTS = Topic("/events", "Log")  # timed events as they happen


def pose_topic(robot: str) -> Topic:
    """The PoseInFrame topic of one robot."""
    return Topic(f"/robots/{robot}/pose", "PoseInFrame")


def metric_topic(name: str) -> Topic:
    """The JSON topic of one metric (``monitors.distance`` -> ``/metrics/monitors/distance``,
    its value at ``.value`` for the Plot panel)."""
    return Topic("/metrics/" + name.replace(".", "/"))


JSON_SCHEMAS = {
    STATE.name: {"type": "object", "properties": {
        "step": {"type": "integer"}, "time": {"type": "number"},
        "robots": {"type": "integer"}, "objects": {"type": "integer"},
        "layout_version": {"type": "integer"}}},
    "metric": {"type": "object", "properties": {"value": {"type": ["number", "null"]},
                                                "time": {"type": "number"}}},
}


def json_schema(topic: Topic) -> dict:
    """The JSON schema of a JSON topic."""
    return JSON_SCHEMAS.get(topic.name, JSON_SCHEMAS["metric"])


def state_json(snap) -> bytes:
    """The ``/sim/state`` message of a step."""
    return json.dumps({"step": snap.step, "time": snap.time, "robots": len(snap.robots),
                       "objects": len(snap.objects),
                       "layout_version": snap.layout_version}).encode()


def metric_messages(snap) -> list[tuple[Topic, bytes]]:
    """One JSON message per metric (``value`` null when it could not be computed)."""
    return [(metric_topic(name), json.dumps(
        {"value": None if math.isnan(v) else v, "time": snap.time}).encode())
        for name, v in rule_metrics(snap.rules)]


def log_message(ns: int, text: str, name: str = "coopsim.events") -> bytes:
    """A foxglove.Log at INFO level."""
    return bytes(Msg().sub(1, _stamp(ns)).uint(2, 2).string(3, text).string(4, name).data)


def _stamp(ns: int) -> Msg:
    return Msg().uint(1, ns // 1_000_000_000).uint(2, ns % 1_000_000_000)


class EventLog:
    """Turns the timed events of the rules that declare a timeline (``Rule.timeline``: the
    scenario's ``[EVENT_n]``) into one Log text per event as it happens."""

    def __init__(self) -> None:
        self._done: set[tuple[str, float]] = set()

    def new(self, rules) -> list[str]:
        """Texts of the events done in ``rules`` and not before (a reset forgets them)."""
        events = timed_events(rules) if hasattr(rules, "items") else []
        done = {(e.get("name", ""), e.get("at")) for e in events if e.get("done")}
        texts = [f"event {e.get('name')} (at {e.get('at')} s) applied at step {e.get('step')}, "
                 f"t = {e.get('time')} s" for e in events
                 if e.get("done") and (e.get("name", ""), e.get("at")) not in self._done]
        self._done = done
        return texts
