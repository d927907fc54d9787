"""The C, JavaScript and Octave clients drive a live simulator in lockstep.

Each test starts a simulation on free ports, runs the language's example wander controller for a
fixed number of steps as a real process, and checks through ``/sim`` that the robot moved and
ended clear of every wall and object. A missing toolchain skips the test with its reason outside
CI and fails it in CI (``CI=true``), where ``.ci/run`` installs everything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from coopsim.formats.files import load
from coopsim.app.run import Run, RunOptions

from clienthelpers import CLIENTS, ROOT, SCENARIO, STEPS, assert_wandered  # noqa: F401

@pytest.fixture
def live(tmp_path):
    """A running lockstep simulation of one robot in the arena."""
    path = tmp_path / "one.scenario"
    path.write_text(SCENARIO)
    with Run(load(str(path)), RunOptions(port=0, controllers=False)) as run:
        run.start()
        yield run


def require(*tools: str) -> None:
    """Skip (or, in CI, fail) unless every tool is on PATH."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        _unavailable(f"{', '.join(missing)} not installed")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must have it (see .ci/run)")
    pytest.skip(reason)


def run_controller(live: Run, argv: list, cwd: Path, timeout: float = 60) -> str:
    """Run a controller process against ``live``; assert it exits 0; return its stderr."""
    env = dict(os.environ, COOPSIM_NAMESERVER=live.network.endpoint, COOPSIM_ROBOT="robot1")
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{argv} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    return proc.stderr


# -- C -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def c_wander(tmp_path_factory):
    """The C example built with -Werror in a scratch copy of clients/c."""
    require("cc", "make")
    build = tmp_path_factory.mktemp("c")
    for f in (CLIENTS / "c").iterdir():
        if f.suffix in (".c", ".h") or f.name == "Makefile":
            shutil.copy(f, build)
    probe = subprocess.run(["cc", "-E", "-x", "c", "-", "-o", os.devnull], input=(
        "#include <zmq.h>\n#include <msgpuck.h>\n"), capture_output=True, text=True)
    if probe.returncode:
        _unavailable("libzmq3-dev / libmsgpuck-dev headers not installed")
    proc = subprocess.run(["make", "CFLAGS=-O2 -Werror"], cwd=build, capture_output=True,
                          text=True)
    assert proc.returncode == 0, f"make failed (warnings are errors here):\n{proc.stderr}"
    return build / "wander"


def test_c_wander_drives_in_lockstep(live, c_wander):
    run_controller(live, [c_wander, "robot1", STEPS], c_wander.parent)
    assert_wandered(live)


def test_c_unknown_robot_is_a_clear_error(live, c_wander):
    env = dict(os.environ, COOPSIM_NAMESERVER=live.network.endpoint)
    proc = subprocess.run([c_wander, "robotX", "5"], env=env, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 1
    assert "error 5" in proc.stderr and "/robotX" in proc.stderr


# -- JavaScript ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def js_dir():
    """clients/js with its dependencies installed (``npm ci``)."""
    require("node")
    folder = CLIENTS / "js"
    if not (folder / "node_modules" / "zeromq").is_dir():
        _unavailable("clients/js/node_modules missing: run `npm ci` in clients/js")
    return folder


def test_js_wander_drives_in_lockstep(live, js_dir):
    run_controller(live, ["node", "wander.js", "robot1", STEPS], js_dir)
    assert_wandered(live)


def test_js_unit_and_live_tests_pass(live, js_dir):
    """``node --test``: encoding against the protocol doc's bytes, plus calls to the live run."""
    run_controller(live, ["node", "--test"], js_dir)


# -- Octave --------------------------------------------------------------------------------------

OCTAVE = ["octave-cli", "--no-history", "--quiet", "--no-init-file"]


@pytest.fixture(scope="module")
def octave_dir():
    """clients/octave, once Octave and its zeromq package are known to load."""
    require("octave-cli")
    probe = subprocess.run([*OCTAVE, "--eval", "pkg load zeromq"], capture_output=True,
                           text=True, timeout=60)
    if probe.returncode:
        _unavailable(f"Octave's zeromq package does not load (octave-zeromq): {probe.stderr}")
    return CLIENTS / "octave"


def test_octave_wander_drives_in_lockstep(live, octave_dir):
    run_controller(live, [*OCTAVE, "--eval", f"wander robot1 {STEPS}"], octave_dir)
    assert_wandered(live)


def test_octave_packs_the_documented_bytes_and_raises_error_replies(live, octave_dir):
    script = (
        "disp(sprintf('%02x', coopsim_pack(1, '/robot1/motors')));"
        "bot = coopsim_port('/robot1');"
        "try, coopsim_request(bot, 100, '', [], 0.1); catch err, disp(err.message); end;"
        "r = coopsim_request(bot, 200); disp(numel(r.data)); coopsim_close(bot);")
    env = dict(os.environ, COOPSIM_NAMESERVER=live.network.endpoint)
    proc = subprocess.run([*OCTAVE, "--eval", script], cwd=octave_dir, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert lines[0] == "9500ae2f726f626f74312f6d6f746f7273019090"  # docs/protocol.md, section 1
    assert lines[1].startswith("error 3: set_speeds takes 2 data")
    assert lines[2].strip() == "11"
