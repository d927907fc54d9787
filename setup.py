"""Build hook: ship the clone's bundled content inside the wheel.

The demo, the scenarios, worlds, recordings, exercises, sweeps and the Python controller scripts
they launch live at the top of the clone (tests and docs use those paths). A wheel has no clone
beside it, so ``build_py`` copies them, with the same relative layout, into the package as
``coopsim/_bundled/``; ``coopsim.formats.folders.BUNDLED`` finds them there when installed and
at the top of the clone otherwise. Nothing is committed twice. MANIFEST.in puts the same files
into the sdist, from which ``python -m build`` makes the wheel.
"""

import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

#: The bundled content, as globs relative to the clone's top (keep MANIFEST.in in step:
#: tests/app/test_release.py checks both against the built wheel).
BUNDLED = (
    "scenarios/*.scenario", "worlds/*.world", "exercises/*.scenario", "exercises/README.md",
    "exercises/worlds/*.world", "recordings/README.md", "recordings/sample.mcap",
    "recordings/transport.mcap", "recordings/formation.mcap", "sweeps/*.sweep",
    "clients/python/*.py", "clients/python/README.md",
)


class BuildWithBundled(build_py):
    """``build_py`` that also copies :data:`BUNDLED` into ``coopsim/_bundled``."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the clone's own folders
        top = os.path.dirname(os.path.abspath(__file__))
        for pattern in BUNDLED:
            for path in sorted(glob.glob(os.path.join(top, pattern))):
                rel = os.path.relpath(path, top)
                target = os.path.join(self.build_lib, "coopsim", "_bundled", rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(path, target)


setup(cmdclass={"build_py": BuildWithBundled})
