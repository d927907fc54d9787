"""The Foxglove topics coopsim publishes, their JSON schemas, and the messages that are not
scene: ``/sim/state``, the metrics' JSON and the events' ``foxglove.Log``
(:mod:`coopsim.foxglove.scene` draws the scene; docs/foxglove.md lists the topics).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from ..model.plugins import timed_events
from ..model.snapshot import rule_metrics
from .proto import Msg, timestamp


@dataclass(frozen=True)
class Topic:
    """One Foxglove topic: its name and the schema its messages use.

    Attributes:
        name: Topic name (``/scene/bodies``, ``/robots/robot1/pose``...).
        schema: A Foxglove schema (``SceneUpdate``, ``PoseInFrame``, ``FrameTransforms``,
            ``Log``: protobuf, the SDK's ``foxglove.*`` schema) or ``""`` for a JSON topic.
        what: What its messages hold and when they are sent (docs/reference/foxglove.md is
            generated from it; a per-robot topic says it in its function's docstring).
    """

    name: str
    schema: str = ""
    what: str = field(default="", compare=False)


SCENE_WORLD = Topic("/scene/world", "SceneUpdate", (
    "the floor (a thin cube); each zone (`[ZONE_n]`) as the viewer draws it: its polygon "
    "filled in its colour at alpha 200/255 (a triangle list over its vertices, 2 mm above the "
    "floor) and outlined at half its brightness (a 3 cm closed line), its `kind` (`water`, "
    "`border`, `nogo`) in the entity's metadata; each target (a disc in its colour, a "
    "translucent 0.5 m disc around it showing `at_target`'s default radius) and its colour "
    "name; in a world with meshes or terrain (the state document's `scenery`), each mesh as a "
    "triangle list in its colour (live: its local file's triangles, scaled, turned and moved, "
    "up to 200,000 of them; in a replay or an export, where only the document is known, the "
    "upright prism of its floor outline from its lowest to its highest point) with its file's "
    "basename in the entity's metadata, and the terrain as a triangle list over the document's "
    "height grid; each link of a robot from a description file (the state document's `links`) "
    "as the entity `link/NAME/LINK` in the frame `NAME/LINK`, frame-locked, with its own "
    "shapes (cubes, spheres, cylinders; a mesh its file's triangles, when this process knows "
    "the file, else its bounds' box). Sent when the layout changes (and every second live, for "
    "clients that join later). Entity ids: `floor`, `zone/NAME` (its section: `zone/ZONE_1`), "
    "`target/INDEX`, `mesh/NAME` (`mesh/MESH_1`), `terrain`"))
SCENE_BODIES = Topic("/scene/bodies", "SceneUpdate", (
    "every step: robots (a cylinder of their radius in their colour, a white heading arrow, "
    "the name above), their sonar rays (a line per ray from the rim, as long as the reading; "
    "any module with a `rays` drawing hint), objects (cube or cylinder in their size and "
    "colour), team parts; in a 3D world (`mujoco`, `aerial`) objects at their 3D pose (a "
    "lifted or stacked cube at its height, turned as it is). Entity ids `robot/NAME`, "
    "`object/NAME`, `part/NAME`; robots drawn 0.1 m high. Starts by deleting the topic's "
    "entities, so removed bodies go"))
TF = Topic("/tf", "FrameTransforms", "`world` → each robot (frame named after the robot)")
STATE = Topic("/sim/state", what="`step`, `time` (sim time, s), `robots`, `objects`, "
              "`layout_version`")
EVENTS = Topic("/events", "Log", (
    "each `[EVENT_n]` as it is carried out (INFO, name `coopsim.events`): `event EVENT_1 (at "
    "0.2 s) applied at step 10, t = 0.2 s`"))


def pose_topic(robot: str) -> Topic:
    """The PoseInFrame topic of one robot: its pose in `world`."""
    return Topic(f"/robots/{robot}/pose", "PoseInFrame")


def metric_topic(name: str) -> Topic:
    """The JSON topic of one metric (``monitors.distance`` -> ``/metrics/monitors/distance``,
    ``[MONITORS] metric gap ...`` -> ``/metrics/monitors/gap``): ``value`` (SI, ``null`` when it
    cannot be computed) and ``time`` (s); plot ``/metrics/monitors/gap.value``."""
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
    return bytes(Msg().sub(1, timestamp(ns)).uint(2, 2).string(3, text).string(4, name).data)


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
