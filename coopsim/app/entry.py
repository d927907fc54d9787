"""The ``coopsim`` command's entry point (setup.cfg's console script, ``python -m coopsim``):
Ctrl-C handled before the command is imported (coopsim/app/interrupt.py)."""

from __future__ import annotations

import os
import sys

from .interrupt import exit_interrupted, install, requested


def command_line() -> None:
    """The ``coopsim`` command (setup.cfg's console script, ``python -m coopsim``)."""
    try:
        try:
            install()
            from .cli import main

            main()
        except KeyboardInterrupt:  # while importing, or outside a command (cli catches the rest)
            exit_interrupted()
    except SystemExit as exc:
        if requested():
            _leave(exc.code)
        raise


def _leave(code) -> None:
    """End an interrupted process with exit status ``code`` as soon as the clean-ups are done:
    the atexit handlers run, the interpreter's teardown does not (it restores SIGINT's default
    action first, so a Ctrl-C repeated meanwhile killed the process by signal instead of letting
    it end with its status)."""
    import atexit

    if isinstance(code, str):
        sys.stderr.write(code + "\n")
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code if isinstance(code, int) else int(code is not None and code != 0))
