"""``check`` and ``list`` find a bundled file by its relative name from any folder, as ``run``
does (``coopsim run scenarios/ctf.scenario`` anywhere): in process, through click."""

from click.testing import CliRunner

from coopsim.app.cli import main


def test_check_finds_a_bundled_scenario_from_another_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["check", "scenarios/one_robot.scenario",
                                     "worlds/arena.world"])
    assert done.exit_code == 0, done.output
    assert "2 file(s) OK" in done.output


def test_check_still_names_a_missing_file_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["check", "scenarios/no_such.scenario"])
    assert done.exit_code == 2
    assert "scenarios/no_such.scenario" in done.output


def test_list_loads_a_bundled_scenario_from_another_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["list", "scenarios/one_robot.scenario"])
    assert done.exit_code == 0, done.output
