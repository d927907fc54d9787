"""docs/protocol.md's command tables, from the registry: generate them, and read the doc's.

Every server's commands (ids, names, modules, arities) are written into the doc between
``<!-- commands:NAME -->`` and ``<!-- /commands -->`` markers, generated from the tables in
:mod:`coopsim.net.protocol` and the built-in modules' declarations, so the doc cannot drift from
the code: ``python -m coopsim.conformance.doctables`` rewrites them, and a test fails when they
differ. :func:`prose_rows` reads the hand-written tables (id, module, name) for the same check.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ..model.plugins import MODULES
from ..model.registry import BUILTIN
from ..net import protocol as p

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
HEADER = ("| id | module | name | params | data | text | kind |\n"
          "|---|---|---|---|---|---|---|")
_BLOCK = re.compile(r"(<!-- commands:(\w+) -->\n)(.*?)(<!-- /commands -->)", re.DOTALL)


def builtin_modules() -> list:
    """The Module classes of coopsim's own distribution, in registry (label) order."""
    return [m for label, m in MODULES.items() if MODULES.origin(label).package == BUILTIN]


def servers() -> dict[str, list]:
    """Each server's commands by id: name server, robot (every built-in module), sim, playback."""
    robot = dict(p.ROBOT_COMMANDS)
    for module in builtin_modules():
        robot.update((c.id, c) for c in module.commands)
    return {"nameserver": _sorted(p.NAME_COMMANDS), "robot": _sorted(robot),
            "sim": _sorted(p.SIM_COMMANDS), "playback": _sorted(p.PLAYBACK_COMMANDS)}


def _sorted(table: dict) -> list:
    return [table[k] for k in sorted(table)]


def _span(lo_hi: tuple[int, int]) -> str:
    lo, hi = lo_hi
    return str(lo) if lo == hi else f"{lo}-{hi}"


def table(commands: list) -> str:
    """The generated table of ``commands``: one row per command, arities as ``min-max``."""
    rows = [f"| {c.id} | {c.module or '–'} | {c.name} | {_span(c.params)} | {_span(c.data)} | "
            f"{c.text or '–'} | {c.kind or '–'} |" for c in commands]
    return "\n".join([HEADER, *rows]) + "\n"


def render(text: str) -> str:
    """``text`` (the doc) with every marked block regenerated."""
    tables = servers()
    return _BLOCK.sub(lambda m: m[1] + table(tables[m[2]]) + m[4], text)


def blocks(text: str) -> dict[str, str]:
    """The doc's marked blocks by server name, as written."""
    return {m[2]: m[3] for m in _BLOCK.finditer(text)}


def prose_rows(text: str, heading: str) -> list[tuple[int, str, str]]:
    """(id, module, name) of the first hand-written command table after ``heading``: tables
    whose header starts ``| id | module | name`` or ``| id | name``."""
    section = text[text.index(heading):]
    rows, started = [], False
    for line in section.splitlines():
        if line.startswith("| id |"):
            started, with_module = True, line.startswith("| id | module |")
            continue
        if started and line.startswith("|---"):
            continue
        if started and not line.startswith("| "):
            break
        if started:
            cells = [c.strip() for c in line.strip("|").split("|")]
            module = cells[1] if with_module else "–"
            name = cells[2] if with_module else cells[1]
            rows.append((int(cells[0]), "" if module == "–" else module, name))
    return rows


def main() -> int:
    """Rewrite the doc's generated tables; exit 0."""
    DOC.write_text(render(DOC.read_text()))
    print(f"{DOC}: command tables regenerated", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
