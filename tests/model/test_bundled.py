"""Where the bundled content and the extras' pip commands come from: the clone this suite runs
from, or an installed wheel's package (tests/app/test_release.py runs the wheel itself)."""

from __future__ import annotations

from pathlib import Path

from coopsim.model import bundled

ROOT = Path(__file__).resolve().parents[2]


def test_from_a_clone_the_bundled_content_is_the_clones_own_folders():
    assert bundled.from_clone() and bundled.BUNDLED == ROOT
    assert bundled.resolve("scenarios/demo.scenario") in ("scenarios/demo.scenario",
                                                          str(ROOT / "scenarios/demo.scenario"))


def test_from_a_clone_the_hint_is_the_editable_install_in_the_clone():
    hint = bundled.install_hint("experiments")
    assert hint.startswith("pip install -e '.[experiments]'") and str(ROOT) in hint


def test_installed_the_hint_is_the_packages_extra_and_the_content_the_packages(tmp_path,
                                                                               monkeypatch):
    (tmp_path / "_bundled" / "scenarios").mkdir(parents=True)
    (tmp_path / "_bundled" / "scenarios" / "x.scenario").write_text("")
    monkeypatch.setattr(bundled, "_PACKAGE", tmp_path)
    assert not bundled.from_clone()
    assert bundled.install_hint("plot") == "pip install 'coopsim[plot]'"
    assert bundled.bundled_root() == tmp_path / "_bundled"


def test_a_missing_relative_file_is_looked_for_among_the_bundled_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert bundled.resolve("scenarios/ctf.scenario") == str(bundled.BUNDLED /
                                                            "scenarios/ctf.scenario")
    assert bundled.resolve("scenarios/none.scenario") == "scenarios/none.scenario"
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "ctf.scenario").write_text("mine")
    assert bundled.resolve("scenarios/ctf.scenario") == "scenarios/ctf.scenario"  # yours first
