"""coopsim export --foxglove: a real recording rewritten with Foxglove's schemas, read back with
the mcap reader; every message decodes with the schema its channel names. Bad input, and the
extra not installed."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest
from mcap.reader import make_reader

from fxclient import protobuf_class
from rechelpers import RECDATA, run_cli

from coopsim.model.snapshot import rule_metrics, wrap_angle
from coopsim.replay.player import recorded_steps
from coopsim.recording.reader import Recording

SCENARIO = RECDATA / "foxglove.scenario"

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A 1 s lockstep run of two wandering robots with metrics and an event, exported."""
    folder = tmp_path_factory.mktemp("fox")
    rec, out = folder / "run.mcap", folder / "run-foxglove.mcap"
    done = run_cli("run", str(SCENARIO), "--headless", "--port", "0", "--duration", "1",
                   "--record", str(rec))
    assert done.returncode == 0, done.stderr
    done = run_cli("export", str(rec), "--foxglove", str(out))
    assert done.returncode == 0, done.stderr
    assert "51 steps" in done.stderr and str(out) in done.stderr
    return rec, out


def read_back(path):
    """(topic, schema name, log time, decoded message) of every message, in order."""
    out, classes = [], {}
    with open(path, "rb") as stream:
        for schema, channel, message in make_reader(stream).iter_messages():
            if channel.message_encoding == "protobuf":
                assert schema.encoding == "protobuf"
                cls = classes.setdefault(schema.id, protobuf_class(schema.name, schema.data))
                decoded = cls.FromString(message.data)
                assert decoded.SerializeToString() == cls.FromString(
                    decoded.SerializeToString()).SerializeToString()
            else:
                assert (channel.message_encoding, schema.encoding) == ("json", "jsonschema")
                json.loads(schema.data)
                decoded = json.loads(message.data)
            out.append((channel.topic, schema.name, message.log_time, decoded))
    return out


def test_every_message_decodes_with_the_schema_it_names(recorded):
    messages = read_back(recorded[1])
    names = {(t, s) for t, s, _, _ in messages}
    assert {("/scene/world", "foxglove.SceneUpdate"), ("/scene/bodies", "foxglove.SceneUpdate"),
            ("/tf", "foxglove.FrameTransforms"), ("/robots/alpha/pose", "foxglove.PoseInFrame"),
            ("/robots/beta/pose", "foxglove.PoseInFrame"), ("/events", "foxglove.Log"),
            ("/metrics/monitors/gap", "metrics.monitors.gap"),
            ("/sim/state", "sim.state")} <= names
    counts = {}
    for topic, *_ in messages:
        counts[topic] = counts.get(topic, 0) + 1
    assert counts["/scene/bodies"] == counts["/tf"] == counts["/robots/alpha/pose"] == 51


def test_poses_transforms_and_entities_match_the_recording(recorded):
    rec_path, out = recorded
    messages = read_back(out)
    by_topic = {}
    for topic, _, ns, msg in messages:
        by_topic.setdefault(topic, []).append((ns, msg))
    with Recording(rec_path) as rec:
        steps = list(recorded_steps(rec))
    assert len(steps) == len(by_topic["/scene/bodies"])
    moved = 0
    for (frame, _, snap), (ns, scene), (_, tf), (_, pose) in zip(
            steps, by_topic["/scene/bodies"], by_topic["/tf"], by_topic["/robots/beta/pose"]):
        assert ns == round(frame.position * 1e9)
        entities = {e.id: e for e in scene.entities}
        assert set(entities) == {"robot/alpha", "robot/beta", "object/OBJECT_1"} | {
            f"object/{o}" for o in snap.objects}
        for i, name in enumerate(snap.robots):
            x, y, yaw = snap.poses[i]
            body = entities[f"robot/{name}"].cylinders[0].pose
            assert (body.position.x, body.position.y) == pytest.approx((x, y), abs=1e-12)
            assert 2 * math.atan2(body.orientation.z, body.orientation.w) == pytest.approx(
                float(wrap_angle(yaw)), abs=1e-9)
            assert len(entities[f"robot/{name}"].lines[0].points) == 22  # 11 sonar rays
            t = tf.transforms[i]
            assert (t.parent_frame_id, t.child_frame_id) == ("world", name)
            assert (t.translation.x, t.translation.y) == pytest.approx((x, y), abs=1e-12)
        b = snap.index["beta"]
        assert (pose.pose.position.x, pose.pose.position.y) == pytest.approx(
            tuple(snap.poses[b, :2]), abs=1e-12)
        assert pose.timestamp.seconds * 10**9 + pose.timestamp.nanos == ns
        moved += not np.allclose(snap.poses, steps[0][2].poses)
    assert moved > 10  # the robots wandered: the poses are not all the first step's


