"""The README's "Driving a robot" example works as written: its Python block saved as the file
its first line names, its command run from that folder (headless, on a port the OS picks, and
recorded), the controller drives from the very first step to the end of the run."""

from __future__ import annotations

import csv
import re
import shlex
import subprocess
import sys

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
                 "ROS 2 untested against ROS", "No 3D sensors or images",
                 "Python's speed limits"):
        assert name in section, name
    performance = (ROOT / "docs" / "performance.md").read_text()
    # each figure the section quotes is one docs/performance.md measured
    for figure in ("0 of 1,000 steps late, 0.999x", "p95 14.4 ms", "242 MiB (kinematic) and "
                   "376 MiB", "| 40 µs |", "| 1294 |", "2,113 steps/s", "8.6 bytes",
                   "37.9 µs (best block 37.0)", "57.6 µs (53.3)", "14,474 / 14,576 steps/s",
                   "**6.3x / 5.7x**", "44.6 % of steps late", "4,441-4,947", "tick 94.5 µs",
                   "0.16x real time on 1 thread and\n0.21x on 2", "0.016x real time",
                   "7.1 GiB peak", "1.26 M agent-steps/s", "2.1 M agent-steps/s",
                   "32,768 x 4 in 0.24 s"):
        assert figure in performance, figure
    for quoted in ("0.999x", "14.4 ms", "242-376 MiB", "40 µs", "1,300-2,100", "9 bytes",
                   "37.9 µs", "57.6 µs", "4,400-4,950", "94.5 µs", "5.7-6.3x", "44.6 %",
                   "0.16x", "0.21x", "0.016x", "7.1 GiB", "1.26 M", "2.1 M", "0.24 s"):
        assert quoted in section, quoted
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "the coopsim authors" in (ROOT / "LICENSE").read_text()
