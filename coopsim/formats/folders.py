"""The data folders of a run: the only places a request from the network may read or write.

``/sim load`` reads ``.scenario`` and ``.world`` files, and ``/sim record`` creates ``.mcap``
files, only inside these folders: the scenario's folder, the bundled ``scenarios/``, ``worlds/``
and ``recordings/``, the run's recordings folder and every ``coopsim run --data-dir``. Paths are
resolved (symbolic links and ``..`` included) before they are checked, so no link leads out.
Files named on the command line are the user's own and are not confined.

A file a request loads names no Python code either (a ``[MONITORS]`` ``python`` metric imports
a module and calls it) unless the run was started with ``coopsim run --allow-python``: anyone
who reaches ``/sim`` could otherwise run any installed callable in the simulator's process.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from ..model.bundled import BUNDLED
from ..model.errors import NotAllowedError, SimulationError
from .sections import PathLike


LOADABLE = (".scenario", ".world")
RECORDING_SUFFIX = ".mcap"


class DataFolders:
    """A run's data folders.

    Args:
        folders: Folders requests may read from and record into (need not exist).
        records: The run's recordings folder: relative recording paths and the default name go
            there; it is a data folder too, and the only one created on request.
        allow_python: Whether a loaded file may name Python code (``--allow-python``).
    """

    def __init__(self, folders: Iterable[PathLike], records: PathLike = "recordings",
                 allow_python: bool = False) -> None:
        self.allow_python = allow_python
        self.records = os.path.realpath(records)
        real = [os.path.realpath(f) for f in folders] + [self.records]
        self.folders = tuple(dict.fromkeys(real))

    @classmethod
    def for_run(cls, scenario_path: str, extra: Iterable[PathLike] = (),
                records: PathLike = "recordings", allow_python: bool = False) -> "DataFolders":
        """The folders of a run of ``scenario_path`` ("" for a scenario built in code)."""
        own = [os.path.dirname(os.path.abspath(scenario_path))] if scenario_path else []
        bundled = [BUNDLED / name for name in ("scenarios", "worlds", "recordings")]
        return cls([*own, *bundled, *extra], records, allow_python)

    def check_code(self, path: PathLike, line: int, target: str) -> None:
        """Refuse a loaded file's line naming Python code ``target`` unless the run allows it.

        Raises:
            NotAllowedError: ``path:line:`` and why (the run lacks ``--allow-python``).
        """
        if not self.allow_python:
            raise NotAllowedError(f"{os.fspath(path)}:{line}: python {target} names Python "
                                  "code, which a file loaded over the network may not run; "
                                  "start the run with 'coopsim run --allow-python' to allow it")

    def describe(self) -> str:
        """The folders, for messages."""
        return ", ".join(self.folders)

    def inside(self, real: str) -> bool:
        """True when the resolved path ``real`` is one of the folders or below one."""
        return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in self.folders)

    def _outside(self, verb: str, path: str) -> NotAllowedError:
        return NotAllowedError(f"cannot {verb} {path!r}: it is outside the simulation's data "
                               f"folders ({self.describe()}); 'coopsim run --data-dir DIR' "
                               "adds one")

    @staticmethod
    def _no_nul(verb: str, text: str) -> None:
        """Refuse a path holding a NUL byte (the OS cannot name such a file)."""
        if "\0" in text:
            raise NotAllowedError(f"cannot {verb} {text!r}: a path may not hold a NUL byte")

    def readable(self, path: PathLike, suffixes=LOADABLE) -> str:
        """The resolved path of a file a request may read.

        A relative path is looked for from the current folder, then in each data folder; the
        first that exists inside the folders wins.

        Raises:
            NotAllowedError: a NUL byte, another suffix, or no candidate inside the folders.
        """
        text = os.fspath(path)
        self._no_nul("load", text)
        if not text.endswith(tuple(suffixes)):
            raise NotAllowedError(f"cannot load {text!r}: only {' and '.join(suffixes)} files "
                                  "are loaded on request")
        bases = [""] if os.path.isabs(text) else [os.getcwd(), *self.folders]
        inside = [r for r in (os.path.realpath(os.path.join(b, text)) for b in bases)
                  if self.inside(r)]
        if not inside:
            raise self._outside("load", text)
        return next((r for r in inside if os.path.lexists(r)), inside[0])

    def new_recording(self, path: PathLike) -> Path:
        """The resolved path of a new recording a request may create.

        A relative path is taken in the recordings folder. The file's folder must exist (only
        the recordings folder itself is created) and the file must not.

        Raises:
            NotAllowedError: a NUL byte, or outside the folders.
            SimulationError: not ``.mcap``, the folder is missing, or the file exists.
        """
        text = os.fspath(path)
        self._no_nul("record to", text)
        if not text.endswith(RECORDING_SUFFIX) or text.endswith("/" + RECORDING_SUFFIX):
            raise SimulationError(f"cannot record to {text!r}: give a new file ending in "
                                  f"{RECORDING_SUFFIX}")
        full = text if os.path.isabs(text) else os.path.join(self.records, text)
        folder = os.path.realpath(os.path.dirname(full))
        if not self.inside(folder):
            raise self._outside("record to", text)
        if folder == self.records:
            os.makedirs(folder, exist_ok=True)
        if not os.path.isdir(folder):
            raise SimulationError(f"cannot record to {text!r}: its folder does not exist "
                                  "(folders are not created on request)")
        target = os.path.join(folder, os.path.basename(full))
        if os.path.lexists(target):
            raise SimulationError(f"cannot record to {text!r}: the file exists; give a new file "
                                  f"ending in {RECORDING_SUFFIX}")
        return Path(target)
