"""Every figure the docs quote comes from a named benchmark of the suite.

docs/performance.md's headline table gives, per goal, the benchmark that produces its figure,
as asv names it: ``module.Class.method`` (or ``module.function``), the module relative to
``benchmarks/suite/``. The test reads the suite's modules with ``ast`` (nothing is imported or
run) and fails on a row that names no benchmark or one the suite does not have; and on a name
written the same way anywhere in README.md or docs/ that the suite does not have (a renamed or
deleted benchmark leaves no stale reference behind)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "benchmarks" / "suite"
PAGE = ROOT / "docs" / "performance.md"
HEADLINE = "## Headline figures"
MAX_LINES = 400  # a page of headlines, not an inventory
#: the name prefixes asv collects as benchmarks
KINDS = ("time_", "timeraw_", "track_", "peakmem_", "mem_")
#: a backticked name shaped like a suite benchmark, wherever the docs write one, with or
#: without asv's parameters after it: `step.Step.track_ms('kinematic', 10000)`
NAME = re.compile(r"`((?:[a-z_][a-z0-9_]*\.)+(?:[A-Z]\w*\.)?(?:%s)\w*)(?:\([^`]*\))?`"
                  % "|".join(KINDS))


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _own_methods(node: ast.ClassDef) -> set[str]:
    """A class's own methods, and the names it binds to one (``track_ratio = Base.ratio``:
    asv collects a benchmark by the attribute's name)."""
    names = set()
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(item.name)
        elif isinstance(item, ast.Assign):
            names |= {target.id for target in item.targets if isinstance(target, ast.Name)}
    return names


def _base_names(node: ast.ClassDef) -> list[str]:
    """The simple names of a class's bases (``common.Timed`` -> ``Timed``)."""
    names = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return names


def suite_benchmarks(root: Path = SUITE) -> set[str]:
    """Every benchmark name asv would collect from benchmarks/suite/, read statically.

    A class's benchmarks include those it inherits from classes defined in the suite (looked
    up by their simple name, as the suite's shared base classes in common.py are)."""
    modules = {}
    classes: dict[str, ast.ClassDef] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        modules[_module_name(path, root)] = tree
        classes.update({node.name: node for node in tree.body if isinstance(node, ast.ClassDef)})

    def methods(node: ast.ClassDef, seen: frozenset = frozenset()) -> set[str]:
        found = _own_methods(node)
        for base in _base_names(node):
            if base in classes and base not in seen:
                found |= methods(classes[base], seen | {node.name})
        return found

    names = set()
    for module, tree in modules.items():
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name.startswith(KINDS):
                    names.add(f"{module}.{node.name}")
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                names |= {f"{module}.{node.name}.{name}" for name in methods(node)
                          if name.startswith(KINDS)}
    return names


def headline_rows(text: str) -> tuple[list[str], list[list[str]]]:
    """The header and the rows of the first table under the page's headline section."""
    section = text[text.index(HEADLINE):]
    table = []
    for line in section[section.index("\n|") + 1:].splitlines():
        if not line.startswith("|"):
            break
        table.append([cell.strip() for cell in line.strip("|").split("|")])
    return table[0], table[2:]  # the header, then the rows below its |---| line


def test_every_headline_row_names_a_benchmark_of_the_suite():
    text = PAGE.read_text(encoding="utf-8")
    header, rows = headline_rows(text)
    column, measured = header.index("benchmark"), header.index("measured")
    known = suite_benchmarks()
    assert known, "no benchmark found under " + str(SUITE)
    assert len(rows) >= 10
    for row in rows:
        assert len(row) == len(header), row
        assert row[measured], f"the row '{row[0]}' says not when or where it was measured"
        named = NAME.findall(row[column])
        assert named, f"the row '{row[0]}' names no benchmark of the suite"
        for name in named:
            assert name in known, f"the row '{row[0]}' names `{name}`: not in benchmarks/suite/"


def test_every_benchmark_named_in_readme_and_docs_exists():
    known = suite_benchmarks()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        for name in NAME.findall(page.read_text(encoding="utf-8")):
            assert name in known, f"{page.relative_to(ROOT)} names `{name}`: not in the suite"


def test_the_page_is_short():
    assert len(PAGE.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


def test_the_parser_sees_inherited_benchmarks_and_rejects_unknown(tmp_path):
    (tmp_path / "common.py").write_text(
        "class Timed:\n    def track_x_real_time(self):\n        return 1.0\n")
    (tmp_path / "step.py").write_text(
        "from common import Timed\nclass Step(Timed):\n    params = [1]\n"
        "    def time_tick(self, n):\n        pass\n    def setup(self, n):\n        pass\n"
        "class Duel(Timed):\n    track_ratio = Timed.track_x_real_time\n"
        "def peakmem_build():\n    pass\n")
    names = suite_benchmarks(tmp_path)
    assert names == {"common.Timed.track_x_real_time", "step.Step.track_x_real_time",
                     "step.Step.time_tick", "step.peakmem_build", "step.Duel.track_ratio",
                     "step.Duel.track_x_real_time"}
    row = "| goal | 1.0x | | quiet | `step.Step.time_tock(2)`, `step.peakmem_build` |"
    assert NAME.findall(row) == ["step.Step.time_tock", "step.peakmem_build"]
    assert "step.Step.time_tock" not in names
