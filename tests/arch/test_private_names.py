"""Sub-packages meet through public names: no module of coopsim imports a private
name (one leading underscore) from another sub-package, nor reads one off a module of another
sub-package it imported (``from ..raycast import auto`` then ``auto._policy()``). What one
sub-package needs of another is made public and documented there (the copies backend's kernel
calls ``kinematic.small.step_rows`` and ``jitfan.fan_rows``; the engine answers
``copy_template()``). Engines themselves are guarded by tests/arch/test_engine_seam.py. An ast
scan of every module of the package; dunders (``__version__``) are public."""

from __future__ import annotations

import ast
from pathlib import Path

from archhelpers import parse
from archhelpers import source as read

PACKAGE = Path(__file__).resolve().parents[2] / "coopsim"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _absolute(parts: list[str], node: ast.ImportFrom) -> str:
    """The module ``from ... import`` names, absolute (``parts``: the importer's package)."""
    if not node.level:
        return node.module or ""
    base = parts[:len(parts) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _is_module(dotted: str) -> bool:
    """Whether ``coopsim.a.b`` is a module or package of the package (not a name in one)."""
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _top(dotted: str) -> str:
    """The sub-package of ``coopsim.X...`` ("" for coopsim itself)."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else ""


def violations(source: str, module: str) -> list[str]:
    """``line: what`` for every private name of another sub-package that module ``module``
    (dotted, e.g. ``coopsim.env.copies``; a package is ``coopsim.env.__init__``) imports or
    reads off an imported module."""
    parts = module.split(".")[:-1]  # the importer's package
    mine = _top(module) if len(parts) > 1 else ""
    tree = parse(source)
    out, modules = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            src = _absolute(parts, node)
            if src.split(".")[0] != "coopsim":
                continue
            for alias in node.names:
                full = f"{src}.{alias.name}"
                theirs = _top(full) if src == "coopsim" else _top(src)
                if theirs == mine:
                    continue
                if _private(alias.name):
                    out.append(f"{node.lineno}: from {src} import {alias.name}")
                elif _is_module(full):
                    modules[alias.asname or alias.name] = full
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("coopsim.") and _top(alias.name) != mine:
                    if any(_private(p) for p in alias.name.split(".")):
                        out.append(f"{node.lineno}: import {alias.name}")
                    if alias.asname:
                        modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) \
                and isinstance(node.value, ast.Name) and node.value.id in modules:
            out.append(f"{node.lineno}: {modules[node.value.id]}.{node.attr}")
    return sorted(set(out), key=lambda v: (int(v.split(":")[0]), v))


def _dotted(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


def test_the_scan_catches_what_the_copies_backend_did():
    """The imports and reads coopsim/env once had (the test fails on them)."""
    old = ("from ..physics.kinematic.kernels import (DIFFERENTIAL, NONE, _finish_robot,\n"
           "                                         _pair)\n"
           "from ..raycast.jitfan import _circles\n"
           "from ..raycast import jitgrid\n"
           "import coopsim.raycast.jitcast as jc\n"
           "def f():\n"
           "    from coopsim.raycast.jitcast import CELL_SIZE, _grid\n"
           "    return jitgrid._policy(), jc._shapes, jitgrid.build()\n")
    found = violations(old, "coopsim.env.copies")
    assert [v.split(": ", 1)[1] for v in found] == [
        "from coopsim.physics.kinematic.kernels import _finish_robot",
        "from coopsim.physics.kinematic.kernels import _pair",
        "from coopsim.raycast.jitfan import _circles",
        "from coopsim.raycast.jitcast import _grid",
        "coopsim.raycast.jitcast._shapes",
        "coopsim.raycast.jitgrid._policy"]


def test_the_scan_lets_a_sub_package_use_its_own_private_names():
    own = ("from .kinematic_kernels import _first_robot, _jit\n"
           "from ..physics import kinematic_numpy\n"
           "from .. import __version__\n"
           "x = kinematic_numpy._cells(1, 2)\n")
    assert violations(own, "coopsim.physics.kinematic.small") == []
    assert violations("from coopsim import __version__\n", "coopsim.app.cli") == []
    # a package's __init__ is in its own sub-package
    assert violations("from .jitcast import _grid\n", "coopsim.raycast.__init__") == []


def test_no_module_takes_a_private_name_of_another_sub_package():
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 100, "nothing scanned"
    found = [f"{p.relative_to(PACKAGE.parent)}:{v}" for p in modules
             for v in violations(read(p), _dotted(p))]
    assert found == [], ("private names used across sub-packages (make the name public and "
                         "document it where it lives):\n" + "\n".join(found))
