"""The app layer: the ``coopsim`` command, the one layer that may import every front end (never
the built-in plugins: they come by entry point).

``cli.py`` (with ``cli_bench.py`` and ``options.py``) holds the commands' options and help only;
each command's body is a call into a module here: ``live.py`` (run, replay, view, gateway,
drive), ``run.py`` (a live run assembled), ``recordings.py`` (info, repair, export, plot),
``sweep.py``, ``bench.py``, ``analyze.py``, ``conformance.py``, ``teleop.py``. Launched
controllers are ``controllers.py`` and ``watchdog.py``; ``entry.py`` and ``interrupt.py`` handle
Ctrl-C and SIGTERM from the first line. ``reference.py`` generates docs/reference from the code.
"""
