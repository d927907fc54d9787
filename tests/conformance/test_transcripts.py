"""The transcripts themselves: the patterns match what they say and nothing else, a bad file
is `file:line: what is wrong`, the transcripts cover every command of every server and every
error code a request can provoke, and docs/protocol.md's command tables are the registry's."""

from __future__ import annotations

import math

import pytest

from coopsim.conformance import doctables
from coopsim.conformance.transcript import TranscriptError, load, load_all, match
from coopsim.net import protocol as p

DOC = doctables.DOC.read_text()


@pytest.mark.parametrize("pattern, good, bad", [
    ({"any": True}, [1, "x", None], []),
    ({"int": [0, None]}, [0, 7, 10**12], [-1, 1.5, True, "3"]),
    ({"int": [1, 3]}, [1, 3], [0, 4]),
    ({"num": [0, 2]}, [0, 1.5, 2], [-0.1, 2.1, math.nan, math.inf, "1"]),
    ({"nan": True}, [math.nan], [0.0, None]),
    ({"re": r"tcp://\S+:\d+"}, ["tcp://127.0.0.1:5"], ["tcp://x:5 extra", "", 5]),
    ({"len": [1, 2], "each": {"int": [0, 9]}}, [[1], [1, 2]], [[], [1, 2, 3], [1, 10], "ab"]),
    ({"len": 3, "head": [1, 2]}, [[1, 2, 9]], [[1, 3, 9], [1, 2]]),
    ({"lines": {"len": 2, "each": {"re": "a."}}}, ["ab\nac"], ["ab", "ab\nac\nad", 3]),
    ({"json": ["floor", "robots"]}, ['{"floor": 1, "robots": [], "x": 0}'],
     ['{"floor": 1}', "[]", "not json", 5]),
    ({"json": {"columns": ["a", "b"]}}, ['{"columns": ["a", "b"], "x": 0}'],
     ['{"columns": ["a"]}', '{"columns": ["b", "a"]}', '{"x": ["a", "b"]}', "[]", 5]),
    ([0, "ok", 2, [], [1.0]], [[0, "ok", 2, [], [1]]], [[0, "ok", 2, [], [1.5]],
                                                         [0, "ok", 2, [0], [1.0]], [0, "ok"]]),
])
def test_a_pattern_matches_what_it_says_and_nothing_else(pattern, good, bad):
    for value in good:
        assert match(pattern, value) == [], value
    for value in bad:
        assert match(pattern, value), value


def test_a_mismatch_says_where_and_what():
    errors = match([0, "", 200, [{"int": [0, None]}], []], [0, "", 200, [-4], []])
    assert errors == ['reply[3][0]: expected {"int": [0, null]}, got -4']


@pytest.mark.parametrize("text, why", [
    ('{"id": "a", "port": "/sim", "expect": [0, "", 1, [], []]}\n', "exactly one of send"),
    ('{"id": "a", "send": [0, "", 1], "expect": [0, "", 1, [], []]}\n', "five-item request"),
    ('{"id": "a", "send": [0, "", 1, [], []]}\n', "'expect'"),
    ("not json\n", "Expecting value"),
])
def test_a_bad_transcript_line_is_named_by_file_and_line(tmp_path, text, why):
    path = tmp_path / "bad.jsonl"
    path.write_text("# a comment\n\n" + text)
    with pytest.raises(TranscriptError, match=rf"^bad\.jsonl:3: .*{why}"):
        load(path)


def _sent(steps, ports) -> set[int]:
    return {s.send[2] if s.send else None for s in steps if s.port.split("/")[1:2] in ports}


def test_the_transcripts_send_every_command_of_every_server():
    steps = [s for file in load_all().values() for s in file]
    tables = doctables.servers()
    servers = {"nameserver", "sim", "playback", "squads", "external", ""}
    robots = sorted({tuple(s.port.split("/")[1:2]) for s in steps} - {(n,) for n in servers}
                    - {()})
    robots = [list(r) for r in robots]  # every robot of conformance.scenario a step reaches
    sent = {"nameserver": _sent(steps, [["nameserver"]]),
            "robot": set().union(*(_sent(steps, [r]) for r in robots)),
            "sim": _sent([s for s in steps if "replay" not in s.requires], [["sim"]]),
            "playback": _sent(steps, [["playback"]])}
    for server, commands in tables.items():
        missing = [f"{c.id} {c.name}" for c in commands if c.id not in sent[server]]
        assert not missing, f"{server}: no transcript sends {missing}"


def test_the_transcripts_provoke_every_error_code_a_request_can():
    codes = {s.expect[0] for file in load_all().values() for s in file}
    # 10: only a server bug gives it; 12 busy: only requests held in flight (a timing no
    # transcript can fix; tests/net/test_ik_offload.py holds the solver to provoke it); 15
    # pose flood: only poses beyond an external robot's max_rate (tests/net/test_external.py);
    # 18 over budget: only a camera3d read on a 3D engine, which the transcripts' 2D world has
    # none of (tests/net/test_camera_reads_never_freeze.py provokes it)
    documented = set(p.ERROR_NAMES) - {p.OK, p.INTERNAL, p.BUSY, p.POSE_FLOOD, 18}
    assert documented | {11} <= codes  # 11 owned: protocol 2's ownership (05_ownership)


@pytest.mark.parametrize("heading, server", [
    ("### Bootstrap: the name server", "nameserver"), ("## 3. Robot endpoints", "robot")])
def test_the_hand_written_tables_have_the_registrys_ids_names_and_modules(heading, server):
    documented = doctables.prose_rows(DOC, heading)
    registered = [(c.id, c.module, c.name) for c in doctables.servers()[server]]
    if server == "robot":
        # the modules' full tables are generated (docs/reference/protocol.md); the prose keeps
        # the rows whose text says more, each with the registry's id, module and name, in order
        assert documented[:3] == registered[:3]  # hello, modules, detach: every endpoint's
        assert documented == [row for row in registered if row in set(documented)]
    else:
        assert documented == registered


def test_every_sim_playback_and_squads_command_says_its_request_and_reply():
    """Their tables are generated (docs/reference/protocol.md): each command but hello (section
    1's, every server's) declares what it takes and answers."""
    from coopsim.net.squads import SQUAD_COMMANDS
    commands = [*doctables.servers()["sim"], *doctables.servers()["playback"],
                *SQUAD_COMMANDS.values()]
    assert [c.name for c in commands if c.id and not c.doc] == []


def test_every_command_every_robot_has_says_its_request_and_reply():
    """Generated too (the robot endpoints' table): each but hello declares what it takes and
    answers in ``ROBOT_COMMAND_WIRE`` (its ``doc``, command 3's one sentence, stays short)."""
    assert sorted(p.ROBOT_COMMAND_WIRE) == sorted(set(p.ROBOT_COMMANDS) - {0})
