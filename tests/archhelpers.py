"""The source scans of tests/arch share one read and one parse of each file per pytest
process: each scan walks every module of the package (and engine_seam the studies, benchmarks
and examples), and parsing them anew for each test cost most of the arch tests' CPU."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def source(path: Path) -> str:
    """The text of ``path`` (read once a process)."""
    return path.read_text(encoding="utf-8")


@functools.cache
def parse(text: str) -> ast.Module:
    """``ast.parse(text)``, once per distinct text; callers only read the tree."""
    return ast.parse(text)
