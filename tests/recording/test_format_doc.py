"""docs/recording-format.md is enough to decode a recording: the decoder below is written from
that page alone (msgpack, the mcap package's plain reader and numpy; nothing of
coopsim.recording), and must give what coopsim's own reader gives, value for value, for the
bundled sample (an older file: three-item column tables, ``bars``, no ``d``) and for a fresh
recording with every feature (several chunks and keyframes, layout changes, a reset, parts,
rules, a robot without sonar, a robot turned past pi).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
from pathlib import Path

import msgpack
import numpy as np
import pytest
from mcap.reader import make_reader

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "recordings" / "sample.mcap"


# -- the decoder, from docs/recording-format.md ----------------------------------------------------

def _columns(text: str) -> list[tuple[str, float, int, str]]:
    """Section 2: [name, unit, order, module] entries; older files lack the module."""
    return [(e[0], float(e[1]), int(e[2]), str(e[3]) if len(e) > 3 else "")
            for e in json.loads(text)]


def _scale(unit: float) -> float:
    """Section 4: S = 1/u, the nearest integer when 1/u is within a relative 1e-6 of one."""
    s = 1.0 / unit
    return float(round(s)) if abs(s - round(s)) <= 1e-6 * s else s


def _unpack(packed, steps: int, ncols: int) -> np.ndarray:
    """Section 4, packed arrays: (steps, n, ncols) int64."""
    widths, raw = packed
    sizes = [int(w) for w in widths]
    assert len(sizes) == ncols
    n = len(raw) // (steps * sum(sizes)) if raw else 0
    out = np.zeros((steps, n, ncols), dtype=np.int64)
    offset = 0
    for c, w in enumerate(sizes):
        count = steps * n
        out[:, :, c] = np.frombuffer(raw, dtype=f"<i{w}", count=count,
                                     offset=offset).reshape(steps, n)
        offset += w * count
    return out


def _upgrade(layout: dict) -> dict:
    """Section 3: older layouts' bars as parts."""
    if "parts" not in layout:
        layout["parts"] = [{"name": b.get("name", ""), "section": b.get("name", ""),
                            "color": [150, 110, 60], "x": b.get("x", 0), "y": b.get("y", 0),
                            "yaw": b.get("yaw", 0),
                            "shapes": [{"kind": "box", "radius": 0,
                                        "size": [b.get("length", 0), b.get("width", 0)],
                                        "vertices": [], "offset": [0, 0]}]}
                           for b in layout.pop("bars", [])]
    return layout


class _Track:
    """Section 4, quantisation and differences, for one group of columns."""

    def __init__(self, columns) -> None:
        self.second = np.array([order == 2 for _, _, order, _ in columns])
        self.scale = np.array([_scale(unit) for _, unit, _, _ in columns])
        self.q = self.d = None

    def decode(self, e: np.ndarray, key: bool) -> np.ndarray:
        """(F, n, C) stored integers -> (F, n, C) values."""
        out = np.empty(e.shape, dtype=float)
        for f in range(len(e)):
            if f == 0 and key:
                self.q, self.d = e[0].copy(), np.zeros_like(e[0])
            else:
                d = np.where(self.second, self.d + e[f], e[f])
                self.q, self.d = self.q + d, d
            out[f] = self.q / self.scale
        return out


def decode_recording(path: Path) -> dict:
    """Everything in a recording: metadata, attachments, layouts, and every step."""
    with open(path, "rb") as stream:
        reader = make_reader(stream)
        assert reader.get_header().profile == "coopsim"
        meta = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
        texts = {a.name: a.data.decode("utf-8") for a in reader.iter_attachments()}
        layouts, blocks = {}, []
        for _, channel, message in reader.iter_messages(log_time_order=False):
            item = msgpack.unpackb(message.data, raw=False)
            if channel.topic == "/layout":
                layout = _upgrade(dict(item["layout"]))
                layout.update(ordinal=item["ordinal"], step=item["step"], time=item["time"])
                layouts[item["ordinal"]] = layout
            elif channel.topic == "/frames":
                assert message.log_time == item["p"][0]
                blocks.append(item)
    start = meta["coopsim"]
    assert int(start["format"]) <= 7  # 4 to 7: 2D blocks as 3 wrote them (3D add "3", "O"; 7 "F")
    robot_cols, body_cols = _columns(start["robot_columns"]), _columns(start["body_columns"])
    robots, bodies, steps = _Track(robot_cols), _Track(body_cols), []
    for block in sorted(blocks, key=lambda b: b["i"]):
        count = len(block["s"])
        r = robots.decode(_unpack(block["r"], count, len(robot_cols)), block["k"])
        b = bodies.decode(_unpack(block["b"], count, len(body_cols)), block["k"])
        mask = np.array([[bool(module) and module not in robot["modules"]
                          for _, _, _, module in robot_cols]
                         for robot in layouts[block["L"]]["robots"]], dtype=bool)
        for f in range(count):
            steps.append({"index": block["i"] + f, "step": block["s"][f], "time": block["t"][f],
                          "position": block["p"][f] / 1e9, "layout": block["L"],
                          "dt": block.get("d", float(start["dt"])),
                          "rules": block["R"][f] if "R" in block else {},
                          "robots": np.where(mask.reshape(r[f].shape), np.nan, r[f]),
                          "bodies": b[f]})
    return {"meta": meta, "texts": texts, "layouts": layouts, "steps": steps,
            "robot_columns": robot_cols}


