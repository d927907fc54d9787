"""The C and JavaScript clients wait for a lockstep reply as long as the simulator is there:
a simulator process stopped for longer than their timeout (SIGSTOP) makes a step late, not an
error; a simulator that dies ends the wait at once with error 9 saying its connection closed.
(The Octave client keeps its fixed deadline: its zeromq package has no socket monitor.)"""

from __future__ import annotations

import os
import signal
import subprocess
import threading

import pytest

from test_clients import c_build, js_dir  # noqa: F401 -- fixtures
from nethelpers import simulator_process

STOPPED = 2.0  # s the simulator stays stopped; the clients' timeout is 300 ms

C_LOOP = r"""
#include <stdio.h>
#include "coopsim.h"
int main(void)
{
    coopsim_client c;
    coopsim_robot bot;
    coopsim_msg r;
    double v[2] = {0.1, 0.1};
    coopsim_msg_init(&r);
    if (coopsim_open(&c, NULL, 300) != 0 || coopsim_robot_open(&c, &bot, "robot1", &r) != 0)
        return 1;
    for (;;) {
        int rc = coopsim_invoke(&c, &bot, "motors", "set_speeds", "", NULL, 0, v, 2, &r);
        printf("%d %s\n", rc, r.text);
        fflush(stdout);
        if (rc)
            break;
    }
    coopsim_robot_close(&bot);
    coopsim_msg_free(&r);
    coopsim_close(&c);
    return 0;
}
"""

JS_LOOP = """
import { Client } from "./coopsim.js";
const client = new Client({ timeout: 300 });
const robot = await client.robot("robot1");
for (;;) {
  try {
    const reply = await robot.modules.motors.set_speeds(0.1, 0.1);
    console.log(`0 ${reply.text}`);
  } catch (err) {
    console.log(`${err.code} ${err.text}`);
    break;
  }
}
client.close();
"""


def _drive_through_a_stop(argv, cwd) -> list[str]:
    """Run the loop; stop the simulator for STOPPED s, continue it, then kill it; its lines."""
    with simulator_process() as (sim, endpoint):
        env = dict(os.environ, COOPSIM_NAMESERVER=endpoint)
        proc = subprocess.Popen([str(a) for a in argv], cwd=cwd, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        lines: list[str] = []
        try:
            lines += [proc.stdout.readline() for _ in range(20)]
            os.kill(sim.pid, signal.SIGSTOP)
            threading.Event().wait(STOPPED)
            lines.append("stopped\n")
            os.kill(sim.pid, signal.SIGCONT)
            lines += [proc.stdout.readline() for _ in range(20)]
            sim.kill()
            out, err = proc.communicate(timeout=60)
            lines += out.splitlines(keepends=True)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, err
    return [line.rstrip("\n") for line in lines]


def _assert_waited_then_failed_fast(lines: list[str]) -> None:
    stop = lines.index("stopped")
    assert lines[:stop] and all(line == "0 lockstep" for line in lines[:stop]), lines[:stop]
    after = lines[stop + 1:]
    assert all(line == "0 lockstep" for line in after[:20]), after[:20]
    assert after[-1].startswith("9 no reply"), after
    assert after[-1].endswith("its connection closed (the server stopped or crashed)"), after


@pytest.mark.slow
def test_c_waits_through_a_stopped_simulator(c_build):
    (c_build / "loop.c").write_text(C_LOOP)
    build = subprocess.run(["cc", "-O2", "-Werror", "-Wall", "-std=c11", "-o", "loop", "loop.c",
                            "coopsim.o", "-lzmq", "-lmsgpuck"], cwd=c_build,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    _assert_waited_then_failed_fast(_drive_through_a_stop([c_build / "loop"], c_build))


def test_js_waits_through_a_stopped_simulator(js_dir):
    lines = _drive_through_a_stop(["node", "--input-type=module", "-e", JS_LOOP], js_dir)
    _assert_waited_then_failed_fast(lines)


@pytest.mark.parametrize("ignored", [None])
def test_patience_is_documented_for_every_client(ignored):
    from clienthelpers import CLIENTS

    assert "waits on while" in (CLIENTS / "c" / "coopsim.h").read_text()
    assert "waited for while the server's connection is up" in \
        (CLIENTS / "js" / "coopsim.js").read_text()
