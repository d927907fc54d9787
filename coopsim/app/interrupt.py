"""Ctrl-C (SIGINT) and SIGTERM in the ``coopsim`` command, from its first line to its last.

The command's entry point (:func:`coopsim.app.entry.command_line`: ``python -m coopsim`` and
the ``coopsim`` script) installs :func:`on_signal` before it imports anything heavy, so a Ctrl-C
at any moment ends the process with one line and no traceback (docs/reliability.md):

* the **first** signal raises KeyboardInterrupt in the main thread, which unwinds whatever runs
  (imports, loading, building the world, starting servers, stepping) through its clean-ups; a
  run that had started prints its summary (exit status as documented: 0, or 1 when a rule graded
  it FAIL), anything earlier says ``coopsim: interrupted`` and exits :data:`EXIT_INTERRUPTED`;
* it is also remembered (:func:`requested`): the loops that follow a run or a replay look at it,
  so a KeyboardInterrupt swallowed by library code (a ``__del__``, an ``except BaseException``)
  still ends the run at its next look;
* a **second** signal does not raise: it lands while the first one's clean-up runs (controllers
  stopped, the recording closed with its index), which must not be cut short;
* a **third** ends the process at once (:data:`FORCE_AFTER`), for a clean-up that hangs; the
  watchdog still stops the controllers, and ``coopsim repair`` finishes a recording.
"""

from __future__ import annotations

import os
import signal
import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process Ctrl-C ended
FORCE_AFTER = 3  # signals: this one ends the process without its clean-up
_STATE = {"count": 0, "name": ""}  # signals received, the first one's name


def install() -> None:
    """Handle SIGINT and SIGTERM as the module says (main thread only); a signal held while
    ``python -m coopsim`` imported the package (coopsim/__init__.py) is taken now. A signal
    the process was started ignoring (a background job: ``cmd &``) stays ignored, as Python
    keeps it."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, on_signal)
    for signum in getattr(sys.modules.get("coopsim"), "_EARLY_SIGNALS", ()):
        on_signal(signum, None)


def on_signal(signum: int, frame) -> None:
    """The handler: count the signal; raise on the first, end the process on the third."""
    _STATE["count"] += 1
    if _STATE["count"] == 1:
        _STATE["name"] = signal.Signals(signum).name
        raise KeyboardInterrupt
    if _STATE["count"] >= FORCE_AFTER:
        os.write(2, b"\ncoopsim: interrupted again: exiting now, without finishing the clean-up "
                    b"(a recording left open: coopsim repair FILE)\n")
        os._exit(EXIT_INTERRUPTED)


def requested() -> bool:
    """True once a SIGINT or SIGTERM has come (through :func:`install`'s handler)."""
    return _STATE["count"] > 0


def check() -> None:
    """Raise KeyboardInterrupt when a signal came and was swallowed on its way (a checkpoint
    between the stages of a start-up)."""
    if requested():
        raise KeyboardInterrupt


def exit_interrupted() -> None:
    """Say in one line that the command was interrupted, and exit :data:`EXIT_INTERRUPTED`."""
    name = _STATE["name"] or "SIGINT"
    sys.stderr.write(f"\ncoopsim: interrupted ({'Ctrl-C' if name == 'SIGINT' else name})\n")
    sys.exit(EXIT_INTERRUPTED)