def wrap(yaw):
    """Section 5: yaw wrapped to (-pi, pi], values in range unchanged."""
    yaw = np.asarray(yaw, dtype=float)
    return np.where((yaw > -math.pi) & (yaw <= math.pi), yaw,
                    -(np.mod(math.pi - yaw, 2 * math.pi) - math.pi))


# -- the comparison ---------------------------------------------------------------------------------

def test_the_decoder_uses_nothing_of_coopsim():
    source = "".join(inspect.getsource(fn) for fn in (_columns, _scale, _unpack, _upgrade, _Track,
                                                      decode_recording, wrap))
    assert "coopsim." not in source and "rf." not in source


def _fresh(tmp_path: Path) -> Path:
    """A recording with every feature of the format."""
    from coopsim.model.specs import RuleSetting

    from helpers import box, robot, scenario, target
    from rechelpers import motors_only_type, record

    sonarless = motors_only_type("sonarless_doc_test")
    spec = scenario([robot("a", -3.0, -2.0, yaw=3.0), robot("b", -1.0, -2.0),
                     dataclasses.replace(robot("bare", 1.0, -2.0), type=sonarless),
                     robot("t", 0.0, 2.5, type="team2")],
                    objects=[box("crate", 2.0, 0.0, (0.4, 0.4), mass=1.0)],
                    targets=[target("red", 3.0, 3.0)], dt=0.02)
    spec = dataclasses.replace(spec, rules=(RuleSetting("stop_when_all_at_target",
                                                        (("radius", 0.05),)),))

    def spin(stepper):  # robot a turns on the spot, past +pi
        stepper.slots.put("a", "motors", (-0.4, 0.4), attach=False)

    path = tmp_path / "every_feature.mcap"
    events = {1: spin, 30: lambda st: st.sim.world.add_object(box("late", -2.0, 3.0, mass=0.5)),
              55: lambda st: st.sim.world.remove_object("crate"), 80: lambda st: st.reset(),
              81: spin}
    record(path, 140, spec=spec, keyframe_every=7, events=events)
    return path


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    return _fresh(tmp_path_factory.mktemp("formatdoc"))


def _same_layout(ours: dict, theirs: dict) -> None:
    assert json.loads(json.dumps(ours)) == json.loads(json.dumps(theirs))


@pytest.mark.parametrize("which", ["sample", "fresh"])
def test_the_doc_decoder_matches_coopsims_reader(which, fresh):
    from coopsim.recording.reader import Recording

    path = SAMPLE if which == "sample" else fresh
    ours = decode_recording(path)
    with Recording(path) as rec:
        assert ours["meta"]["coopsim"] == rec.meta
        assert ours["meta"].get("coopsim.end") == rec.end_meta
        named = [key for key in ("scenario_file", "world_file") if key in rec.meta]
        assert len(ours["texts"]) == len(named) and (which == "fresh" or len(named) == 2)
        for key in named:
            assert ours["texts"][rec.meta[key]] == rec.attachment(key)
        assert sorted(ours["layouts"]) == list(range(rec.layout_count))
        for ordinal, layout in ours["layouts"].items():
            _same_layout(layout, rec.layout(ordinal))
        assert [s["index"] for s in ours["steps"]] == list(range(rec.frame_count))
        for mine, frame in zip(ours["steps"], rec.iter_frames()):
            assert (mine["index"], mine["step"], mine["time"], mine["layout"]) == \
                (frame.index, frame.step, frame.time, frame.layout)
            assert mine["position"] == frame.position and mine["rules"] == dict(frame.rules)
            assert mine["dt"] == (frame.dt or rec.dt)
            theirs = rec.robot_values(frame)
            assert np.array_equal(mine["robots"], theirs, equal_nan=True), frame.index
            assert np.array_equal(mine["bodies"], frame.bodies), frame.index
    if which == "fresh":
        _features_were_exercised(ours)


def _features_were_exercised(ours: dict) -> None:
    """The fresh file has what it is meant to test, so the comparison above covers it."""
    names = [c[0] for c in ours["robot_columns"]]
    steps = ours["steps"]
    assert len(ours["layouts"]) >= 4 and all(c[3] is not None for c in ours["robot_columns"])
    assert any(s["rules"] for s in steps)
    last = steps[-1]
    layout = ours["layouts"][last["layout"]]
    bare = [r["name"] for r in layout["robots"]].index("bare")
    assert np.isnan(last["robots"][bare, names.index("sonar3")])
    assert len(layout["parts"]) == 1 and len(last["bodies"]) == len(layout["objects"]) + 1
    yaws = np.array([s["robots"][0, names.index("yaw")] for s in steps])
    assert yaws.max() > math.pi  # stored continuous
    assert np.all(np.abs(wrap(yaws)) <= math.pi)
    times = [s["position"] for s in steps]
    assert all(b > a for a, b in zip(times, times[1:]))  # across the reset too


def test_the_doc_wrap_is_the_one_coopsim_shows():
    from coopsim.model.snapshot import wrap_angle

    angles = np.concatenate((np.linspace(-20, 20, 4001), [math.pi, -math.pi, 3 * math.pi]))
    assert np.array_equal(wrap(angles), wrap_angle(angles))
