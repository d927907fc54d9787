"""docs/tutorial.md works as written: its files are written, its shell blocks run in order in a
folder that holds the repository's exercises, clients, scenarios, worlds and virtual
environment, and each output it shows appears in what the block before it printed.

Conventions of the tutorial this relies on: a code block whose first line is a comment naming a
file (``# go_straight.py: ...``, ``% my_target.m: ...``) is that file's text; a ``sh`` block is
run by bash, as in one terminal (the virtual environment activated in step 1 stays active); a
``text`` block right after a ``sh`` block is output it must print. The one line not run is the
virtual environment's creation (the tests run inside it already); ``coopsim run`` is given
``--port 0``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from usecasehelpers import ROOT

DOC = ROOT / "docs" / "tutorial.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
NAMED = re.compile(r"^(?:#|%|//|/\*)\s*([\w.]+):")
LINKED = ("exercises", "clients", "scenarios", "worlds")
NEEDS = {"octave-cli": "Octave", "cc": "a C compiler", "node": "Node.js"}
#: The tutorial's runs use the default port (10000); here a port the OS picks, so that this
#: test and any other run on the machine never meet.
ANY_PORT = re.compile(r"\bcoopsim run\b")


def blocks() -> list[tuple[str, str]]:
    return BLOCK.findall(DOC.read_text())


def test_the_tutorial_has_its_files_and_commands():
    kinds = [kind for kind, _ in blocks()]
    named = [NAMED.match(body).group(1) for _, body in blocks() if NAMED.match(body)]
    assert named == ["go_straight.py", "my_target.py", "my_target.m", "my_target.c",
                     "my_target.mjs", "my_arm.py"]
    assert kinds.count("sh") == 8 and kinds.count("text") == 7


def _workdir(tmp_path: Path) -> Path:
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))  # `. .venv/bin/activate` works
    return tmp_path


def _missing() -> list[str]:
    gone = [what for tool, what in NEEDS.items() if shutil.which(tool) is None]
    if not (ROOT / "clients" / "js" / "node_modules" / "zeromq").is_dir():
        gone.append("clients/js/node_modules (npm ci)")
    return gone


def test_the_tutorial_runs_as_written(tmp_path):
    missing = _missing()
    if missing and os.environ.get("CI"):
        pytest.fail(f"CI must have {', '.join(missing)} (see .ci/run)")
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    work = _workdir(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    output = None
    for kind, body in blocks():
        named = NAMED.match(body)
        if named:
            (work / named.group(1)).write_text(body)
        elif kind == "sh":
            # one terminal: the environment activated in step 1 stays active
            script = "\n".join([". .venv/bin/activate", *(
                line for line in body.splitlines() if not line.startswith("python3 -m venv"))])
            script = ANY_PORT.sub("coopsim run --port 0", script)
            proc = subprocess.run(["bash", "-c", script], cwd=work, env=env, timeout=300,
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL)
            output = proc.stdout + proc.stderr
            assert "Traceback" not in output and "command not found" not in output, output
        elif kind == "text":
            assert output is not None, "an output block with no command before it"
            for line in body.splitlines():
                assert line in output.splitlines(), f"{line!r} not printed:\n{output}"
            output = None


@pytest.mark.slow
def test_the_arm_section_runs_as_written(tmp_path):
    """Section 6 alone (it needs neither Octave, C nor Node.js): my_arm.py carries the cube."""
    pytest.importorskip("mujoco")
    found = blocks()
    at = next(i for i, (_, body) in enumerate(found) if body.startswith("# my_arm.py:"))
    (kind, command), (_, shown) = found[at + 1], found[at + 2]
    assert kind == "sh"
    work = _workdir(tmp_path)
    (work / "my_arm.py").write_text(found[at][1])
    # headless as on a machine without a display (with one the viewer stays open after the run)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run(["bash", "-c", ". .venv/bin/activate\n" +
                           ANY_PORT.sub("coopsim run --port 0", command)], cwd=work, env=env,
                          timeout=300, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    output = (proc.stdout + proc.stderr).splitlines()
    assert proc.returncode == 0 and all(line in output for line in shown.splitlines()), output
