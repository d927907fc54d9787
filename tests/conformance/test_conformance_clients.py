"""Every shipped client passes the conformance transcripts against a real `coopsim run` of the
conformance scenario and a real `coopsim replay`: coopsim's Python client, the JSON gateway, and
the C, JavaScript and Octave clients through their own transcript runners (`coopsim
conformance --client`). A transcript that disagrees with the server fails the run (exit 1) and
names the step; a server that does not answer is exit 2.

A missing toolchain skips a client's test with its reason outside CI and fails it in CI
(``CI=true``), where ``.ci/run`` installs everything.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from coopsim.conformance.transcript import SCENARIO, TRANSCRIPTS
from coopsim.model.compiled import NOTICE

from rechelpers import coopsim, run_cli

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"
START_WAIT = 60.0  # s for a child to print its endpoints (a failure, not slowness)
#: s a child that says it compiles kernels may take (a guard against a hang: a compile on a
#: machine at load 10 took over a minute)
COMPILE_WAIT = 900.0
OCTAVE = "octave-cli --no-history --quiet --no-init-file --eval conformance"

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must have it (see .ci/run)")
    pytest.skip(reason)


def _require(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        _unavailable(f"{', '.join(missing)} not installed")


class Server:
    """A ``coopsim`` child process whose stderr goes to a file (its progress lines never fill
    a pipe), and the endpoints it printed."""

    def __init__(self, log: Path, *args: str) -> None:
        self.log = log
        self.proc = subprocess.Popen(coopsim(*args), stdout=subprocess.DEVNULL,
                                     stderr=log.open("w"), stdin=subprocess.DEVNULL,
                                     env={**os.environ, "DISPLAY": ""})

    def printed(self, pattern: str) -> str:
        """The first match of ``pattern``'s group 1 on the child's stderr, once printed."""
        start = time.monotonic()
        while self.proc.poll() is None:
            text = self.log.read_text()
            found = re.search(pattern, text)
            if found:
                return found.group(1)
            compiling = NOTICE.strip() in text  # progress, however long the machine takes
            if time.monotonic() - start > (COMPILE_WAIT if compiling else START_WAIT):
                break
            time.sleep(0.05)
        raise AssertionError(f"{self.proc.args} printed no {pattern!r}: {self.log.read_text()}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """``coopsim run`` of the conformance scenario, with its JSON gateway: (nameserver, gateway)."""
    server = Server(tmp_path_factory.mktemp("live") / "stderr", "run", str(SCENARIO),
                    "--no-controllers", "--headless", "--port", "0", "--json-port", "0")
    try:
        gateway = server.printed(r"json gateway: (\S+)")
        yield server.printed(r"name server: (tcp://\S+)"), gateway
    finally:
        server.stop()


@pytest.fixture(scope="module")
def replay(tmp_path_factory):
    """``coopsim replay`` of the committed format-1 sample, and a ``coopsim gateway`` in front."""
    folder = tmp_path_factory.mktemp("replay")
    server = Server(folder / "stderr", "replay", str(ROOT / "recordings" / "sample.mcap"),
                    "--headless", "--paused", "--port", "0")
    gateway = None
    try:
        nameserver = server.printed(r"name server: (tcp://\S+)")
        gateway = Server(folder / "gateway", "gateway", nameserver, "--json-port", "0")
        yield nameserver, gateway.printed(r"json gateway: (\S+) ->")
    finally:
        if gateway:
            gateway.stop()
        server.stop()


@pytest.fixture(scope="module")
def c_runner(tmp_path_factory):
    """clients/c's conformance runner, built with -Werror in a scratch copy."""
    _require("cc", "make")
    build = tmp_path_factory.mktemp("c")
    for f in (CLIENTS / "c").iterdir():
        if f.suffix in (".c", ".h") or f.name == "Makefile":
            shutil.copy(f, build)
    proc = subprocess.run(["make", "CFLAGS=-O2 -Werror", "conformance"], cwd=build,
                          capture_output=True, text=True)
    if proc.returncode and "zmq.h" in proc.stderr + proc.stdout:
        _unavailable("libzmq3-dev / libmsgpuck-dev headers not installed")
    assert proc.returncode == 0, f"make failed (warnings are errors here):\n{proc.stderr}"
    return str(build / "conformance")


def _client_args(client: str, request) -> tuple[list[str], Path | None]:
    """The ``coopsim conformance`` options (and working folder) of one client."""
    if client == "c":
        return ["--client", request.getfixturevalue("c_runner")], None
    if client == "js":
        _require("node")
        if not (CLIENTS / "js" / "node_modules" / "zeromq").is_dir():
            _unavailable("clients/js/node_modules missing: run `npm ci` in clients/js")
        return ["--client", f"node {CLIENTS / 'js' / 'conformance.js'}"], None
    if client == "octave":
        _require("octave-cli")
        return ["--client", OCTAVE], CLIENTS / "octave"
    return [], None


