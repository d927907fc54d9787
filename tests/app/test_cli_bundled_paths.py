"""``check``, ``list``, ``info`` and ``export`` find a bundled file by its relative name from
any folder, as ``run`` and ``replay`` do (``coopsim run scenarios/ctf.scenario`` anywhere): in
process, through click."""

import json

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


def test_info_and_export_read_a_bundled_recording_from_another_folder(tmp_path, monkeypatch):
    """docs/foxglove.md's export, typed in a folder of the user's own: the bundled recording
    is read, the CSV written where asked; a missing recording is still named as given."""
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["info", "recordings/sample.mcap", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["frames"] == 1001
    done = CliRunner().invoke(main, ["export", "recordings/sample.mcap", "--csv", "out.csv"])
    assert done.exit_code == 0, done.output
    rows = (tmp_path / "out.csv").read_text().splitlines()
    assert len(rows) == 1 + 4 * 1001 and rows[0].startswith("time,robot,")
    done = CliRunner().invoke(main, ["info", "recordings/no_such.mcap"])
    assert done.exit_code == 2 and "recordings/no_such.mcap" in done.output
