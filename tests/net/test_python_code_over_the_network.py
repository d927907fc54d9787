"""A file loaded over the network (``/sim load``) names no Python code unless the run was started
with ``--allow-python``: a ``[MONITORS] python MODULE:FUNCTION`` line is refused with error 6 and
its ``file:line`` before anything is imported. Code that does run (allowed, or from the command
line) cannot end the simulator: whatever it raises, ``SystemExit`` included, pauses the run with
the reason in the status."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from coopsim.app.cli import main
from coopsim.net import protocol as p

from helpers import robot, scenario
from nethelpers import live, wait_until

WORLD = "[FLOOR]\nsize 10 10 0.1\n"
SCENARIO = ("[WORLD]\nfile w.world\n[ROBOT_1]\ntype single\nname a\nposition 0 0 0\n"
            "[MONITORS]\nmetric bad python {target}\n")
PROBE = "import pathlib\npathlib.Path({marker!r}).write_text('imported')\n" \
        "def f(snap):\n    return 1.0\n"


@pytest.fixture()
def data(tmp_path, monkeypatch):
    """data/ (a --data-dir) with a world, and a harmless module on sys.path that leaves a file
    behind when it is imported."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "w.world").write_text(WORLD)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "harmless_probe.py").write_text(PROBE.format(marker=str(tmp_path / "marker")))
    monkeypatch.syspath_prepend(str(tmp_path))
    for target in ("sys:exit", "harmless_probe:f", "builtins:exit"):
        name = target.replace(":", "_")
        (folder / f"{name}.scenario").write_text(SCENARIO.format(target=target))
    return folder


@pytest.fixture()
def allow(request):
    return getattr(request, "param", False)


@pytest.fixture()
def run(data, allow):
    with live(scenario(robots=[robot("r1")]), paused=True, data_dirs=(str(data),),
              allow_python=allow) as run:
        yield run


def test_a_loaded_file_naming_python_code_is_refused_before_any_import(sim, data, tmp_path):
    for name in ("sys_exit", "harmless_probe_f"):
        error, text, cmd, *_ = sim.ask(22, str(data / f"{name}.scenario"))
        assert (error, cmd) == (p.NOT_ALLOWED, 22), text
        assert text.startswith(f"{data / f'{name}.scenario'}:8: python ")
        assert "coopsim run --allow-python" in text
    assert not (tmp_path / "marker").exists()  # the module was never imported
    assert sim.ok(10)[1] == "r1"  # nothing half-loaded; the server goes on
    assert sim.ok(1)[0] == 0


@pytest.mark.parametrize("allow", [True], indirect=True)
def test_with_allow_python_a_metric_raising_systemexit_pauses_the_run(sim, data, tmp_path):
    sim.ok(22, str(data / "harmless_probe_f.scenario"))
    assert (tmp_path / "marker").exists()
    for name in ("sys_exit", "builtins_exit"):
        sim.ok(22, str(data / f"{name}.scenario"))
        assert sim.ok(10)[1] == "a"
        sim.ok(4, params=[1])  # the step fails: the run pauses with the reason

        def failed():
            return json.loads(sim.ok(23)[1])["error"]
        wait_until(failed)
        assert "raised SystemExit" in failed(), failed()
        assert sim.ok(1)[0] == 0  # the simulator is alive


def test_run_has_an_allow_python_flag():
    out = CliRunner().invoke(main, ["run", "--help"]).output
    assert "--allow-python" in out
