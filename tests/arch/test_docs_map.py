"""The map cannot drift: every file, module and ``Class.member`` the docs name exists.

docs/*.md and README.md name source files (``coopsim/sim/stepper.py``, or ``net/robothub.py``
relative to the package), dotted names (``coopsim.raycast.AutoCaster``) and members in
backticks (```Stepper.call```, ```CommandSlots.put(...)```). Each is looked up in the source
itself (the AST, nothing imported): a file must exist, a dotted name must resolve to a module
and the names defined in it, a member must be defined on a class of that name in coopsim (its
body, an attribute set in a method, or a base class's). And the other way round: every file of
a layer is named in that layer's row of docs/architecture.md's table.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "coopsim"
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
#: Every sub-package of coopsim: each is a layer (tests/arch/test_layers.py), with its row.
LAYERS = tuple(sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()))

_PATH = re.compile(r"(?<![\w/.-])((?:coopsim/)?(?:%s)/[\w/]*?\w+\.py)\b" % "|".join(LAYERS))
_ROOT_PATH = re.compile(r"(?<![\w/.-])((?:coopsim|tests|benchmarks)/[\w/]*?\w+\.py)\b")
_DOTTED = re.compile(r"(?<![\w.])(coopsim\.(?:%s)(?:\.\w+)*)" % "|".join(LAYERS))
_MEMBER = re.compile(r"`([A-Z][a-z]\w*)\.([a-z_]\w*)")  # MODULES.x, OUT.mcap: not classes
#: Classes the docs name that are not coopsim's (their members are the libraries' business).
FOREIGN = {"Future", "Path", "np", "Column", "RemoteError", "zmq"}


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _cases(pattern: re.Pattern) -> list[tuple[str, str]]:
    found = {(path.name, m.group(1) if pattern.groups == 1 else m.group(1) + "." + m.group(2))
             for path in DOCS for m in pattern.finditer(_text(path))}
    return sorted(found)


@lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


@lru_cache(maxsize=None)
def _classes() -> dict[str, list[ast.ClassDef]]:
    """Every class in coopsim by name."""
    out: dict[str, list[ast.ClassDef]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, []).append(node)
    return out


def _members(cls: ast.ClassDef, seen: frozenset = frozenset()) -> set[str]:
    """Names a class defines: methods, class attributes and fields, ``self.x`` set in its
    methods, and its coopsim bases' (by name)."""
    names = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
    for base in cls.bases:
        name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
        if name and name not in seen:
            for other in _classes().get(name, []):
                names |= _members(other, seen | {cls.name})
    return names


def _top_names(tree: ast.Module) -> dict[str, ast.AST]:
    """Names a module defines or imports at its top level (``if``/``try`` bodies included)."""
    out: dict[str, ast.AST] = {}
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out[n.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                out[(a.asname or a.name).split(".")[0]] = node
        elif isinstance(node, (ast.If, ast.Try)):
            stack += node.body + getattr(node, "orelse", []) + [
                n for h in getattr(node, "handlers", []) for n in h.body]
    return out


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _resolve(dotted: str) -> str | None:
    """None when ``dotted`` names a module and names defined in it, else what is missing."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = _module_file(parts[:cut])
        if path is not None:
            break
    else:
        return f"no module {parts[0]}"
    rest = parts[cut:]
    if not rest:
        return None
    names = _top_names(_tree(path))
    if rest[0] not in names:
        return f"{'.'.join(parts[:cut])} defines no {rest[0]}"
    node = names[rest[0]]
    if len(rest) > 1 and isinstance(node, ast.ClassDef) and rest[1] not in _members(node):
        return f"class {rest[0]} has no {rest[1]}"
    return None


@pytest.mark.parametrize("doc, path", _cases(_PATH) + _cases(_ROOT_PATH))
def test_every_file_the_docs_name_exists(doc, path):
    if Path(path).name.startswith("test_") and not path.startswith("tests/"):  # from tests/
        where = ROOT / "tests" / path
    else:
        where = ROOT / path if path.split("/")[0] in ("coopsim", "tests", "benchmarks") \
            else PACKAGE / path
    assert where.is_file(), f"{doc} names {path}, which does not exist"


@pytest.mark.parametrize("doc, dotted", _cases(_DOTTED))
def test_every_dotted_name_the_docs_give_resolves(doc, dotted):
    problem = _resolve(dotted.rstrip("."))
    assert problem is None, f"{doc} names {dotted}: {problem}"


@pytest.mark.parametrize("doc, member", _cases(_MEMBER))
def test_every_class_member_the_docs_name_exists(doc, member):
    cls, name = member.split(".")
    if cls in FOREIGN:
        return
    classes = _classes().get(cls)
    assert classes, f"{doc} names {member}: there is no class {cls} in coopsim"
    assert any(name in _members(c) for c in classes), f"{doc} names {member}: {cls} has no {name}"


def test_the_map_sees_what_it_checks():
    """The patterns find the names they are for (or the tests above would pass on nothing)."""
    arch = _text(ROOT / "docs" / "architecture.md")
    assert len(_PATH.findall(arch)) >= 20 and len(_MEMBER.findall(arch)) >= 10
    assert {"model", "sim", "env", "ros2", "conformance", "app"} <= set(LAYERS)
    assert _resolve("coopsim.sim.stepper.Stepper.tick") is None
    assert _resolve("coopsim.sim.stepper.Stepper.call") is None  # inherited: WorldOwner
    assert _resolve("coopsim.sim.stepper.Stepper.no_such") is not None
    assert _resolve("coopsim.raycast.no_such") is not None


def _layer_rows() -> dict[str, str]:
    """Layer -> its row of the table in docs/architecture.md."""
    rows = {}
    for line in _text(ROOT / "docs" / "architecture.md").splitlines():
        m = re.match(r"\| `(\w+)/` \|", line)
        if m:
            rows[m.group(1)] = line
    return rows


@pytest.mark.parametrize("layer", LAYERS)
def test_the_map_names_every_file_of_every_layer(layer):
    """The other way round: a file added to a layer is named in that layer's row of the map
    (so a newcomer finds it from docs/architecture.md alone)."""
    row = _layer_rows().get(layer)
    assert row is not None, f"docs/architecture.md has no table row for {layer}/"
    missing = sorted(str(p.relative_to(PACKAGE / layer)) for p in (PACKAGE / layer).rglob("*.py")
                     if p.name != "__init__.py" and f"`{p.name}`" not in row)
    assert not missing, f"docs/architecture.md's row for {layer}/ does not name {missing}"