def test_sonar_rays_end_at_the_recorded_distance(recorded):
    rec_path, out = recorded
    scene = next(m for t, _, _, m in read_back(out) if t == "/scene/bodies")
    with Recording(rec_path) as rec:
        _, layout, snap = next(recorded_steps(rec))
    alpha = next(e for e in scene.entities if e.id == "robot/alpha")
    radius = next(r["radius"] for r in layout["robots"] if r["name"] == "alpha")
    ends = alpha.lines[0].points[1::2]
    reach = [math.hypot(p.x, p.y) - radius for p in ends]
    assert reach == pytest.approx(list(np.nan_to_num(snap.readings["sonar"][0])), abs=1e-9)


def test_metrics_state_and_events(recorded):
    rec_path, out = recorded
    messages = read_back(out)
    with Recording(rec_path) as rec:
        steps = list(recorded_steps(rec))
    gaps = [m["value"] for t, _, _, m in messages if t == "/metrics/monitors/gap"]
    want = [dict(rule_metrics(s.rules))["monitors.gap"] for _, _, s in steps]
    assert [math.nan if g is None else g for g in gaps] == pytest.approx(want, nan_ok=True)
    assert sum(g is not None for g in gaps) == 50  # null only before the first step
    states = [m for t, _, _, m in messages if t == "/sim/state"]
    assert [s["step"] for s in states] == [s.step for _, _, s in steps]
    logs = [m for t, _, _, m in messages if t == "/events"]
    assert len(logs) == 1 and "EVENT_1" in logs[0].message and logs[0].level == 2
    # the event took the green target away: the still scene was sent again without it
    worlds = [m for t, _, _, m in messages if t == "/scene/world"]
    assert [sum(e.id.startswith("target/") for e in w.entities) for w in worlds] == [2, 1]


def _area(points) -> float:
    """|area| of a polygon (k, 2), m^2 (shoelace)."""
    x, y = np.asarray(points, float).T
    return abs(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y)) / 2


