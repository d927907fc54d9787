"""Versions that mean something: hello says protocol 14 (protocol 8 changed the
stream's columns, so version-2 to -7 clients are refused; 9 to 14 only added and serve 8 to
13) and an older client is told clearly; new recordings say format 2 and format-1 recordings
still play; both docs open with their changelog; the gateway refuses a name server of another
version."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
import zmq
from mcap.reader import make_reader

from coopsim.net import protocol as p
from coopsim.net.protocol import Message
from coopsim.recording import format as rf
from coopsim.recording.reader import Recording

from rechelpers import record, run_cli

ROOT = Path(__file__).resolve().parents[2]


def test_hello_says_protocol_14_serves_8_to_13_and_refuses_every_older_version():
    """Protocol 8's stream columns change with the layout: a version-7 client may have read
    them once for the whole run, so it is not served; protocols 9 to 14 only added (a
    layout key; commands, replies, error codes, keys, request words), so version-8 to -13
    clients are served as themselves."""
    assert p.PROTOCOL_VERSION == 14
    for sent in ((14,), ()):
        reply = p.hello_reply(Message(0, "", 0, sent), "/sim")
        assert (reply.error, reply.params) == (0, (14,))
    for served in (8, 9, 10, 11, 12, 13):
        assert p.hello_reply(Message(0, "", 0, (served,)), "/sim").params == (served,)
    for old in (7, 6, 5, 4, 3, 2, 15):
        reply = p.hello_reply(Message(0, "", 0, (old,)), "/sim")
        assert reply.error == p.VERSION_MISMATCH and reply.params == (), old


@pytest.mark.parametrize("old", [1, 7])
def test_an_older_client_is_told_both_versions_and_where_the_changelog_is(old):
    reply = p.hello_reply(Message(0, "", 0, (old,)), "/robot1")
    assert reply.error == p.VERSION_MISMATCH == 7
    assert "speaks coopsim protocol 14" in reply.text and f"client protocol {old};" in reply.text
    assert "docs/protocol.md, 'Changelog'" in reply.text


@pytest.mark.parametrize("doc, version, entry", [
    ("docs/protocol.md", p.PROTOCOL_VERSION, "### Version {}"),
    ("docs/recording-format.md", rf.FORMAT_VERSION, "**Format {}**")])
def test_each_doc_opens_with_its_version_and_a_changelog_entry_for_every_version(doc, version,
                                                                                   entry):
    text = (ROOT / doc).read_text()
    title, _, changelog_heading = text.splitlines()[:3]
    assert title.endswith(f"(version {version})")
    assert changelog_heading == "## Changelog"  # the changelog comes first
    for v in range(1, version + 1):
        assert entry.format(v) in text


def test_every_hello_row_and_example_of_the_protocol_doc_says_the_version_servers_answer():
    """A client author read `[3]` in the hello tables while servers answered 6."""
    text = (ROOT / "docs/protocol.md").read_text()
    rows = [line for line in text.splitlines()
            if re.match(r"\| 0 \| (– \| )?hello \| params", line)]
    # the name server's and the robots' tables; /sim, /playback and /squads answer as every
    # server does (their tables are generated: docs/reference/protocol.md)
    assert len(rows) == 2
    for row in rows:
        assert f"params `[{p.PROTOCOL_VERSION}]`" in row, row
        assert re.findall(r"params `\[(\d+)\]`", row) == [str(p.PROTOCOL_VERSION)], row
    hello = text.split("### Hello and versions")[1].split("###")[0]
    assert f"`params = [PROTOCOL_VERSION]` ({p.PROTOCOL_VERSION};" in hello
    assert f"speaks coopsim protocol {p.PROTOCOL_VERSION}," in hello
    assert f'[0, "", 0, [{p.PROTOCOL_VERSION}], []]' in text.split("### Version")[0]


def test_the_protocol_changelog_names_the_changes_clients_of_version_1_tripped_on():
    # "### Version 1 " (with its space): not the heading of version 10
    changelog = (ROOT / "docs/protocol.md").read_text().split("### Version 1 ")[0]
    for change in ("`bars`", "`parts`", "8 to 12", "echoes the request's `command`",
                   "48 from one address", "docs/recording-format.md", "**11 `owned`**",
                   "**4 `claim`**", "**5 `release`**", "0.05..60 s"):
        assert change in changelog, change


def test_a_new_recording_says_format_7_and_format_1_and_2_recordings_still_play(tmp_path):
    record(tmp_path / "new.mcap", 5)
    with open(tmp_path / "new.mcap", "rb") as f:
        meta = {m.name: m.metadata for m in make_reader(f).iter_metadata()}
    assert meta["coopsim"]["format"] == "7"
    with Recording(tmp_path / "new.mcap") as new:
        assert new.frame(4).step > 0
    for old in sorted((ROOT / "recordings").glob("*.mcap")):
        with open(old, "rb") as f:
            assert {m.name: m.metadata for m in make_reader(f).iter_metadata()}[
                "coopsim"]["format"] == "1"
        with Recording(old) as rec:
            info = rec.info()
            last = rec.frame(info.frames - 1)
            assert info.frames > 100 and last.robots.shape[0] > 0
            assert "parts" in rec.layout(0) and "bars" not in rec.layout(0)


@pytest.mark.slow
def test_coopsim_info_reads_a_format_1_recording():
    result = run_cli("info", str(ROOT / "recordings/sample.mcap"))
    assert result.returncode == 0, result.stderr
    assert "demo" in result.stdout


def _old_nameserver(ctx: zmq.Context, stop: threading.Event) -> tuple[str, threading.Thread]:
    """A REP socket answering hellos as a protocol-1 name server did."""
    sock = ctx.socket(zmq.REP)
    port = sock.bind_to_random_port("tcp://127.0.0.1")

    def serve() -> None:
        while not stop.is_set():
            if sock.poll(50):
                msg = Message.from_wire(sock.recv())
                sock.send(msg.fail(7, f"this server speaks protocol 1, the client "
                                      f"{msg.params[0]}").to_wire())
        sock.close(0)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return f"tcp://127.0.0.1:{port}", thread


@pytest.mark.slow
def test_the_gateway_refuses_a_name_server_of_another_version():
    ctx, stop = zmq.Context(), threading.Event()
    endpoint, thread = _old_nameserver(ctx, stop)
    try:
        result = run_cli("gateway", endpoint, "--json-port", "0")
    finally:
        stop.set()
        thread.join()
        ctx.term()
    assert result.returncode == 2
    assert re.search(r"error 7: .*speaks protocol 1, the client 14", result.stderr)


def test_every_client_sends_and_its_readme_says_the_version_servers_answer():
    """The C and JavaScript READMEs said 3 and Octave's 2 while the clients sent 6."""
    v = p.PROTOCOL_VERSION
    sources = {"clients/c/coopsim.h": rf"#define COOPSIM_PROTOCOL_VERSION {v}\b",
               "clients/js/coopsim.js": rf"export const PROTOCOL_VERSION = {v};",
               "clients/octave/coopsim_version.m": rf"\n  v = {v};"}
    for path, pattern in sources.items():
        assert re.search(pattern, (ROOT / path).read_text()), path
    for readme in sorted((ROOT / "clients").glob("*/README.md")):
        said = re.findall(r"(?:VERSION`|coopsim_version\(\)`|protocol) \(?(\d+)\)? first",
                          readme.read_text())
        assert said and set(said) == {str(v)}, (readme, said)
