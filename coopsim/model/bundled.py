"""Where the bundled content is: the demo, scenarios, worlds, recordings, exercises, sweeps and the
Python controller scripts the scenarios launch (``clients/python/``).

In a clone they are the folders at its top (tests and docs use those paths). A wheel carries a
copy made at build time (setup.py) inside the package, ``coopsim/_bundled/``, with the same
relative layout, so a scenario's ``../worlds/arena.world`` and ``../clients/python/wander.py``
resolve alike in both.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]


def bundled_root() -> Path:
    """The installed package's ``_bundled`` folder when there is one, else the clone's top."""
    packaged = _PACKAGE / "_bundled"
    return packaged if packaged.is_dir() else _PACKAGE.parent


#: The bundled content's root (see the module docstring).
BUNDLED = bundled_root()


def resolve(path: str) -> str:
    """``path`` as given when it exists (or is absolute); else the bundled file of that relative
    name when there is one (``coopsim run scenarios/ctf.scenario`` from any folder, installed or
    not); else ``path`` unchanged, for the caller's own "no such file" message."""
    given = Path(path)
    if given.is_absolute() or given.exists():
        return path
    candidate = BUNDLED / given
    return str(candidate) if candidate.is_file() else path


def resolve_outputs(path: str) -> tuple[str, Path | None]:
    """:func:`resolve` of ``path``, and when it is a bundled file found from another folder its
    name in the current folder, where a command writing beside its input writes instead (the
    bundled folder is the installed package's), else None."""
    found = resolve(path)
    return found, (Path(Path(path).name) if found != path else None)


def from_clone() -> bool:
    """True when this coopsim runs from a clone (an editable install or the source tree), not
    from an installed wheel."""
    return not (_PACKAGE / "_bundled").is_dir() and (_PACKAGE.parent / "setup.cfg").is_file()


def install_hint(extra: str) -> str:
    """The pip command that installs the optional ``extra`` for this coopsim: from a clone the
    editable form run in the clone (``pip install 'coopsim[...]'`` would fetch another coopsim),
    else the installed package's extra."""
    if from_clone():
        return f"pip install -e '.[{extra}]'  (in the clone, {_PACKAGE.parent})"
    return f"pip install 'coopsim[{extra}]'"