def _passes(result, at_least: int) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    passed = int(re.search(r"(\d+) passed, 0 failed", result.stdout).group(1))
    assert passed >= at_least, result.stdout


@pytest.mark.parametrize("client", ["python", "gateway", "c", "js", "octave"])
def test_every_client_passes_the_transcripts_on_a_live_run(live, client, request):
    nameserver, gateway = live
    args, cwd = (["--gateway", gateway], None) if client == "gateway" else _client_args(
        client, request)
    result = run_cli("conformance", nameserver, *args, cwd=cwd, timeout=600)
    _passes(result, 110)  # 01 to 03 (and 04 raw, 07 gateway lines where the transport can)


@pytest.mark.parametrize("client", ["python", "gateway", "c", "js", "octave"])
def test_every_client_passes_the_transcripts_on_a_replay(replay, client, request):
    nameserver, gateway = replay
    args, cwd = (["--gateway", gateway], None) if client == "gateway" else _client_args(
        client, request)
    result = run_cli("conformance", nameserver, *args, cwd=cwd, timeout=600)
    _passes(result, 30)  # 01 and 06


def test_the_gateway_idle_timeout_is_error_9(live, tmp_path):
    gateway = Server(tmp_path / "gateway", "gateway", live[0], "--json-port", "0",
                     "--idle-timeout", "2")
    try:
        address = gateway.printed(r"json gateway: (\S+) ->")
        result = run_cli("conformance", live[0], "--gateway", address, "--only", "07_gateway",
                         "--offer", "idle_timeout", "-v", timeout=300)
    finally:
        gateway.stop()
    _passes(result, 13)
    assert result.stdout.endswith(" 0 skipped\n")  # the idle step ran too


def test_a_transcript_the_server_disagrees_with_fails_and_names_the_step(live, tmp_path):
    folder = tmp_path / "drifted"
    shutil.copytree(TRANSCRIPTS, folder)
    names = folder / "01_nameserver.jsonl"
    names.write_text(names.read_text().replace('"expect": [0, "/nameserver", 0, [14], []]',
                                               '"expect": [0, "/nameserver", 0, [15], []]', 1))
    result = run_cli("conformance", live[0], "--transcripts", str(folder), "--only",
                     "01_nameserver", timeout=300)
    assert result.returncode == 1
    assert "FAIL 01_nameserver.jsonl:2 hello: reply[3][0]: expected 15, got 14" in result.stdout
    assert re.search(r"\d+ passed, 1 failed", result.stdout)


def test_no_server_is_exit_2():
    result = run_cli("conformance", "tcp://127.0.0.1:1", "--timeout", "1")
    assert result.returncode == 2 and "cannot reach the server" in result.stderr
    result = run_cli("conformance", "--gateway", "127.0.0.1:1")
    assert result.returncode == 2
    assert "the JSON gateway at 127.0.0.1:1: cannot reach the server" in result.stderr


def test_an_unknown_transcript_name_is_refused():
    result = run_cli("conformance", "--only", "99_nothing")
    assert result.returncode == 2 and "no transcript 99_nothing" in result.stderr


def test_scenario_prints_the_conformance_scenario():
    result = run_cli("conformance", "--scenario")
    assert result.returncode == 0 and Path(result.stdout.strip()) == SCENARIO
    assert run_cli("check", result.stdout.strip()).returncode == 0


def test_the_flight_transcript_passes_on_a_live_flying_robot(tmp_path):
    """``08_flight`` (rotors, imu, mocap, altimeter) and ``09_arms`` (joints, tool, force,
    pose) against ``coopsim run`` of the 3D scenario: a Crazyflie and an IRB 120 on the mujoco
    engine, through coopsim's Python client."""
    scenario = run_cli("conformance", "--flight-scenario").stdout.strip()
    server = Server(tmp_path / "stderr", "run", scenario, "--no-controllers", "--headless",
                    "--port", "0")
    try:
        nameserver = server.printed(r"name server: (tcp://\S+)")
        result = run_cli("conformance", nameserver, "--only", "08_flight", "-v")
        arms = run_cli("conformance", nameserver, "--only", "09_arms", "-v")
        shared = run_cli("conformance", nameserver, "--only", "11_shared", "-v")
    finally:
        server.stop()
    _passes(result, 13)
    _passes(arms, 24)  # protocol 7: with the arm's action ownership steps
    _passes(shared, 8)  # protocol 10: shared control's errors on /squads (14: a person's)
