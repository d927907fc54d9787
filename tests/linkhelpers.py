"""Shared by the tests of robots drawn link by link (protocol 10's ``links``): example-robot-
data's share folder and a scenario section of its Panda at its home angles."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest

HOME = (0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.04, 0.04)  # 7 joints, the 2 fingers


def robots_share() -> Path:
    """example-robot-data's share folder (the test skips without the package)."""
    try:
        return Path(distribution("example-robot-data").locate_file("cmeel.prefix/share"))
    except PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (pip install '.[test]')")


def panda_section(n: int, x: float) -> str:
    """``[ROBOT_n]``: the Panda named ``panda`` at (x, 0), its tool, gripper and home angles."""
    return (f"[ROBOT_{n}]\ndescription {robots_share()}/example-robot-data/robots/"
            "panda_description/urdf/panda.urdf\nname panda\n"
            f"position {x:g} 0 0\ntool panda_hand_tcp\n"
            "gripper panda_finger_joint1 panda_finger_joint2\n"
            f"home {' '.join(str(q) for q in HOME[:7])}\n")
