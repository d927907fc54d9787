"""``python -m coopsim`` is the ``coopsim`` command (Ctrl-C handled from here on:
coopsim/app/interrupt.py)."""

from .app.entry import command_line

command_line()
