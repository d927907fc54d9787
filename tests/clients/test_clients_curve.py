"""The C, JavaScript and Octave clients drive a run whose servers are CurveZMQ servers.

The run binds a non-loopback address of this machine (tests/curvehelpers.py) with keys; each
client gets a listed client's keys as a launched controller does ($COOPSIM_SERVER_KEY and
$COOPSIM_CLIENT_KEY files) or from a client folder through its own API, and wanders; the same
client without keys gets no reply (a clear timeout error, exit 1). Toolchains are found, and
skipped outside CI when missing, as in test_clients.py.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from coopsim.formats.files import load
from coopsim.app.run import Run, RunOptions

from clienthelpers import SCENARIO, STEPS, assert_wandered
from curvehelpers import keys, net  # noqa: F401 -- fixtures
from test_clients import OCTAVE, c_build, js_dir, octave_dir  # noqa: F401 -- fixtures

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture
def live(tmp_path, net, keys):
    """A lockstep run of one robot in the arena, every server a Curve server."""
    path = tmp_path / "one.scenario"
    path.write_text(SCENARIO)
    with Run(load(str(path)), RunOptions(port=0, controllers=False, bind=net.host,
                                         keys=str(keys))) as run:
        run.start()
        yield run


def run_client(live: Run, argv: list, cwd: Path, keys: Path | None, timeout: float = 90):
    """Run a client process against ``live``, with client folder ``keys`` in the environment
    variables (None: no keys at all)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("COOPSIM_SERVER_KEY", "COOPSIM_CLIENT_KEY")}
    env.update(COOPSIM_NAMESERVER=live.network.endpoint, COOPSIM_ROBOT="robot1")
    if keys is not None:
        env.update(COOPSIM_SERVER_KEY=str(keys / "server.key"),
                   COOPSIM_CLIENT_KEY=str(keys / "client.key_secret"))
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def assert_ok(proc) -> None:
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stdout}{proc.stderr}"


def assert_no_reply(proc, *words: str) -> None:
    assert proc.returncode == 1, f"exit {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    for word in words:
        assert word in proc.stderr, proc.stderr


def alice(keys: Path) -> Path:
    return keys / "clients" / "alice"


# -- C -------------------------------------------------------------------------------------------

def test_c_wander_drives_with_keys_from_the_environment(live, keys, c_build):
    assert_ok(run_client(live, [c_build / "wander", "robot1", STEPS], c_build, alice(keys)))
    assert_wandered(live)


def test_c_reads_keys_from_a_client_folder_and_gets_nothing_without(live, keys, c_build):
    proc = run_client(live, [c_build / "simstate", alice(keys)], c_build, None)
    assert_ok(proc)
    assert '"robot1"' in proc.stdout
    assert_no_reply(run_client(live, [c_build / "simstate"], c_build, None), "error 9")


def test_c_names_a_missing_key_file(live, keys, c_build, tmp_path):
    proc = run_client(live, [c_build / "simstate", tmp_path], c_build, None)
    assert_no_reply(proc, f"simstate: {tmp_path}/server.key: No such file")


# -- JavaScript ----------------------------------------------------------------------------------

def test_js_wander_drives_with_keys_from_the_environment(live, keys, js_dir):
    assert_ok(run_client(live, ["node", "wander.js", "robot1", STEPS], js_dir, alice(keys)))
    assert_wandered(live)


def test_js_unit_and_live_tests_pass_behind_curve(live, keys, js_dir):
    assert_ok(run_client(live, ["node", "--test"], js_dir, alice(keys)))


JS_STATUS = """
import { Client } from "./coopsim.js";
const client = new Client({ keys: process.argv[1] || null, timeout: 3000 });
try {
  console.log((await client.sim(1)).params[4]);
} catch (err) {
  console.error(`status: ${err.message}`);
  process.exitCode = 1;
} finally {
  client.close();
}
"""


def test_js_takes_a_client_folder_and_gets_nothing_without(live, keys, js_dir):
    folder = run_client(live, ["node", "--input-type=module", "-e", JS_STATUS, alice(keys)],
                        js_dir, None)
    assert_ok(folder)
    assert folder.stdout.strip() == "1"  # one robot
    assert_no_reply(run_client(live, ["node", "--input-type=module", "-e", JS_STATUS], js_dir,
                               None), "error 9: ")


# -- Octave --------------------------------------------------------------------------------------

def test_octave_wander_drives_with_keys_from_the_environment(live, keys, octave_dir):
    assert_ok(run_client(live, [*OCTAVE, "--eval", f"wander robot1 {STEPS}"], octave_dir,
                         alice(keys)))
    assert_wandered(live)


def test_octave_takes_a_client_folder_and_gets_nothing_without(live, keys, octave_dir):
    script = ("try, {keys} bot = coopsim_robot('robot1'); r = coopsim_request(bot, 'sonar.read');"
              " disp(numel(r.data)); coopsim_close(bot); "
              "catch err, fprintf(2, '%s\\n', err.message); exit(1); end")
    folder = run_client(live, [*OCTAVE, "--eval", script.format(
        keys=f"coopsim_keys('{alice(keys)}');")], octave_dir, None)
    assert_ok(folder)
    assert folder.stdout.strip() == "11"
    assert_no_reply(run_client(live, [*OCTAVE, "--eval", script.format(keys="")], octave_dir,
                               None), "error 9: ")
