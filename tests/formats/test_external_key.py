"""The ``external`` key of a ``[ROBOT_n]`` section: its settings, and bad ones
refused at their line with a sentence, nothing loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from coopsim.formats.files import parse_scenario
from coopsim.model.errors import FileFormatError
from coopsim.model.specs import ExternalSpec


ROOT = Path(__file__).resolve().parents[2]
BASE = f"[WORLD]\nfile {ROOT / 'worlds' / 'empty.world'}\n\n[ROBOT_1]\ntype single\nname real\n" \
       "position 0 0 0\n"


def test_the_settings_are_read_and_default():
    spec = parse_scenario(BASE + "external stale 0.3 max_rate 200\n", "s.scenario").robots[0]
    assert spec.external == ExternalSpec(stale=0.3, max_rate=200.0)
    assert parse_scenario(BASE + "external\n", "s.scenario").robots[0].external == ExternalSpec()
    assert parse_scenario(BASE, "s.scenario").robots[0].external is None


@pytest.mark.parametrize("line, why", [
    ("external stale 0", "external stale must be a number > 0"),
    ("external speed 2", "external has no setting 'speed'"),
    ("external stale", "'name value' pairs"),
    ("external max_rate fast", "max_rate must be a number > 0")])
def test_bad_settings_name_the_line(line, why):
    with pytest.raises(FileFormatError, match=rf"s\.scenario:8: .*{why}"):
        parse_scenario(BASE + line + "\n", "s.scenario")
