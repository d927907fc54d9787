"""The formats layer: files into frozen specs (imports :mod:`coopsim.model` and
:mod:`coopsim.description`).

``sections.py`` is the ``[SECTION] key value…`` grammar, read against tables of sections and
keys (``keys.py`` for ``.world`` and ``.scenario``; ``sweep.py`` for ``.sweep``; ``events.py``,
``games.py``, ``task.py`` and ``scenery.py`` add their sections): adding a key is adding a row,
and the reference (docs/reference/files.md) is generated from the same rows. ``files.py`` builds
the specs and checks what needs the whole file; ``enginecheck.py`` whether an engine can build
and place it; ``check.py`` is ``coopsim check``. Every error is ``path:line: reason``.

A robot section may name a description file (URDF, MJCF): ``description.py`` holds its keys,
the search path and ``package://``, and reads the file through :mod:`coopsim.description`
(untrusted XML through defusedxml within size limits, meshes bounded and cached).
``maps.py`` turns map images into walls; ``folders.py`` says which folders a network request
may read or write.
"""
