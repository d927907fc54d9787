"""The package's layers (docs/architecture.md): each sub-package imports only from the layers
below it, physics code never imports zmq or pyglet, and only the viewer imports pyglet. The map
is exact both ways: a layer is allowed only the layers it does import, the doc's table says the
same, and its diagram draws every layer above all that it imports. One test checks every import
of every module (a failure lists them all)."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from archhelpers import parse
from archhelpers import source as read

PACKAGE = Path(__file__).resolve().parents[2] / "coopsim"
DOC = PACKAGE.parent / "docs" / "architecture.md"

#: layer -> the layers it may import from (itself included). The map docs/architecture.md draws.
ALLOWED = {
    "model": {"model"},
    # robots from description files (URDF, MJCF) and their meshes, as data
    "description": {"model", "description"},
    "formats": {"model", "description", "formats"},
    "physics": {"model", "description", "physics"},
    "raycast": {"model", "raycast"},
    "sim": {"model", "raycast", "sim"},
    "swarm": {"model", "swarm"},
    "plugins": {"model", "description", "swarm", "plugins"},
    "net": {"model", "formats", "sim", "swarm", "net"},
    "recording": {"model", "recording"},
    "replay": {"model", "sim", "net", "recording", "replay"},
    "foxglove": {"model", "replay", "foxglove"},
    "ros2": {"model", "description", "formats", "sim", "replay", "ros2"},
    # the Crazyflie's CRTP for cflib: slots (sim), the loopback check (net), the cascade (swarm)
    "crtp": {"model", "sim", "net", "swarm", "crtp"},
    "client": {"model", "net", "client"},
    "viewer": {"model", "net", "client", "viewer"},  # client: teleop drives a robot (T)
    "conformance": {"model", "net", "client", "conformance"},
    # learning environments: in-process runs (sim, formats); "human" rendering serves the run
    # (net) and starts the viewer's process (viewer/__init__, no window code); batched worlds
    # cast their copies' fans with the compiled caster's kernels (raycast, below sim); the
    # copies backend's one compiled step inlines the kinematic engine's per-robot bodies
    # (physics) with the caster's
    "env": {"model", "formats", "physics", "raycast", "sim", "net", "viewer", "env"},
    # the command: every front end, never the built-in plugins (they come by entry point)
    "app": {"model", "formats", "raycast", "sim", "net", "recording", "replay", "client",
            "viewer", "app", "foxglove", "conformance", "ros2", "crtp"},
}
#: The modules of net/ the Python client uses: the wire, the connection's liveness, the client's
#: keys and the state stream's decoder; never a server (docs/architecture.md, the client row).
CLIENT_NET = {"protocol", "liveness", "security", "statestream"}
NO_IO = {"model", "description", "formats", "physics", "raycast", "sim", "swarm",
         "plugins"}  # no zmq, no windows


@functools.cache
def _imports(path: Path, source: str | None = None) -> list[str]:
    """Every module ``path`` imports (top level or inside functions), as absolute names
    (``source``: its text, else read from the file)."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    package = list(rel.parts[:-1]) if rel.name != "__init__" else list(rel.parts[:-1])
    out = []
    for node in ast.walk(parse(source if source is not None else read(path))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            # ``from .. import sim``: the names imported from the package are its layers
            out += [f"{name}.{a.name}" for a in node.names] if name == "coopsim" else [name]
    return out


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if len(parts) > 1:
            yield parts[0], path


def violations(layer: str, path: Path, source: str | None = None) -> list[str]:
    """What module ``path`` of ``layer`` imports against the map: a layer above or beside it
    that it may not import, zmq or a window library in a physics-side layer, pyglet outside the
    viewer."""
    out = []
    for name in _imports(path, source):
        parts = name.split(".")
        if parts[0] == "coopsim" and len(parts) > 1 and parts[1] in ALLOWED and \
                parts[1] not in ALLOWED[layer]:
            out.append(f"{path.relative_to(PACKAGE.parent)} ({layer}) imports {name}")
        if layer in NO_IO and parts[0] in ("zmq", "pyglet", "imgui_bundle"):
            out.append(f"{path.relative_to(PACKAGE.parent)} ({layer}) imports {name}")
        elif layer != "viewer" and parts[0] == "pyglet":
            out.append(f"{path.relative_to(PACKAGE.parent)} imports pyglet")
    return out


def test_every_module_imports_only_from_lower_layers():
    modules = list(_modules())
    assert len(modules) > 300 and {layer for layer, _ in modules} == set(ALLOWED)
    found = [v for layer, path in modules for v in violations(layer, path)]
    assert found == [], "imports against the layer map (docs/architecture.md):\n" + \
        "\n".join(found)


def test_the_layer_check_catches_an_upward_import_and_io_in_physics():
    engine = PACKAGE / "physics" / "engine.py"
    assert violations("physics", engine) == []
    found = violations("physics", engine, "import zmq\nimport pyglet\nfrom ..net import protocol\n")
    assert len(found) == 3, found


@pytest.mark.slow
def test_coopsim_check_imports_no_physics_library():
    code = ("import sys\nfrom coopsim.app import cli\n"
            "try:\n    cli.main(['check', 'scenarios/demo.scenario', 'worlds/maze.world'])\n"
            "except SystemExit as e:\n    assert e.code in (0, None), e.code\n"
            "bad = [m for m in ('pymunk', 'zmq', 'pyglet') if m in sys.modules]\n"
            "assert not bad, bad\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=PACKAGE.parent, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_client_imports_no_simulator():
    code = ("import sys\nimport coopsim.client\n"
            "bad = [m for m in ('pymunk', 'pyglet', 'coopsim.sim', 'coopsim.physics') "
            "if m in sys.modules]\nassert not bad, bad\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _file_graph() -> dict[str, set[str]]:
    """module -> the coopsim modules it imports (anywhere in it), package imports resolved to
    the submodules named (``from . import x``) or else to the package's ``__init__``."""
    names = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in names.items():
        out = set()
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        package = list(rel.parts[:-1])
        for node in ast.walk(parse(read(path))):
            if isinstance(node, ast.Import):
                out |= {a.name for a in node.names if a.name in names}
            elif isinstance(node, ast.ImportFrom):
                base = (".".join(package[:len(package) - node.level + 1] +
                                 ([node.module] if node.module else []))
                        if node.level else node.module or "")
                subs = {f"{base}.{a.name}" for a in node.names} & names.keys()
                out |= subs or ({base} & names.keys())
        graph[name] = out - {name}
    return graph


def test_no_import_cycle_between_files():
    """A file's imports never lead back to it (a cycle means two files are one unit, or a
    third file is missing): depth-first search for a back edge."""
    graph, state, cycles = _file_graph(), {}, []

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if nxt.endswith("__init__") or nxt == node.rpartition(".")[0]:
                continue  # a package importing its own face is not a cycle between files
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles between files:\n" + "\n".join(cycles)


def _layers_imported() -> dict[str, set[str]]:
    """Layer -> the layers its files import (itself included)."""
    used = {layer: {layer} for layer in ALLOWED}
    for layer, path in _modules():
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] == "coopsim" and len(parts) > 1 and parts[1] in ALLOWED:
                used.setdefault(layer, {layer}).add(parts[1])
    return used


def test_every_layer_is_on_the_map_and_allowed_only_what_it_imports():
    """ALLOWED is no wish list: a layer allowed one it never imports draws a false map."""
    layers = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert layers == set(ALLOWED)
    unused = {layer: sorted(ALLOWED[layer] - used) for layer, used in _layers_imported().items()
              if ALLOWED[layer] - used}
    assert unused == {}, f"allowed but never imported (take them off ALLOWED and the doc): {unused}"


def _doc_table() -> dict[str, set[str]]:
    """Layer -> its "may import" cell in docs/architecture.md (parenthesized notes left out;
    "everything" is refused: the cell names the layers)."""
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `(\w+)/` \|.*\| ([^|]+) \|$", line)
        if m:
            cell = re.sub(r"\([^)]*\)", "", m.group(2))
            rows[m.group(1)] = {w.strip(" `/") for w in cell.split(",")} | {m.group(1)}
    return rows


def test_the_doc_table_is_the_allowed_table():
    assert _doc_table() == ALLOWED


def test_the_diagram_draws_each_layer_above_what_it_imports():
    """In the drawing of docs/architecture.md a layer imports only layers drawn on lower lines,
    or to its right on its own line (``plugins/ ──► swarm/``)."""
    block = DOC.read_text(encoding="utf-8").split("## The layers", 1)[1].split("```")[1]
    where = {}
    for row, line in enumerate(block.splitlines()):
        for m in re.finditer(r"(?:^|\s\s)(\w+)/", line):  # not "(imports only model/)"
            where.setdefault(m.group(1), (row, m.start()))
    assert set(where) == set(ALLOWED), "the diagram draws every layer, once"
    upward = sorted(f"{layer}/ imports {other}/" for layer, used in _layers_imported().items()
                    for other in used - {layer}
                    if not (where[other][0] > where[layer][0] or
                            (where[other][0] == where[layer][0] and
                             where[other][1] > where[layer][1])))
    assert upward == [], "drawn below what imports it:\n" + "\n".join(upward)


def test_the_client_uses_only_the_client_side_of_net():
    used = {name.split(".")[2] for path in (PACKAGE / "client").rglob("*.py")
            for name in _imports(path) if name.startswith("coopsim.net.")}
    assert used and used <= CLIENT_NET, sorted(used - CLIENT_NET)
    row = next(line for line in DOC.read_text(encoding="utf-8").splitlines()
               if line.startswith("| `client/` |"))
    assert all(f"`{name}.py`" in row for name in CLIENT_NET), "the client row names them"
