"""The formats layer: files into frozen specs (imports only :mod:`coopsim.model`).

``sections.py`` is the ``[SECTION] key value…`` grammar, read against tables of sections and
keys (``keys.py`` for ``.world`` and ``.scenario``; ``sweep.py`` for ``.sweep``; ``events.py``,
``games.py``, ``task.py`` and ``scenery.py`` add their sections): adding a key is adding a row,
and the reference (docs/reference/files.md) is generated from the same rows. ``files.py`` builds
the specs and checks what needs the whole file; ``enginecheck.py`` whether an engine can build
and place it; ``check.py`` is ``coopsim check``. Every error is ``path:line: reason``.

Robot description files (URDF, MJCF) are untrusted XML: ``description.py`` (their keys, the
search path, ``package://``), ``robotxml.py`` and ``description/mjcf.py`` read them through
defusedxml within size limits; meshes (``meshes.py``: STL, OBJ; ``collada.py`` and
``daereader.py``: COLLADA) are bounded and cached by content (``meshcache.py``); non-physical
inertias are repaired with a warning (``description/inertia.py``). ``maps.py`` turns map images into
walls; ``folders.py`` says which folders a network request may read or write.
"""
