"""No back doors into an engine: code outside ``coopsim/physics/`` uses an engine
only through the public interface of :class:`coopsim.physics.engine.Engine` (its methods,
``label``/``description``/``features`` and ``floor``); no underscore names, no private arrays
such as the kinematic engine's ``pos`` or ``cmd``. An ast scan: an engine object is
``<...>world.engine``, ``self.engine`` in a class that builds one from the ``ENGINES``
registry, and any name assigned from one of those."""

from __future__ import annotations

import ast
from pathlib import Path

from coopsim.physics.engine import Engine

from archhelpers import parse
from archhelpers import source as read

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [p for d in ("coopsim", "benchmarks", "examples", "studies") for p in (ROOT / d).rglob("*.py")
           if "physics" not in p.relative_to(ROOT).parts[:2]]
PUBLIC = {n for n in dir(Engine) if not n.startswith("_")} | {"floor"}


def _ends_world(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return name.endswith("world")


def _builds_engine(tree: ast.AST) -> bool:
    """The module assigns ``self.engine = ENGINES.get(...)(...)`` (an engine object)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Call):
            if any(isinstance(t, ast.Attribute) and t.attr == "engine" for t in node.targets):
                return True
    return False


def _is_engine(node: ast.AST, names: set, self_engine: bool) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Attribute) and node.attr == "engine":
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            return self_engine
        return _ends_world(node.value)
    return False


def _aliases(node: ast.Assign, names: set, self_engine: bool) -> set:
    """The names ``node`` binds to an engine: ``engine = ...world.engine`` and, element by
    element, ``engine, k = sim.world.engine, copies``."""
    out = set()
    for target in node.targets:
        pairs = [(target, node.value)]
        if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) \
                and len(target.elts) == len(node.value.elts):
            pairs = list(zip(target.elts, node.value.elts))
        out |= {t.id for t, v in pairs
                if isinstance(t, ast.Name) and _is_engine(v, names, self_engine)}
    return out


def violations(source: str, where: str = "<string>") -> list[str]:
    """``where:line: engine.NAME`` for every access of a name outside :data:`PUBLIC`."""
    if "engine" not in source:
        return []  # every engine object is reached through an attribute named engine
    tree = parse(source)
    self_engine = _builds_engine(tree)
    out = []
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef,
                                                            ast.AsyncFunctionDef))] + [tree]
    for scope in scopes:
        names: set = set()
        for node in ast.walk(scope):  # aliases: engine = self.sim.world.engine
            if isinstance(node, ast.Assign):
                names |= _aliases(node, names, self_engine)
        for node in ast.walk(scope):
            if isinstance(node, ast.Attribute) and node.attr not in PUBLIC \
                    and _is_engine(node.value, names, self_engine):
                out.append(f"{where}:{node.lineno}: engine.{node.attr}")
    return sorted(set(out))


def test_scan_catches_the_old_batch_reset():
    """The reset batch.py had before Engine.reset_rows, and the other spellings."""
    old = ("def reset_copies(self, rows):\n"
           "    engine = self.sim.world.engine\n"
           "    engine._sync()\n"
           "    engine.pos[rows] = 0.0\n"
           "    self.sim.world.engine.cmd[rows] = 0.0\n"
           "    world.engine.state[rows] = 0.0\n")
    found = violations(old)
    assert [v.split(": ")[1] for v in found] == ["engine._sync", "engine.pos", "engine.cmd",
                                                 "engine.state"]


def test_scan_catches_an_engine_unpacked_from_a_tuple():
    """How coopsim/env/copies.py once read the kinematic engine's internals."""
    old = ("def _load(self, sim):\n"
           "    engine, k = sim.world.engine, self.copies\n"
           "    engine._sync()\n"
           "    static, half = engine._static_grid(), engine._half\n"
           "    n, limits = k, engine._limits\n")
    found = violations(old)
    assert sorted(v.split(": ")[1] for v in found) == ["engine._half", "engine._limits",
                                                       "engine._static_grid", "engine._sync"]


def test_scan_lets_the_interface_through():
    ok = ("def f(self, rows, state):\n"
          "    engine = self.sim.world.engine\n"
          "    engine.reset_rows(rows, state)\n"
          "    return world.engine.robot_state(), engine.label, self.engine.upper()\n")
    assert violations(ok) == []  # self.engine here is not built from ENGINES: a label


def test_nothing_outside_physics_reaches_into_an_engine():
    assert SCANNED, "nothing scanned"
    found = [v for p in SCANNED for v in violations(read(p), str(p.relative_to(ROOT)))]
    assert found == [], "engine internals used outside coopsim/physics/ (use the Engine " \
                        "interface, e.g. reset_rows):\n" + "\n".join(found)
