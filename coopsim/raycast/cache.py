"""numba's on-disk cache of coopsim's kernels, filled by a process of its own.

Why: the first run after an install (or an update of a kernel's source) compiles every kernel,
10-40 s of numba's compiler, which holds the GIL and cannot be interrupted. Done in the run's
process, the run stepped late meanwhile, and a run shorter than the compile stayed alive in
silence after its summary (the interpreter cannot tear down under LLVM) and ignored SIGTERM.
So :func:`start_filling` starts a process running :func:`coopsim.raycast.auto.fill_cache`,
which compiles the kernels a run loads (``cache=True``: into ``__pycache__`` or
``NUMBA_CACHE_DIR``) and then writes a *stamp*; the run's process serves with numpy meanwhile
and, once the process is done, loads the kernels from the cache (about 1 s). A later run
finds the stamp and loads at once.

The stamp's name is a digest of what numba's cache depends on: numba's and Python's versions
and the size and modification time of every kernel's source file and of every file whose
kernels others inline (:func:`coopsim.model.compiled.source_stamp`, which keys each cached
kernel too: numba itself reuses a cached kernel while its own source file's modification time
is the same, whatever the files it inlines from). It lies in the cache's
folder (``NUMBA_CACHE_DIR``, else the ray casters' ``__pycache__``); where that cannot be
written, no stamp is kept and each run starts the (then quick) process again.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile

from ..model import compiled

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.dirname(_HERE)
#: Source files of the kernels the process compiles (relative to the coopsim package)
KERNEL_FILES = ("raycast/jitcast.py", "raycast/jitfan.py", "raycast/jitgrid.py",
                "raycast/jitwalk.py", "raycast/numpycast.py", "plugins/modules/kernels.py",
                "env/batchcast.py", "env/copykernels.py", "model/compiled.py",
                "model/ikkernel.py")


def stamp_path() -> str:
    """Where the stamp of a filled cache for the current sources lies."""
    names = tuple(dict.fromkeys(compiled.KERNEL_SOURCES + KERNEL_FILES))
    folder = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(_HERE, "__pycache__")
    return os.path.join(folder, f"coopsim-kernels-{compiled.source_stamp(names)}.stamp")


@contextlib.contextmanager
def one_filler():
    """Hold the cache folder's lock while filling it: runs started together (a test suite's
    workers, several terminals) queue behind one compiling process instead of each compiling
    the same kernels at once (seen: 50 compilers sharing 2 cores, none finishing). Blocks,
    idle, while another process holds it; where the folder cannot be written, no lock."""
    folder = os.path.dirname(stamp_path())
    try:
        import fcntl

        os.makedirs(folder, exist_ok=True)
        fh = open(os.path.join(folder, "coopsim-kernels.lock"), "a+b")
    except (ImportError, OSError):
        yield
        return
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # released when the file closes (or the process dies)
        yield


def filled() -> bool:
    """True when the stamp says the cache holds the current kernels."""
    return os.path.isfile(stamp_path())


def start_filling(child_env: str) -> subprocess.Popen:
    """Start the process that fills the cache (:func:`coopsim.raycast.auto.fill_cache`), in a
    session of its own (a Ctrl-C at the run's terminal does not stop it: it finishes for the
    next runs), its stderr kept in a temporary file for :func:`failure`."""
    log = tempfile.TemporaryFile()
    env = dict(os.environ, **{child_env: "1", "COOPSIM_JIT": "wait"})
    proc = subprocess.Popen([sys.executable, "-c", "from coopsim.raycast import auto; "
                             "auto.fill_cache()"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
                            cwd=os.path.dirname(_PACKAGE))
    proc.log = log  # type: ignore[attr-defined]
    return proc


def failure(proc: subprocess.Popen) -> str:
    """The last line of a failed process's stderr (", ..." or "")."""
    log = getattr(proc, "log", None)
    if log is None:
        return ""
    log.seek(0)
    lines = log.read().decode(errors="replace").strip().splitlines()
    return f", {lines[-1]}" if lines else ""


def stamp() -> None:
    """Write the stamp: the cache holds the current kernels (in the compiling process)."""
    path = stamp_path()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("numba's cache holds coopsim's kernels for these sources\n")
    except OSError:
        pass  # a folder not ours to write: each run starts the process again (quick then)
