"""Fresh virtual environments for the tests that install coopsim the way a user does, without
unpacking its ~600 MB of dependencies again for each one.

A new venv gets a ``.pth`` naming a folder of links to every distribution of this test
environment's site-packages except coopsim's own (its editable install, its ``.pth`` files):
``pip install`` in the venv then finds numpy, scipy, MuJoCo, numba... installed ("Requirement
already satisfied") and installs only what it is asked for. What the venv runs is the package
it installed; its dependencies are the very files the suite tests with. Unpacking them took
most of a test file's minutes on a loaded two-core machine (tests/examples/test_plugin_arm.py:
about 2.5 minutes of a CI run, load 8-9).
"""

from __future__ import annotations

import sysconfig
from pathlib import Path


def link_dependencies(folder: Path) -> Path:
    """A folder of links to everything in this environment's site-packages but coopsim."""
    folder.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        name = entry.name.lower()
        if name.startswith(("coopsim", "__editable__")) or name.endswith(".pth"):
            continue  # the clone's editable install must not be seen
        (folder / entry.name).symlink_to(entry)
    return folder


def share_dependencies(python: Path, deps: Path) -> None:
    """Let the venv of ``python`` see the linked dependencies (:func:`link_dependencies`)
    through a ``.pth`` in its site-packages."""
    import subprocess

    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig."
                                "get_paths()['purelib'])"], capture_output=True, text=True,
                               check=True, timeout=600).stdout.strip())
    (site / "zz_coopsim_test_deps.pth").write_text(f"{deps}\n")