def test_zones_are_drawn_filled_and_outlined_in_every_world_scene(recorded):
    """The scenario's [ZONE_n] (a non-convex pond, a turned border box) are in /scene/world,
    first and after the event changed the layout: their vertices, triangles exactly tiling
    each polygon, an outline through the vertices, the kind, the viewer's colours."""
    rec_path, out = recorded
    worlds = [m for t, _, _, m in read_back(out) if t == "/scene/world"]
    with Recording(rec_path) as rec:
        zones = rec.layout(0)["zones"]
    assert [z["kind"] for z in zones] == ["water", "border"] and len(worlds) == 2
    for world in worlds:
        entities = {e.id: e for e in world.entities}
        for zone in zones:
            entity = entities[f"zone/{zone['name']}"]
            assert {m.key: m.value for m in entity.metadata} == {"kind": zone["kind"]}
            fill, outline = entity.triangles[0], entity.lines[0]
            assert [(p.x, p.y) for p in fill.points] == [tuple(v) for v in zone["polygon"]]
            assert [(p.x, p.y) for p in outline.points] == [tuple(v) for v in zone["polygon"]]
            assert outline.type == 1  # LINE_LOOP: closed
            corners = np.asarray(zone["polygon"])[list(fill.indices)].reshape(-1, 3, 2)
            assert len(corners) == len(zone["polygon"]) - 2
            assert sum(_area(t) for t in corners) == pytest.approx(_area(zone["polygon"]))
            rgb = np.array(zone["color"]) / 255
            assert (fill.color.r, fill.color.g, fill.color.b) == pytest.approx(tuple(rgb))
            assert fill.color.a == pytest.approx(200 / 255)  # the viewer's zone fill
            assert (outline.color.r, outline.color.g, outline.color.b) == pytest.approx(
                tuple((np.array(zone["color"]) // 2) / 255))


def test_export_of_a_file_that_is_not_a_recording_says_so(tmp_path):
    bad = tmp_path / "notes.mcap"
    bad.write_text("not a recording\n")
    out = tmp_path / "out.mcap"
    done = run_cli("export", str(bad), "--foxglove", str(out))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and str(bad) in done.stderr
    assert not out.exists() and not (tmp_path / "out.mcap.part").exists()


def test_export_of_a_foxglove_export_is_refused(recorded, tmp_path):
    done = run_cli("export", str(recorded[1]), "--foxglove", str(tmp_path / "again.mcap"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "again.mcap").exists()


def test_export_into_a_missing_folder_and_onto_itself(recorded, tmp_path):
    rec = recorded[0]
    done = run_cli("export", str(rec), "--foxglove", str(tmp_path / "nope" / "x.mcap"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    done = run_cli("export", str(rec), "--foxglove", str(rec))
    assert done.returncode == 2 and "overwrite the recording" in done.stderr
    done = run_cli("export", str(rec))
    assert done.returncode == 2 and "needs --csv OUT, --foxglove OUT.mcap or --ros2 OUT" in done.stderr


NO_SDK = ("import sys\nsys.modules['foxglove'] = None\nfrom coopsim.app.cli import main\n"
          "main(sys.argv[1:])\n")


@pytest.mark.parametrize("args", [
    ("export", "RECORDING", "--foxglove", "x.mcap"),
    ("run", str(RECDATA / "two_robots.scenario"), "--headless", "--port", "0", "--duration",
     "0.1", "--foxglove", "0"),
    ("replay", "RECORDING", "--headless", "--port", "0", "--foxglove", "0")])
def test_missing_extra_says_which_pip_command_to_run(args, recorded, tmp_path):
    args = [recorded[0] if a == "RECORDING" else a for a in args]
    done = subprocess.run([sys.executable, "-c", NO_SDK, *map(str, args)], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert "pip install -e '.[foxglove]'" in done.stderr  # this suite runs from a clone
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "x.mcap").exists()


def test_the_export_writes_a_layout_for_its_topics(recorded):
    out = recorded[1]
    layout = json.loads(out.with_name(out.stem + ".layout.json").read_text())
    text = json.dumps(layout)
    assert layout["version"] == 1
    for needle in ('"panelType": "ThreeDee"', '"/scene/bodies"', '"followTf": "world"',
                   '"/metrics/monitors/gap.value"', '"/metrics/monitors/fast.value"',
                   '"topicToRender": "/events"'):
        assert needle in text


def test_every_exported_topic_is_declared_in_the_generated_reference(recorded):
    from coopsim.app.reference import foxglove_page  # docs/reference/foxglove.md
    page = foxglove_page()
    topics = {t for t, *_ in read_back(recorded[1])}
    general = {re.sub(r"^/metrics/[^/]+/[^/]+$", "/metrics/RULE/NAME",
                      re.sub(r"^/robots/[^/]+/", "/robots/NAME/", t)) for t in topics}
    assert "/robots/NAME/pose" in general and "/metrics/RULE/NAME" in general
    assert sorted(t for t in general if f"| `{t}` |" not in page) == []
