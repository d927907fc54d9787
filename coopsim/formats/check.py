"""``coopsim check``'s body: every file loaded, the problems collected, one line each.

Above both readers it dispatches to: :mod:`coopsim.formats.files` (worlds and scenarios) and
:mod:`coopsim.formats.sweep` (sweeps, which build on the scenario loader).
"""

from __future__ import annotations

import os
from typing import Iterable

from ..model.errors import FileFormatError
from .files import load
from .sections import PathLike
from .sweep import load_sweep


def check(paths: Iterable[PathLike]) -> list[str]:
    """Load every file in ``paths`` and collect the problems.

    Args:
        paths: ``.world``, ``.scenario`` and ``.sweep`` files (a single path is accepted too).

    Returns:
        One ``path:line: reason`` string per bad file, in the order given; empty when all load.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    problems = []
    for path in paths:
        try:
            load_sweep(path) if os.fspath(path).endswith(".sweep") else load(path)
        except FileFormatError as exc:
            problems.append(str(exc))
    return problems
