"""One yaw convention everywhere users see it: wrapped to (-pi, pi] on the wire (/sim lists and
state, the state stream, readings), in a replay of the same run and in the CSV export, while the
recording file keeps the continuous angle (docs/protocol.md section 1, docs/recording-format.md).

A robot placed at 200 degrees has a body angle of 3.49 rad: before the fix /sim answered 3.49
where the CSV export said -2.79 for the same step.
"""

from __future__ import annotations

import csv
import io
import json
import math
import time

import numpy as np
import pytest
import zmq

from coopsim.client import Client
from coopsim.model.snapshot import wrap_angle
from coopsim.net import protocol as p
from coopsim.net.protocol import Message
from coopsim.net.statestream import decode_state
from coopsim.recording.csvexport import export_csv
from coopsim.recording.reader import Recording
from coopsim.replay.servers import Replay

from helpers import box, robot, scenario
from nethelpers import live

TURNED = math.radians(200.0)  # the body's angle, past +pi
SHOWN = TURNED - 2 * math.pi  # -160 degrees: what every user-facing place must say
INSERTED = 3.56  # the yaw of the example, given to insert_robot
INSERTED_SHOWN = INSERTED - 2 * math.pi  # -2.72


def _spec():
    return scenario(robots=[robot("r1", -2.0, 0.0, yaw=TURNED)],
                    objects=[box("crate", 2.0, 2.0, (0.6, 0.3), yaw=TURNED)], dt=0.02)


def _stream_frame(client: Client):
    ctx = zmq.Context()
    sock = ctx.socket(zmq.SUB)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SUBSCRIBE, p.STATE_TOPIC)
    sock.connect(client.lookup("/sim/state"))
    try:
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline:
            if sock.poll(100):
                frame = decode_state(Message.from_wire(sock.recv_multipart()[1]))
                if len(frame.robots) == 2:
                    return frame
        raise AssertionError("no state frame with both robots")
    finally:
        sock.close(0)
        ctx.term()


def _shown_everywhere(client: Client, replay: bool = False) -> None:
    """/sim list_robots, list_objects, state and the state stream all say the wrapped yaw."""
    sim = client.sim()
    robots, objects, state = sim.robots(), sim.objects(), sim.state()
    assert robots["r1"][2] == pytest.approx(SHOWN, abs=2e-4)
    assert robots["r2"][2] == pytest.approx(INSERTED_SHOWN, abs=2e-4)
    assert objects["crate"][2] == pytest.approx(SHOWN, abs=2e-4)
    by_name = {r["name"]: r["yaw"] for r in state["robots"]}
    assert by_name == pytest.approx({"r1": SHOWN, "r2": INSERTED_SHOWN}, abs=2e-4)
    assert state["objects"][0]["yaw"] == pytest.approx(SHOWN, abs=2e-4)
    frame = _stream_frame(client)
    assert list(frame.robots[:, 2]) == pytest.approx([SHOWN, INSERTED_SHOWN], abs=2e-4)
    assert frame.objects[0, 2] == pytest.approx(SHOWN, abs=2e-4)
    if not replay:  # the compass reads the same angle
        assert client.robot("r1").compass.read()[0] == pytest.approx(SHOWN, abs=1e-6)


def test_yaw_is_wrapped_on_the_wire_in_replays_and_exports_and_continuous_in_the_file(
        tmp_path):
    path = tmp_path / "turned.mcap"
    with live(_spec(), paused=True, record=str(path)) as run, \
            Client(run.network.endpoint) as client:
        client.sim().insert_robot("r2", "single", (1.0, -2.0, 0.0), INSERTED)
        client.sim().step(3)
        _shown_everywhere(client)
    with Recording(str(path)) as rec:
        last = rec.frame(rec.frame_count - 1)
        yaw = rec.robot_columns.index(next(c for c in rec.robot_columns if c.name == "yaw"))
        # the file keeps the body's continuous angle (compresses well; see the format doc)
        assert list(last.robots[:, yaw]) == pytest.approx([TURNED, INSERTED], abs=2e-4)
        out = io.StringIO()
        export_csv(rec, out)
    rows = [r for r in csv.DictReader(io.StringIO(out.getvalue()))]
    last_time = rows[-1]["time"]
    theta = {r["robot"]: float(r["theta"]) for r in rows if r["time"] == last_time}
    assert theta == pytest.approx({"r1": SHOWN, "r2": INSERTED_SHOWN}, abs=2e-4)
    with Replay(str(path), port=0, paused=True) as rp, Client(rp.endpoint) as client:
        client.playback().seek(1e9)  # the last recorded step, where both robots are
        _shown_everywhere(client, replay=True)


@pytest.mark.parametrize("angle, wrapped", [
    (0.0, 0.0), (math.pi, math.pi), (-math.pi, math.pi), (3 * math.pi, math.pi),
    (3.56, 3.56 - 2 * math.pi), (-3.56, 2 * math.pi - 3.56), (7.0, 7.0 - 2 * math.pi),
    (-0.5, -0.5),
])
def test_wrap_angle_is_half_open_at_minus_pi(angle, wrapped):
    assert float(wrap_angle(angle)) == pytest.approx(wrapped, abs=1e-12)
    assert -math.pi < float(wrap_angle(angle)) <= math.pi


def test_wrap_angle_of_a_few_angles_is_that_of_many_bit_for_bit():
    rng = np.random.default_rng(3)
    many = np.concatenate((rng.uniform(-12.0, 12.0, 400), [math.pi, -math.pi, np.nan, 0.0]))
    whole = wrap_angle(many)  # more than _FEW_ANGLES: the numpy test of the range
    for k in range(0, len(many), 4):  # a few at a time: the Python test
        assert wrap_angle(many[k:k + 4]).tobytes() == whole[k:k + 4].tobytes()


def test_state_document_json_has_no_unwrapped_yaw(tmp_path):
    spec = scenario(robots=[robot("r1", 0.0, 0.0, yaw=-TURNED)])
    with live(spec, paused=True) as run, Client(run.network.endpoint) as client:
        state = json.loads(client.sim().call(23).text)
    assert state["robots"][0]["yaw"] == pytest.approx(-SHOWN, abs=1e-9)
