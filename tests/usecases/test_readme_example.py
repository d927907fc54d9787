"""The README's "Driving a robot" example works as written: its Python block saved as the file
its first line names, its command run from that folder (headless, on a port the OS picks, and
recorded), the controller drives from the very first step to the end of the run."""

from __future__ import annotations

import csv
import re
import shlex
import subprocess
import sys

import pytest

from usecasehelpers import ROOT

BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
NAMED = re.compile(r"^#\s*([\w.]+):")


def _example() -> tuple[str, str, str]:
    """(file name, its text, the command) from the README's "Driving a robot" section."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Driving a robot"):]
    section = section[:section.index("\n## ", 3)]
    (kind, code), (shell, command) = BLOCK.findall(section)[:2]
    assert kind == "python" and shell == "sh"
    return NAMED.match(code).group(1), code, command.strip()


def _run(argv, cwd):
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.mark.slow
def test_the_readme_example_drives_from_the_first_step_to_the_end(tmp_path):
    name, code, command = _example()
    (tmp_path / name).write_text(code)
    argv = shlex.split(command)
    assert argv[:2] == ["coopsim", "run"] and name in argv  # the simulator launches it
    done = _run([sys.executable, "-m", "coopsim", *argv[1:], "--headless", "--port", "0",
                 "--record", "run.mcap"], tmp_path)
    assert "exited" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    _run([sys.executable, "-m", "coopsim", "export", "run.mcap", "--csv", "run.csv"], tmp_path)
    rows = list(csv.DictReader((tmp_path / "run.csv").open()))
    assert len(rows) == 501  # 5 s of 0.01 s steps, and the initial state
    # the loop's first command lands on the first step (a racing loop left the robot standing
    # for as long as the simulator had run before it), and one is in force to the end
    assert float(rows[1]["left_cmd"]) == 0.3
    assert all(abs(float(r["left_cmd"])) == 0.3 for r in rows[1:-1])


def test_the_readme_opens_with_the_two_commands_only():
    text = (ROOT / "README.md").read_text()
    first = BLOCK.search(text)
    commands = [line for line in first.group(2).splitlines() if line and not line.startswith("#")]
    assert commands == [
        "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/coopsim run",
        "bash .ci/run"]


def test_why_coopsim_names_the_alternatives_and_quotes_measured_figures():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Why coopsim, and when not"):]
    section = section[:section.index("\n## ", 3)]
    for name in ("Stage", "ARGoS", "Webots", "CoppeliaSim", "IR-SIM", "3D is young",
                 "ROS 2 without rviz2 and Nav2 tried", "3D sensing costs on 2 cores",
                 "Python's speed limits"):
        assert name in section, name
    performance = (ROOT / "docs" / "performance.md").read_text()
    table = performance[performance.index("## Headline figures"):]
    table = table[:table.index("\n## ")]
    # each figure the section quotes is a row of docs/performance.md's headline table, whose
    # benchmark tests/arch/test_figures_named.py checks; the section names that benchmark too
    figures = ("0.999x", "14.4 ms", "242 MiB", "376 MiB", "40 µs", "3,450 steps per CPU s",
               "1.15 M agent-steps/s", "1.69 M", "8.6 bytes", "799x", "8.77x", "37.1x", "2.99x",
               "1.13", "1.89", "1.28", "1.22", "21.7 µs", "44.0 µs", "22,500", "44.6 %", "1.06x",
               "19.4-23.7 s", "1.37x", "5.11x")
    quoted = [figure for figure in figures if figure in section]
    assert len(quoted) >= 5, quoted
    for figure in quoted:
        assert figure in table, figure
    for benchmark in ("`step.Step.", "`net.RoundTrip.", "`env.Batched.", "`recording.",
                      "`peers.Ground.", "`step.SmallWorld."):
        assert benchmark in section, benchmark
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "the coopsim authors" in (ROOT / "LICENSE").read_text()
