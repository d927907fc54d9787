"""Scenarios written for the learning tests (real files, real worlds)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EMPTY = ROOT / "worlds" / "empty.world"
GOAL = ROOT / "scenarios" / "learn_goal.scenario"


def write(tmp_path: Path, body: str, name: str = "t.scenario") -> Path:
    """A scenario in ``tmp_path`` on the empty 10 x 10 m world with ``body`` after [WORLD]."""
    path = tmp_path / name
    path.write_text(f"[WORLD]\nfile {EMPTY}\n\n{body}")
    return path


TWO = """
[TARGET]
red         3 3 0

[ROBOT_1]
type        single
name        a
position    -2 -2 0
param       sonar.noise 0.02

[ROBOT_2]
type        single
name        b
position    2 -2 0
orientation 0 0 90
param       sonar.noise 0.02

[SETTINGS]
dt          0.05
"""
