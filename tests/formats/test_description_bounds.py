"""A description's masses within the bounds of every mass coopsim takes (a 1e308 kg
link was taken): URDF and MJCF refuse one beyond 0.001..10,000 kg (0 allowed) at
its line, with the sentence of model/limits.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from coopsim.formats.files import load_scenario
from coopsim.model.errors import FileFormatError

DATA = Path(__file__).resolve().parent.parent / "data" / "descriptions"


def _load(folder: Path, name: str, text: str):
    (folder / name).write_text(text)
    (folder / "s.scenario").write_text(
        f"[WORLD]\nfile {DATA / 'floor.world'}\n\n[ROBOT_1]\ndescription {name}\nname a\n"
        "position 0.5 0 0\n\n[SETTINGS]\nengine mujoco\n")
    return load_scenario(folder / "s.scenario")


def _line(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("value", ["1e308", "10001"])
def test_a_urdf_mass_beyond_the_bounds_is_refused_at_its_line(tmp_path, value):
    bad = (DATA / "tiny_arm.urdf").read_text().replace('<mass value="1.0"/>',
                                                       f'<mass value="{value}"/>')
    with pytest.raises(FileFormatError) as info:
        _load(tmp_path, "arm.urdf", bad)
    assert info.value.line == _line(bad, f'value="{value}"')
    assert "link 'upper': link mass must be between 0 and 10000 kg" in str(info.value)


def test_an_mjcf_mass_beyond_the_bounds_is_refused_at_its_line(tmp_path):
    bad = (DATA / "tiny_arm.xml").read_text().replace('mass="1"', 'mass="1e308"')
    with pytest.raises(FileFormatError) as info:
        _load(tmp_path, "arm.xml", bad)
    assert info.value.line == _line(bad, 'mass="1e308"')
    assert "link mass must be between 0 and 10000 kg" in str(info.value)


def test_a_tiny_link_mass_is_repaired_not_refused(tmp_path):
    """A 1 mg link (TIAGo's antenna as shipped) is under every other mass's 1 g bound: a link's
    mass is repaired with a warning instead (description/inertia.py)."""
    tiny = (DATA / "tiny_arm.urdf").read_text().replace('<mass value="1.0"/>',
                                                        '<mass value="1e-06"/>')
    spec = _load(tmp_path, "arm.urdf", tiny)
    assert spec.robots[0].name == "a"


def test_masses_within_the_bounds_load(tmp_path):
    spec = _load(tmp_path, "arm.xml", (DATA / "tiny_arm.xml").read_text())
    assert spec.robots[0].name == "a"
