"""Ctrl-C (SIGINT) and SIGTERM in the ``coopsim`` command, from its first line to its last.

The command's entry point (:func:`coopsim.app.entry.command_line`: ``python -m coopsim`` and
the ``coopsim`` script) installs :func:`on_signal` before it imports anything heavy, so a Ctrl-C
at any moment ends the process with one line and no traceback (docs/reliability.md):

* the **first** signal raises KeyboardInterrupt in the main thread, which unwinds whatever runs
  (imports, loading, building the world, starting servers) through its clean-ups, says
  ``coopsim: interrupted`` and exits :data:`EXIT_INTERRUPTED`; once a run is being started and
  followed (:func:`polled`) it raises nothing: the loop that follows the run sees the request
  within :data:`LOOK` s and the run ends with its summary (exit status as documented: 0, or 1
  when a rule graded it FAIL). An exception raised between any two bytecodes of that loop could
  leave a lock of the stepper held or a clean-up half done;
* it is also remembered (:func:`requested`): the loops that follow a run or a replay look at it,
  so a KeyboardInterrupt swallowed by library code (a ``__del__``, an ``except BaseException``)
  still ends the run at its next look, and a command that returns after one it raised
  (:func:`swallowed`: ``gateway`` catches it to close its server) exits :data:`EXIT_INTERRUPTED`;
* a **second** signal does not raise: it lands while the first one's clean-up runs (controllers
  stopped, the recording closed with its index), which must not be cut short;
* a **third** ends the process at once (:data:`FORCE_AFTER`), for a clean-up that hangs; the
  watchdog still stops the controllers, and ``coopsim repair`` finishes a recording.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process Ctrl-C ended
FORCE_AFTER = 3  # signals: this one ends the process without its clean-up
LOOK = 0.1  # s: how often a loop following a run looks for a signal (polled)
_STATE = {"count": 0, "name": "", "raise": True, "raised": False}  # signals received, the first
# one's name, whether it raised KeyboardInterrupt (outside a polled run)


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
        if _STATE["raise"]:
            _STATE["raised"] = True
            raise KeyboardInterrupt
    if _STATE["count"] >= FORCE_AFTER:
        os.write(2, b"\ncoopsim: interrupted again: exiting now, without finishing the clean-up "
                    b"(a recording left open: coopsim repair FILE)\n")
        os._exit(EXIT_INTERRUPTED)


def requested() -> bool:
    """True once a SIGINT or SIGTERM has come (through :func:`install`'s handler)."""
    return _STATE["count"] > 0


@contextlib.contextmanager
def polled():
    """Inside: the first signal only sets :func:`requested`, which the loop following the run
    looks at (every :data:`LOOK` s); the second is absorbed and the third ends the process as
    everywhere."""
    _STATE["raise"] = False
    try:
        yield
    finally:
        _STATE["raise"] = True


def swallowed() -> bool:
    """True once the first signal raised KeyboardInterrupt (it came outside :func:`polled`): a
    command that then returns normally lost it on its way (library code caught it) and must
    still end as interrupted."""
    return _STATE["raised"]


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
