"""Robot ownership in every shipped client: a robot owned by one connection (the Python client)
refuses the C, JavaScript and Octave clients' motion commands with error 11 naming the owner,
shown as such; each client's claim helper with force takes it over, drives it and releases it.
"""

from __future__ import annotations

import re

import pytest

from coopsim.client import Client, RemoteError

from test_clients import (OCTAVE, c_build, js_dir, live, octave_dir,  # noqa: F401
                          run_process)

OWNER = r"robot1 is owned by the connection from 127\.0\.0\.1:\d+"


def _owned_by_python(live):
    client = Client(live.network.endpoint)
    bot = client.robot("robot1")
    bot.call(4)  # claim: the Python client owns robot1
    return client, bot


def _assert_handed_over(proc, client, bot) -> None:
    """The other client was refused, forced the claim, drove, released; then Python drives."""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert re.fullmatch(f"move: error 11: {OWNER}: motion commands .*", lines[0]), lines
    assert re.fullmatch(r"claim: ok claimed by the connection from 127\.0\.0\.1:\d+ "
                        rf"\(taken from the connection from 127\.0\.0\.1:\d+\)", lines[1]), lines
    assert lines[2].startswith("move: ok"), lines
    assert lines[3] == "release: ok released", lines
    assert bot.call(4).text.startswith("claimed by"), "released: the Python client claims it"
    other = Client(client.nameserver)
    with pytest.raises(RemoteError) as info:  # and now refuses anyone else
        other.robot("robot1").motors.stop()
    assert info.value.code == 11 and re.match(OWNER, info.value.text)
    other.close()
    client.close()


@pytest.mark.slow
def test_c_client_is_refused_then_claims_with_force(live, c_build):
    client, bot = _owned_by_python(live)
    _assert_handed_over(run_process(live, [c_build / "owner", "robot1"], c_build), client, bot)


JS_OWNER = """
import { Client, OWNED } from "./coopsim.js";
const client = new Client();
const robot = await client.robot("robot1");
const say = async (what, call) => {
  try {
    console.log(`${what}: ok ${(await call()).text}`);
  } catch (err) {
    console.log(`${what}: ${err.code === OWNED ? err.message : "other " + err.message}`);
  }
};
await say("move", () => robot.modules.motors.stop());
await say("claim", () => robot.claim({ force: true }));
await say("move", () => robot.modules.motors.stop());
await say("release", () => robot.release());
client.close();
"""


def test_js_client_is_refused_then_claims_with_force(live, js_dir):
    client, bot = _owned_by_python(live)
    proc = run_process(live, ["node", "--input-type=module", "-e", JS_OWNER], js_dir)
    _assert_handed_over(proc, client, bot)


OCTAVE_OWNER = (
    "bot = coopsim_robot('robot1');"
    "try, coopsim_request(bot, 'motors.stop'); disp('move: ok'); "
    "catch err, if strcmp(err.identifier, 'coopsim:owned'), printf('move: %s\\n', err.message); "
    "else, printf('move: other %s\\n', err.message); end; end;"
    "r = coopsim_claim(bot, 1); printf('claim: ok %s\\n', r.text);"
    "r = coopsim_request(bot, 'motors.stop'); printf('move: ok %s\\n', r.text);"
    "r = coopsim_release(bot); printf('release: ok %s\\n', r.text); coopsim_close(bot);")


@pytest.mark.slow
def test_octave_client_is_refused_then_claims_with_force(live, octave_dir):
    client, bot = _owned_by_python(live)
    proc = run_process(live, [*OCTAVE, "--eval", OCTAVE_OWNER], octave_dir)
    _assert_handed_over(proc, client, bot)
