"""``python -m coopsim`` is the ``coopsim`` command."""

from .cli import main

main()
