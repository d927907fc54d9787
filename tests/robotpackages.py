"""The robot packages the robot-file tests load files from as shipped (robosuite, dm_control):
found installed or unpacked where ``COOPSIM_ROBOT_PACKAGES`` points (.ci/robot-packages makes
that folder). A package not found skips the test with the reason, except under ``CI=true``,
where it fails: CI must load the packages' files."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "studies"))
import robot_packages  # noqa: E402  (studies/ is no package)


def folder(package: str) -> Path:
    """The folder of ``package``'s files; skips (fails under CI) where it is not found."""
    found = robot_packages.package_folder(package, None)
    if found is None:
        why = f"{package} is not installed (nor in COOPSIM_ROBOT_PACKAGES: bash .ci/robot-packages)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(why + " - CI must load its files", pytrace=False)
        pytest.skip(why)
    return Path(found)
