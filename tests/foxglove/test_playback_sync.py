"""Foxglove and /playback move one replay: a seek or step made through /playback reaches
Foxglove clients as a seek (did_seek, the new time, that time's poses), exactly as a seek made
on Foxglove's timeline does; a playback speed Foxglove asks for that the replay refuses keeps
the state and answers with a status message; the bridge speaks foxglove.sdk.v1 only, so a
client offering only the older foxglove.websocket.v1 is refused at the handshake."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from websockets.exceptions import InvalidHandshake
from websockets.sync.client import connect

from coopsim.client import Client
from coopsim.recording.reader import Recording

from fxclient import PAUSED, FoxgloveClient
from rechelpers import start_cli, stop

pytest.importorskip("foxglove")

SAMPLE = Path(__file__).resolve().parents[2] / "recordings" / "sample.mcap"
ROBOT = "/robots/robot1/pose"

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture(scope="module")
def replay():
    """A paused replay of the committed sample with its bridge: (name server, ws URL)."""
    proc = start_cli("replay", str(SAMPLE), "--headless", "--port", "0", "--paused",
                     "--foxglove", "0")
    try:
        seen, deadline = "", time.monotonic() + 60
        while not ("name server:" in seen and "foxglove:" in seen):  # in either order
            line = proc.stderr.readline()
            assert line and time.monotonic() < deadline, f"the replay printed {seen!r}"
            seen += line
        yield (re.search(r"name server: (tcp://\S+)", seen)[1],
               re.search(r"foxglove: (ws://\S+)", seen)[1])
    finally:
        stop(proc)


def _pose_at(ns: int):
    with Recording(SAMPLE) as rec:
        values = rec.robot_values(rec.frame_at(ns / 1e9))[0]
    return values[0], values[1]


@pytest.mark.parametrize("move", [("seek", 4.0), ("step", 25)])
def test_a_jump_through_playback_reaches_foxglove_as_a_seek(replay, move):
    nameserver, url = replay
    with FoxgloveClient(url, lambda t: t == ROBOT) as fox, Client(nameserver) as client:
        fox.receive(lambda g: ROBOT in g)
        playback = client.playback()
        before = len(fox.states)
        reply = playback.call(4, data=(move[1],)) if move[0] == "seek" else playback.call(
            5, params=(move[1],))
        ns = round(reply.data[0] * 1e9)  # the position shown, s
        got = fox.receive(lambda g: any(s[3] and s[1] == ns for s in fox.states[before:])
                          and any(t == ns for t, _ in g.get(ROBOT, ())))
        assert (PAUSED, ns, 1.0, True, "") in fox.states[before:]  # as a Foxglove seek's
        pose = next(m for t, m in got[ROBOT] if t == ns)
        assert (pose.pose.position.x, pose.pose.position.y) == pytest.approx(_pose_at(ns),
                                                                            abs=1e-9)


def test_a_refused_speed_answers_with_a_status_message(replay):
    _, url = replay
    with FoxgloveClient(url, lambda t: t == ROBOT) as fox:
        fox.receive(lambda g: ROBOT in g)
        fox.playback(play=False, speed=5000.0, request="fast")
        fox.receive(lambda g: fox.statuses and any(s[4] == "fast" for s in fox.states))
        status = fox.statuses[-1]
        assert status["level"] == 1  # warning
        assert status["message"].startswith("playback speed 5000 refused: playback speed must "
                                            "be 0.01..1000")
        assert "keeps 1x" in status["message"]
        answer = next(s for s in fox.states if s[4] == "fast")
        assert (answer[0], answer[2]) == (PAUSED, 1.0)  # the state kept


def test_only_the_sdk_subprotocol_is_spoken(replay):
    _, url = replay
    with connect(url, subprotocols=["foxglove.sdk.v1"], open_timeout=20) as ws:
        assert ws.subprotocol == "foxglove.sdk.v1"
    with pytest.raises(InvalidHandshake):
        with connect(url, subprotocols=["foxglove.websocket.v1"], open_timeout=20):
            pass


def test_subscribing_and_unsubscribing_during_a_replay_logs_no_error():
    """The replay's listener takes the SDK's defaults for the callbacks it does not handle, so a
    subscribe or unsubscribe is not an AttributeError in the log."""
    proc = start_cli("replay", str(SAMPLE), "--headless", "--port", "0", "--paused",
                     "--foxglove", "0")
    try:
        seen = ""
        while "foxglove:" not in seen:
            line = proc.stderr.readline()
            assert line, f"the replay printed {seen!r}"
            seen += line
        with FoxgloveClient(re.search(r"foxglove: (ws://\S+)", seen)[1],
                            lambda t: t == ROBOT) as fox:
            fox.receive(lambda g: ROBOT in g)  # subscribed: poses come
            fox.ws.send(json.dumps({"op": "unsubscribe", "subscriptionIds": [1]}))
            fox.wanted = lambda t: t == "/robots/robot2/pose"
            fox._subscribe(list(fox.channels.values()))  # handled after the unsubscribe
            fox.receive(lambda g: "/robots/robot2/pose" in g)
        proc.terminate()
        rest = proc.stderr.read()
    finally:
        stop(proc)
    assert "AttributeError" not in seen + rest and "Traceback" not in seen + rest, rest
