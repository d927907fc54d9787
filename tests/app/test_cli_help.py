"""``run --help``
says where the settings come from when not given (the scenario's [SETTINGS], else a default)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from coopsim.model.plugins import default_engine
from coopsim.model.specs import Settings

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("run", "replay", "info", "export", "plot", "view", "gateway", "conformance", "check",
            "list", "drive", "bench step")


def _help(command: str) -> str:
    result = subprocess.run([sys.executable, "-m", "coopsim", *command.split(), "--help"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _options(help_text: str) -> list[tuple[str, ...]]:
    """Each option of a --help text as its spellings (("-p", "--param"), ("--headless",
    "--gui"), ...), without --help."""
    found = []
    for line in help_text.split("Options:", 1)[1].splitlines():
        match = re.match(r"\s+((?:-\w, )?--[\w-]+(?: / --[\w-]+)?)", line)
        if match and match.group(1) != "--help":
            found.append(tuple(re.findall(r"--?[\w-]+", match.group(1))))
    return found


@pytest.mark.slow
def test_run_help_gives_every_setting_its_default():
    text = " ".join(_help("run").split())  # click wraps lines: compare on one line
    defaults = Settings()
    for option, default in (("--mode", defaults.mode), ("--dt", f"{defaults.dt:g}"),
                            ("--seed", str(defaults.seed)), ("--speed", "1 in realtime and 0 in lockstep"),
                            ("--duration", "until Ctrl-C"),
                            ("--engine", defaults.engine or default_engine())):
        entry = text.split(f" {option} ", 1)[1][:200]
        assert "scenario's [SETTINGS]" in entry and f"else {default})" in entry, (option, entry)


def _reference(command: str) -> str:
    """The section of the generated command-line reference (docs/reference/cli.md) of command."""
    text = (ROOT / "docs" / "reference" / "cli.md").read_text()
    return text.split(f"\n## coopsim {command}\n", 1)[1].split("\n## ", 1)[0]


def test_the_docs_name_the_extra_plot_needs(monkeypatch):
    """``coopsim plot`` without matplotlib names the ``plot`` extra; docs/foxglove.md too."""
    from coopsim.app.plot import pyplot
    from coopsim.model.errors import CoopsimError

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # not installed: its import fails
    with pytest.raises(CoopsimError) as said:
        pyplot()
    extra = re.search(r"\[(\w+)\]", str(said.value))[1]
    text = (ROOT / "docs" / "foxglove.md").read_text()
    assert f"'coopsim[{extra}]'" in text and f"'.[{extra}]'" in text


@pytest.mark.slow
def test_the_reference_names_the_metrics_file_export_writes(tmp_path):
    """export's --metrics-csv default (beside the CSV as NAME.metrics.csv) is the file export
    writes (formation.mcap has a monitor's metrics)."""
    assert "beside the CSV as NAME.metrics.csv" in _reference("export")
    csv_name, metrics_name = "ctf.csv", "ctf.metrics.csv"
    done = subprocess.run([sys.executable, "-m", "coopsim", "export",
                           str(ROOT / "recordings" / "formation.mcap"), "--csv", csv_name],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([csv_name, metrics_name])


def test_readme_and_the_testing_page_give_the_suite_s_two_tiers():
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert 'pytest -m "not slow"' in readme and "docs/testing.md" in readme
    page = (ROOT / "docs" / "testing.md").read_text()
    assert 'pytest -m "not slow"' in page and "pytest -m slow" in page
    assert re.search(r"markers\s*=\s*\n\s*slow:", (ROOT / "setup.cfg").read_text())
    # the whole suite is README command 2, and the slow tier is run as .ci/run runs the suite
    flags = re.search(r"-m pytest (.*?) \"\$@\"", (ROOT / ".ci" / "run").read_text())[1]
    assert "bash .ci/run" in readme and "`bash .ci/run` (README command 2)" in page
    assert f"pytest -m slow {flags}" in page, flags
