"""``python -m coopsim`` is the ``coopsim`` command."""

from .app.cli import main

main()
