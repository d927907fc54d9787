"""The package's layers (docs/architecture.md): each sub-package imports only from the layers
below it, physics code never imports zmq or pyglet, and only the viewer imports pyglet."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "coopsim"

#: layer -> the layers it may import from (itself included). The map docs/architecture.md draws.
ALLOWED = {
    "model": {"model"},
    "formats": {"model", "formats"},
    "physics": {"model", "physics"},
    "raycast": {"model", "raycast"},
    "sim": {"model", "raycast", "sim"},
    "swarm": {"model", "swarm"},
    "plugins": {"model", "swarm", "plugins"},
    "net": {"model", "formats", "sim", "swarm", "net"},
    "recording": {"model", "recording"},
    "replay": {"model", "sim", "net", "recording", "replay"},
    "foxglove": {"model", "sim", "recording", "replay", "foxglove"},
    "ros2": {"model", "formats", "sim", "recording", "replay", "ros2"},
    "client": {"model", "net", "client"},
    "viewer": {"model", "net", "viewer"},
    "conformance": {"model", "net", "client", "conformance"},
    # learning environments: in-process runs (sim, formats); "human" rendering serves the run
    # (net) and starts the viewer's process (viewer/__init__, no window code); batched worlds
    # cast their copies' fans with the compiled caster's kernels (raycast, below sim)
    "env": {"model", "formats", "raycast", "sim", "net", "viewer", "env"},
    "app": {"model", "formats", "raycast", "sim", "net", "recording", "replay", "client",
            "viewer", "app", "plugins", "foxglove", "conformance", "env", "ros2"},
}
NO_IO = {"model", "formats", "physics", "raycast", "sim", "swarm", "plugins"}  # no zmq, no windows


def _imports(path: Path) -> list[str]:
    """Every module ``path`` imports (top level or inside functions), as absolute names."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    package = list(rel.parts[:-1]) if rel.name != "__init__" else list(rel.parts[:-1])
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                out.append(".".join(base + ([node.module] if node.module else [])))
            else:
                out.append(node.module or "")
    return out


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if len(parts) > 1:
            yield parts[0], path


@pytest.mark.parametrize("layer, path", list(_modules()), ids=lambda v: str(v))
def test_each_module_imports_only_from_lower_layers(layer, path):
    assert layer in ALLOWED, f"{layer} is not on the layer map (docs/architecture.md)"
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] == "coopsim" and len(parts) > 1 and parts[1] in ALLOWED:
            assert parts[1] in ALLOWED[layer], f"{path.name} ({layer}) imports {name}"
        if layer in NO_IO:
            assert parts[0] not in ("zmq", "pyglet", "imgui_bundle"), f"{path} imports {name}"
        if layer != "viewer":
            assert parts[0] != "pyglet", f"{path} imports pyglet"


def test_coopsim_check_imports_no_physics_library():
    code = ("import sys\nfrom coopsim.app import cli\n"
            "try:\n    cli.main(['check', 'scenarios/demo.scenario', 'worlds/maze.world'])\n"
            "except SystemExit as e:\n    assert e.code in (0, None), e.code\n"
            "bad = [m for m in ('pymunk', 'zmq', 'pyglet') if m in sys.modules]\n"
            "assert not bad, bad\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=PACKAGE.parent, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr


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
        for node in ast.walk(ast.parse(path.read_text())):
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
