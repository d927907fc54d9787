"""The docs' version numbers and column lists agree with the code ("docs that disagree
with the wire"): outsiders write clients from docs/ alone, and each number here was once found
wrong by one. Every figure is read from the code, never written here, so a version bump or a new
column fails this test until the docs say it too.

* docs/protocol.md: the title's version, every hello example and table row of the current
  version, the served versions, the nc transcript's hello, all = ``PROTOCOL_VERSION`` and
  ``SERVED_VERSIONS``;
* docs/recording-format.md: the title's version, section 2's ``format`` row and section 6's
  check = ``FORMAT_VERSION``; section 5's table the pose and velocity columns with their
  units and orders, and the generated reference every module's recorded column;
* the stream columns a world of each kind streams (sonar robots, a Crazyflie, an arm, a robot
  from a description) are the ones protocol.md's section 5 and the state document's declared
  ``columns`` key (docs/reference/state.md) name for it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coopsim.model.plugins import ROBOT_TYPES, carried_modules, module_columns, stream_columns
from coopsim.net import protocol as p
from coopsim.model.statedoc import field
from coopsim.recording.format import FORMAT_VERSION
from coopsim.sim.describe import LAYOUT_KEYS

DOCS = Path(__file__).resolve().parents[2] / "docs"
PROTOCOL = (DOCS / "protocol.md").read_text()
RECORDING = (DOCS / "recording-format.md").read_text()
POSE = ("x", "y", "yaw", "vx", "vy", "omega")  # every recording's robot columns, module ""


def _current_section(text: str) -> str:
    """protocol.md from section 1 on (the changelog's older versions name older numbers)."""
    return text[text.index("\n## 1. "):]


def test_protocol_md_names_the_version_the_servers_speak():
    v = p.PROTOCOL_VERSION
    assert PROTOCOL.splitlines()[0] == f"# coopsim wire protocol (version {v})"
    assert f'(`[0, "", 0, [{v}], []]`)' in PROTOCOL  # the changelog's hello example
    body = _current_section(PROTOCOL)
    rows = re.findall(r"\| 0 \|(?: – \|)? hello \|.*?params `\[(\d+)\]`", body)
    assert len(rows) >= 2 and set(rows) == {str(v)}, rows  # each hand table's hello row
    said = re.search(r"answers `params = \[PROTOCOL_VERSION\]` \((\d+);", body)
    assert said and int(said.group(1)) == v
    assert f'["/nameserver", 0, "", 0, [{v}], []]\n[0, "/nameserver", 0, [{v}], []]' in body
    assert f"this server speaks coopsim protocol {v}, the client protocol 7" in body


def _numbers(phrase: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", phrase)]


def test_protocol_md_names_the_versions_the_servers_serve():
    body = _current_section(PROTOCOL)
    served = list(p.SERVED_VERSIONS)
    serves = re.search(r"a server serves versions ([\d, and]+) alone", body)
    assert serves and _numbers(serves.group(1)) == served
    refused = re.search(r"\(any but ([\d, and]+)\) gets error 7", body)
    assert refused and _numbers(refused.group(1)) == served
    older = re.search(r"a (version-[\d, or-]+) client's hello is answered", body)
    assert older and _numbers(older.group(1)) == served[:-1]


def test_recording_format_md_names_the_format_the_recorder_writes():
    v = FORMAT_VERSION
    assert RECORDING.splitlines()[0] == f"# coopsim recording format (version {v})"
    row = re.search(r"\| `format` \| format version, `(\d+)` \(older files `1` to `(\d+)`",
                    RECORDING)
    assert row and (int(row.group(1)), int(row.group(2))) == (v, v - 1)
    check = re.search(r"check `format` ≤ (\d+)", RECORDING)
    assert check and int(check.group(1)) == v
    reads = re.search(r"coopsim reads format ([\d, and]+) files alike", RECORDING)
    assert reads and _numbers(reads.group(1)) == list(range(1, v + 1))


def _expand(cell: str) -> list[str]:
    """The column names of a table cell: `a`, `b` and ranges `name1` ... `name32`."""
    names = re.findall(r"`([A-Za-z_]+\d*)`", cell)
    if "..." in cell and len(names) == 2:  # a range: its first and last name
        (stem, lo), (_, hi) = (re.fullmatch(r"(\D+)(\d+)", n).groups() for n in names)
        return [f"{stem}{k}" for k in range(int(lo), int(hi) + 1)]
    return names


def _recording_table() -> dict[str, tuple[float, int, str]]:
    """Section 5's table: column name -> (unit, order, module label)."""
    section = RECORDING[RECORDING.index("## 5. Columns"):RECORDING.index("## 6. ")]
    table = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[0].startswith("`"):
            continue
        unit = float(cells[1].split()[0])
        for name in _expand(cells[0]):
            table[name] = (unit, int(cells[2]), cells[3].strip('"`'))
    return table


def test_recording_format_md_lists_the_pose_columns_and_links_the_modules():
    """Section 5's table is the pose and velocity every recording starts with; the modules'
    columns are generated (docs/reference/modules.md, *Recorded columns*, from each module's
    declaration), every one of them there with its unit and order."""
    from coopsim.recording import format as rf

    table = _recording_table()
    assert set(table) == set(POSE) == {c.name for c in rf.CORE_COLUMNS}
    for c in rf.CORE_COLUMNS:
        assert table[c.name] == (pytest.approx(c.unit), c.order, ""), c.name
    section = RECORDING[RECORDING.index("## 5. Columns"):RECORDING.index("## 6. ")]
    assert "(reference/modules.md#recorded-columns)" in section
    generated = (DOCS / "reference" / "modules.md").read_text()
    generated = generated[generated.index("## Recorded columns"):]
    for label, c in module_columns():
        assert f"| `{c.name}` | " in generated and f"[{label}](#{label})" in generated, c.name


def _streamed(*module_sets) -> list[str]:
    """The stream columns of a world whose robots carry these module labels."""
    return [c.name for _, c in stream_columns(carried_modules(module_sets))]


def _section5_list() -> str:
    body = PROTOCOL[PROTOCOL.index("## 5. State stream"):PROTOCOL.index("## 6. ")]
    start = body.index("The per-robot values are the modules' *streamed columns*")
    return body[start:body.index("Read them by name", start)]


def test_protocol_md_names_every_streamed_column():
    named = set()
    for match in re.finditer(r"`([a-z_]+\d*)`\s+\.\.\.\s+`([a-z_]+\d*)`", _section5_list()):
        named.update(_expand(match.group(0)))
    streamed = {c.name for _, c in module_columns(stream_only=True)}
    assert streamed == named


@pytest.mark.parametrize("robot_type, says", [
    ("single", "A world of `single` robots streams the 11 sonar columns"),
    ("crazyflie", "a Crazyflie world the 4 rotor speeds"),
    ("irb120", "an IRB 120 the 7 angles"),
])
def test_the_columns_section_5_gives_each_world_are_the_ones_it_streams(robot_type, says):
    assert says in " ".join(_section5_list().split())
    count = int(re.search(r"the (\d+) ", says).group(1))
    assert len(_streamed(ROBOT_TYPES.get(robot_type).modules)) == count


def test_the_state_documents_columns_key_gives_a_crazyflie_its_rotor_speeds():
    row = field(LAYOUT_KEYS, "columns").meaning  # what docs/reference/state.md says
    assert "a Crazyflie world: `rotor_w1` .. `rotor_w4`" in row
    assert _streamed(ROBOT_TYPES.get("crazyflie").modules) == [f"rotor_w{k}" for k in range(1, 5)]
    assert _streamed(ROBOT_TYPES.get("single").modules) == [f"sonar{k}" for k in range(11)]
