"""``/sim record`` and ``/sim load`` reach only the run's data folders (coopsim.formats.folders):
no absolute path, ``..`` or symbolic link leads out, no folder is made on request, no FIFO blocks
a server, and recordings started per minute are capped. Refusals are error 6 with the reason."""

from __future__ import annotations

import json
import os
import threading

import pytest

from coopsim.app import run as run_module
from coopsim.net import protocol as p

from helpers import robot, scenario, unblock_fifo
from nethelpers import ROOT, Peer, live

WORLD = "[FLOOR]\nsize 10 10 0.1\n"
SCENARIO = "[WORLD]\nfile {world}\n[ROBOT_1]\ntype single\nname a\nposition 0 0 0\n"


@pytest.fixture()
def folders(tmp_path, monkeypatch):
    """data/ (a --data-dir), outside/ (not one), and the current folder (its recordings/)."""
    data, outside = tmp_path / "data", tmp_path / "outside"
    data.mkdir()
    outside.mkdir()
    monkeypatch.chdir(tmp_path)
    return data, outside


@pytest.fixture()
def run(folders):
    with live(scenario(robots=[robot("r1")]), paused=True, data_dirs=(str(folders[0]),)) as run:
        yield run


def _refused(sim: Peer, command: int, text: str, params=(), code=p.NOT_ALLOWED) -> str:
    error, sentence, cmd, *_ = sim.ask(command, text, params)
    assert (error, cmd) == (code, command), sentence
    return sentence


# --- record ---------------------------------------------------------------------------------------

def test_record_refuses_an_absolute_path_outside_and_makes_no_folder(sim, folders, tmp_path):
    target = tmp_path / "x" / "y" / "z.mcap"
    text = _refused(sim, 26, str(target), [1])
    assert "outside the simulation's data folders" in text and "--data-dir" in text
    assert not (tmp_path / "x").exists()
    assert json.loads(sim.ok(23)[1])["recording"] == ""


def test_record_refuses_dot_dot_out_of_the_recordings_folder(sim, folders):
    _, outside = folders
    assert "outside" in _refused(sim, 26, "../outside/escape.mcap", [1])
    assert list(outside.iterdir()) == []


def test_record_follows_no_symbolic_link_out(sim, folders):
    data, outside = folders
    (data / "link").symlink_to(outside, target_is_directory=True)
    _refused(sim, 26, str(data / "link" / "escape.mcap"), [1])
    (data / "trap.mcap").symlink_to(outside / "made-through-a-link.mcap")
    assert "exists" in _refused(sim, 26, str(data / "trap.mcap"), [1], code=p.FAILED)
    assert list(outside.iterdir()) == []


def test_record_makes_no_missing_folder_inside_either(sim, folders):
    data, _ = folders
    assert "folder does not exist" in _refused(sim, 26, str(data / "new" / "r.mcap"), [1],
                                               code=p.FAILED)
    assert not (data / "new").exists()


def test_record_inside_the_folders_works_and_relative_paths_go_to_recordings(sim, folders,
                                                                            tmp_path):
    data, _ = folders
    assert sim.ok(26, str(data / "mine.mcap"), params=[1])[1] == str(data / "mine.mcap")
    sim.ok(4, params=[3])
    sim.ok(26, params=[0])
    assert sim.ok(26, "short.mcap", params=[1])[1] == str(tmp_path / "recordings" / "short.mcap")
    sim.ok(26, params=[0])
    default = sim.ok(26, params=[1])[1]
    assert os.path.dirname(default) == str(tmp_path / "recordings")
    sim.ok(26, params=[0])


def test_record_and_load_refuse_a_nul_byte_with_a_sentence(sim, folders):
    data, _ = folders
    for command, text, params in ((26, "r\0.mcap", [1]), (26, f"{data}/a\0b.mcap", [1]),
                                  (22, "s\0.scenario", []), (22, f"{data}/\0.world", [])):
        assert "may not hold a NUL byte" in _refused(sim, command, text, params)
    assert json.loads(sim.ok(23)[1])["recording"] == ""


def test_recordings_started_per_minute_are_capped(sim, folders, monkeypatch):
    monkeypatch.setattr(run_module, "RECORDINGS_PER_MINUTE", 3)
    for n in range(3):
        sim.ok(26, f"r{n}.mcap", params=[1])
        sim.ok(26, params=[0])
    text = _refused(sim, 26, "r3.mcap", [1])
    assert text.startswith("3 recordings were started in the last minute, the most allowed")
    assert not (folders[0].parent / "recordings" / "r3.mcap").exists()


# --- load -----------------------------------------------------------------------------------------

def test_load_refuses_any_file_but_scenarios_and_worlds(sim):
    assert "only .scenario and .world files" in _refused(sim, 22, "/etc/passwd")


def test_load_refuses_files_outside_the_folders(sim, folders):
    _, outside = folders
    (outside / "w.world").write_text(WORLD)
    (outside / "s.scenario").write_text(SCENARIO.format(world="w.world"))
    for path in (outside / "s.scenario", outside / "w.world", "../outside/w.world"):
        assert "outside the simulation's data folders" in _refused(sim, 22, str(path))
    assert sim.ok(10)[1] == "r1"


def test_a_loaded_scenario_may_name_only_worlds_inside_the_folders(sim, folders):
    data, outside = folders
    (outside / "w.world").write_text(WORLD)
    for n, world in enumerate(("/etc/passwd", "../outside/w.world", str(outside / "w.world"))):
        (data / f"s{n}.scenario").write_text(SCENARIO.format(world=world))
        text = _refused(sim, 22, str(data / f"s{n}.scenario"))
        assert text.startswith(f"{data / f's{n}.scenario'}:2: world file {world!r}: "), text
    assert sim.ok(10)[1] == "r1"


def test_load_follows_no_symbolic_link_out(sim, folders):
    data, outside = folders
    (outside / "w.world").write_text(WORLD)
    (data / "w.world").symlink_to(outside / "w.world")
    (data / "s.scenario").write_text(SCENARIO.format(world="w.world"))
    _refused(sim, 22, str(data / "w.world"))
    assert "world file 'w.world'" in _refused(sim, 22, str(data / "s.scenario"))


def test_load_inside_the_folders_works(sim, folders):
    data, _ = folders
    (data / "w.world").write_text(WORLD)
    (data / "s.scenario").write_text(SCENARIO.format(world="w.world"))
    sim.ok(22, str(data / "s.scenario"))
    assert sim.ok(10)[1] == "a"
    sim.ok(22, "s.scenario")  # relative: found in a data folder
    sim.ok(22, str(ROOT / "scenarios" / "one_robot.scenario"))  # the bundled ones


def test_load_of_a_fifo_answers_at_once(sim, folders):
    data, _ = folders
    fifo = data / "pipe.scenario"
    os.mkfifo(fifo)
    done = threading.Event()
    threading.Thread(target=unblock_fifo, args=(fifo, done, 8.0), daemon=True).start()
    try:
        text = _refused(sim, 22, str(fifo), code=p.FAILED)
    finally:
        done.set()
    assert text == f"{fifo}:0: not a regular file (a FIFO, device or socket)"
    assert sim.ok(1)[0] == 0

