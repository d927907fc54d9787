"""Each server's commands, from the registry, and the hand-written tables of docs/protocol.md.

:func:`servers` gathers every server's commands (ids, names, modules, arities) from the tables
in :mod:`coopsim.net.protocol` and the built-in modules' declarations: the generated reference
(docs/reference/protocol.md, ``python -m coopsim.app.reference``) is written from it.
:func:`prose_rows` reads the hand-written tables of docs/protocol.md (id, module, name), so a
test holds them to the same registry.
"""

from __future__ import annotations

from pathlib import Path

from ..model.plugins import MODULES
from ..model.registry import BUILTIN
from ..net import protocol as p

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


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
