"""``check``, ``list``, ``info``, ``export``, ``plot`` and ``sweep`` find a bundled file by its
relative name from any folder, as ``run`` and ``replay`` do (``coopsim run scenarios/ctf.scenario``
anywhere), ``plot`` and ``sweep`` writing what goes beside it into the current folder: in process,
through click."""

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


def test_plot_reads_a_bundled_recording_and_writes_its_plots_here(tmp_path, monkeypatch):
    """The PNGs go to the current folder (beside the bundled file is the package's folder)."""
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["plot", "recordings/sample.mcap"])
    assert done.exit_code == 0, done.output
    assert "sample-plots/trajectories.png" in done.output.splitlines()
    assert (tmp_path / "sample-plots" / "trajectories.png").stat().st_size > 10_000


def test_sweep_reads_a_bundled_sweep_and_keeps_its_table_here(tmp_path, monkeypatch):
    """A table in the current folder with every point of the bundled sweep done: the sweep
    resumes it there (nothing left to run) and writes its CSV beside it."""
    from pathlib import Path

    from coopsim.app.sweep import Table, plan
    from coopsim.formats.sweep import load_sweep
    from coopsim.model.bundled import resolve

    monkeypatch.chdir(tmp_path)
    table = Table(Path("amsa_kv.parquet"))
    for task in plan(load_sweep(resolve("sweeps/amsa_kv.sweep")), table.path, False):
        table.add({"key": task.key, **task.values, "seed": task.seed, "status": "ok"})
    table.save()
    done = CliRunner().invoke(main, ["sweep", "sweeps/amsa_kv.sweep", "--csv"])
    assert done.exit_code == 0, done.output
    assert "0 run now, 0 failed; amsa_kv.parquet holds 36 rows" in done.output
    assert len((tmp_path / "amsa_kv.csv").read_text().splitlines()) == 1 + 36
