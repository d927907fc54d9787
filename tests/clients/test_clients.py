"""The C, JavaScript and Octave clients drive a live simulator in lockstep.

Each test starts a simulation on free ports and runs the language's code as a real process. The
wander tests run the example controller for a fixed number of steps and check through ``/sim``
that the robot moved and ended clear of every wall and object. The lookup tests check that each
client finds command ids by module and name in the robot's own table (command 3), the ids the
server declares, and that a name the robot lacks is a clear error 5. A missing toolchain skips
the test with its reason outside CI and fails it in CI (``CI=true``), where ``.ci/run`` installs
everything.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from dataclasses import replace
from pathlib import Path

import msgpack
import pytest
import zmq

from coopsim.client import Client
from coopsim.formats.files import load
from coopsim.app.run import Run, RunOptions
from coopsim.model.commands import Command

from clienthelpers import (CLIENTS, ROOT, SCENARIO, STEPS, assert_wandered,  # noqa: F401
                           robot_pose, wander_reference)
from nethelpers import wait_until

CROWD = 200
LOOKED_UP = ["motors.set_speeds", "sonar.read", "motors.stop", "detach"]
# What every client says when a robot lacks a module or a command (error 5, unknown name).
NO_COMMAND = ("error 5: /robot1 has no command 'motors.fly' "
              "(motors has: set_speeds, set_power, stop, read)")
NO_MODULE = ("error 5: /robot1 has no module 'wings' "
             "(it has: motors, sonar, target, odometry, gps, compass, bumper)")


@pytest.fixture
def live(tmp_path):
    """A running lockstep simulation of one robot in the arena."""
    path = tmp_path / "one.scenario"
    path.write_text(SCENARIO)
    with Run(load(str(path)), RunOptions(port=0, controllers=False)) as run:
        run.start()
        yield run


@pytest.fixture
def waiting(tmp_path):
    """``live``, but its first step waits for a controller (``--wait-for 1``): where a robot
    ends then does not depend on how long its controller took to start."""
    path = tmp_path / "waiting.scenario"
    path.write_text(SCENARIO)
    with Run(load(str(path)), RunOptions(port=0, controllers=False, wait_for=1)) as run:
        run.start()
        yield run


@pytest.fixture
def reference(tmp_path):
    """Where robot1 ends after the languages' wander decisions sent as two plain requests a
    step, on a run of its own like ``waiting`` (see clienthelpers.wander_reference)."""
    path = tmp_path / "reference.scenario"
    path.write_text(SCENARIO)
    with Run(load(str(path)), RunOptions(port=0, controllers=False, wait_for=1)) as run:
        run.start()
        return wander_reference(run)


@pytest.fixture
def crowd(tmp_path):
    """A paused simulation of 200 robots on a 20 x 20 m floor: its /sim state JSON is ~70 KB."""
    (tmp_path / "big.world").write_text("[FLOOR]\nsize 20 20 0.1\n")
    robots = [f"[ROBOT_{n}]\ntype single\nname crowd{n}\n"
              f"position {-9 + (n - 1) % 20 * 0.9:.1f} {-9 + (n - 1) // 20 * 0.9:.1f} 0\n"
              for n in range(1, CROWD + 1)]
    path = tmp_path / "crowd.scenario"
    path.write_text("[WORLD]\nfile big.world\n\n" + "\n".join(robots))
    with Run(load(str(path)), RunOptions(port=0, controllers=False)) as run:
        run.stepper.pause()  # 200 robots need not step for their state to be read
        run.start()
        yield run


@pytest.fixture
def renumbered(live):
    """``/renumbered`` in ``live``'s name server: a fake robot whose command table (command 3,
    all it answers) gives robot1's module commands new ids, as plugin modules may declare: a
    client that hard-coded the built-in ids would print those. Yields its ids by name."""
    commands = [replace(c, id=c.id + 4000) if c.module else c for c in robot1_commands(live)]
    table = "\n".join(c.describe() for c in commands)
    sock = zmq.Context.instance().socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    endpoint = f"tcp://127.0.0.1:{sock.bind_to_random_port('tcp://127.0.0.1')}"
    done = threading.Event()
    server = threading.Thread(target=serve_table, args=(sock, table, done), daemon=True)
    server.start()
    live.network.names.register("/renumbered", endpoint)
    yield ids_by_name(commands)
    done.set()
    server.join(5)
    sock.close()


#: The params of every hello /renumbered received: each client says its version when it opens a
#: robot (docs/protocol.md, Changelog).
HELLOS: list = []


def serve_table(sock, table: str, done: threading.Event) -> None:
    """Answer hello (noting its params in HELLOS) and command 3 with ``table``, anything else
    with error 2, until ``done``."""
    while not done.is_set():
        if not sock.poll(50):
            continue
        *route, payload = sock.recv_multipart()
        _, _, command, params, _ = msgpack.unpackb(payload)
        if command == 0:
            HELLOS.append(params)
        reply = [0, table, 3, [table.count("\n") + 1], []] if command == 3 else [
            0, "/renumbered", 0, [3], []] if command == 0 else [
            2, "this fake robot answers hello and command 3 only", command, [], []]
        sock.send_multipart([*route, msgpack.packb(reply)])


def robot1_commands(live: Run) -> list:
    """robot1's command table, from its own command 3."""
    with Client(live.network.endpoint) as client:
        text = client.robot("robot1").call(3).text
    return [Command.parse(line) for line in text.splitlines()]


def ids_by_name(commands: list) -> dict:
    """'module.name' (or 'name' for the commands every robot has) -> id."""
    return {f"{c.module}.{c.name}" if c.module else c.name: c.id for c in commands}


def assert_ids(stdout: str, declared: dict) -> None:
    """``stdout`` is one line `module.name id` per LOOKED_UP name, with the declared ids."""
    assert stdout.split("\n")[:len(LOOKED_UP)] == [f"{k} {declared[k]}" for k in LOOKED_UP]


def assert_finds_ids(live: Run, renumbered: dict, ids) -> None:
    """``ids(robot)`` (a finished process printing LOOKED_UP's ids) prints the ids robot1
    declares, and the other ids /renumbered declares; it said hello with protocol 14 first."""
    HELLOS.clear()
    for robot, declared in (("robot1", ids_by_name(robot1_commands(live))),
                            ("renumbered", renumbered)):
        proc = ids(robot)
        assert proc.returncode == 0, proc.stderr
        assert_ids(proc.stdout, declared)
    assert renumbered["sonar.read"] != ids_by_name(robot1_commands(live))["sonar.read"]
    assert HELLOS == [[14]]


def test_python_says_protocol_7_when_it_opens_a_robot(live, renumbered):
    HELLOS.clear()
    with Client(live.network.endpoint) as client:
        bot = client.robot("renumbered")
    assert HELLOS == [[14]] and "motors" in bot.module_labels


def require(*tools: str) -> None:
    """Skip (or, in CI, fail) unless every tool is on PATH."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        _unavailable(f"{', '.join(missing)} not installed")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must have it (see .ci/run)")
    pytest.skip(reason)


def run_controller(live: Run, argv: list, cwd: Path, timeout: float = 60, env=None) -> str:
    """Run a controller process against ``live`` (``env``: more environment variables); assert
    it exits 0; return its stderr."""
    proc = run_process(live, argv, cwd, timeout, env)
    assert proc.returncode == 0, f"{argv} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    return proc.stderr


def run_process(live: Run, argv: list, cwd: Path, timeout: float = 60, env=None):
    """Run a process against ``live`` (its name server and robot1 in the environment, with
    ``env``'s variables)."""
    env = dict(os.environ, COOPSIM_NAMESERVER=live.network.endpoint, COOPSIM_ROBOT="robot1",
               **(env or {}))
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def assert_clear_error(proc, *sentences: str) -> None:
    """The process failed (exit 1) and its stderr says each sentence."""
    assert proc.returncode == 1, f"exit {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    for sentence in sentences:
        assert sentence in proc.stderr, proc.stderr


def held_and_stepped(live: Run, argv: list, cwd: Path) -> list[tuple[int, int, bool]]:
    """Run a controller looping "motion command, print `i step queued`, await its step" on
    ``live``'s robot1 (its first step waiting for it): five free steps, then the run paused and
    stepped by hand three times (each after a queued reply), then resumed for five more; the
    lines it printed, as (iteration, the reply's step, queued)."""
    env = dict(os.environ, COOPSIM_NAMESERVER=live.network.endpoint)
    proc = subprocess.Popen([str(a) for a in argv], cwd=cwd, env=env, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    lines: list = []

    def read():
        for line in proc.stdout:
            i, step, queued = line.split()
            lines.append((int(i), int(step), queued == "1"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        with Client(live.network.endpoint) as operator:
            sim = operator.sim()
            wait_until(lambda: len(lines) >= 5 or proc.poll() is not None, timeout=60)
            sim.pause()
            held = sim.status()["step"]
            for _ in range(3):  # a queued reply, then one step by hand
                wait_until(lambda: (lines and lines[-1][1:] == (held, True))
                           or proc.poll() is not None, timeout=60)
                sim.step(1)
                held += 1
                wait_until(lambda: sim.status()["step"] == held)
            sim.resume()
            resumed = len(lines)
            wait_until(lambda: len(lines) >= resumed + 5 or proc.poll() is not None, timeout=60)
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=60)
        reader.join(10)
    assert len(lines) >= 13, f"{argv}: {lines}\n{err}"
    return lines


def assert_one_iteration_a_step(lines: list) -> None:
    """Iteration i's command was used by step i + 1 throughout: a queued reply (step i) was
    waited for, never sent past; three of them came while the run was held."""
    assert all(step == i + (not queued) for i, step, queued in lines), str(lines)
    assert sum(queued for _, _, queued in lines) >= 3, str(lines)


# -- C -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def c_build(tmp_path_factory):
    """The C examples (wander, ids, simstate) built with -Werror in a scratch copy of clients/c."""
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
    return build


@pytest.fixture(scope="module")
def c_wander(c_build):
    return c_build / "wander"


@pytest.mark.slow
def test_c_wander_drives_in_lockstep(waiting, c_wander, reference):
    """One exchange a step (coopsim_exchange): the same path as two plain requests a step."""
    run_controller(waiting, [c_wander, "robot1", STEPS], c_wander.parent)
    assert_wandered(waiting)
    assert robot_pose(waiting) == reference


C_LOOP = r"""
#include <stdio.h>
#include <string.h>
#include "coopsim.h"

int main(void)
{
    coopsim_client c;
    coopsim_robot bot;
    coopsim_msg r, w;
    double v[2] = {0.1, 0.1};
    coopsim_msg_init(&r);
    coopsim_msg_init(&w);
    if (coopsim_open(&c, NULL, 5000) != 0 || coopsim_robot_open(&c, &bot, "robot1", &r) != 0)
        return 1;
    int set = coopsim_id(&bot, "motors", "set_speeds", &r);
    for (long i = 0;; i++) {
        if (coopsim_call(&c, bot.sock, set, "", NULL, 0, v, 2, &r) != 0)
            return 1;
        printf("%ld %lld %d\n", i, (long long)r.params[0],
               strncmp(r.text, COOPSIM_QUEUED, strlen(COOPSIM_QUEUED)) == 0);
        fflush(stdout);
        if (coopsim_await_step(&c, &r, &w) != 0)
            return 1;
    }
}
"""


@pytest.mark.slow
def test_c_loop_takes_one_iteration_a_step_while_the_run_is_paused_and_stepped(waiting, c_build):
    """coopsim_await_step after each motion command: a paused run holds the loop, each step by
    hand moves it one iteration (the queued reply's command is used by the next step)."""
    (c_build / "loop.c").write_text(C_LOOP)
    proc = subprocess.run(["cc", "-std=c11", "-O2", "-Wall", "-Werror", "-o", "loop", "loop.c",
                           "coopsim.o", "-lzmq", "-lmsgpuck", "-lm"], cwd=c_build,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert_one_iteration_a_step(held_and_stepped(waiting, [c_build / "loop"], c_build))


@pytest.mark.slow
def test_c_unknown_robot_is_a_clear_error(live, c_wander):
    env = dict(os.environ, COOPSIM_NAMESERVER=live.network.endpoint)
    proc = subprocess.run([c_wander, "robotX", "5"], env=env, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 1
    assert "error 5" in proc.stderr and "/robotX" in proc.stderr


@pytest.mark.slow
def test_c_finds_ids_by_module_and_name(live, renumbered, c_build):
    assert_finds_ids(live, renumbered,
                     lambda robot: run_process(live, [c_build / "ids", robot, *LOOKED_UP], c_build))


@pytest.mark.slow
def test_c_unknown_module_or_command_is_a_clear_error(live, c_build):
    assert_clear_error(run_process(live, [c_build / "ids", "robot1", "motors.fly"], c_build),
                       NO_COMMAND)
    assert_clear_error(run_process(live, [c_build / "ids", "robot1", "wings.read"], c_build),
                       NO_MODULE)


@pytest.mark.slow
def test_c_reads_a_large_sim_state_whole(crowd, c_build):
    """/sim state of 200 robots is far over the old 8 KiB cap (and over 64 KiB): none is cut."""
    proc = run_process(crowd, [c_build / "simstate"], c_build)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) > 65536
    state = json.loads(proc.stdout)
    with Client(crowd.network.endpoint) as client:
        assert state == client.sim().state()  # paused: nothing changes between the two reads
    assert [r["name"] for r in state["robots"]] == [f"crowd{n}" for n in range(1, CROWD + 1)]


# -- JavaScript ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def js_dir():
    """clients/js with its dependencies installed (``npm ci``)."""
    require("node")
    folder = CLIENTS / "js"
    if not (folder / "node_modules" / "zeromq").is_dir():
        _unavailable("clients/js/node_modules missing: run `npm ci` in clients/js")
    return folder


def test_js_wander_drives_in_lockstep(waiting, js_dir, reference):
    """One exchange a step (robot.exchange): the same path as two plain requests a step."""
    run_controller(waiting, ["node", "wander.js", "robot1", STEPS], js_dir)
    assert_wandered(waiting)
    assert robot_pose(waiting) == reference


# `ids ROBOT KEY...`: prints `module.name id` for each key, looked up in the robot's command
# table; any error goes to stderr as `ids: <message>` with exit 1 (the twin of the C ids program).
JS_IDS = """
import { Client } from "./coopsim.js";
const client = new Client();
try {
  const robot = await client.robot(process.argv[1]);
  for (const key of process.argv.slice(2)) {
    const [module, name] = key.includes(".") ? key.split(".") : ["", key];
    console.log(`${key} ${robot.id(module, name)}`);
  }
} catch (err) {
  console.error(`ids: ${err.message}`);
  process.exitCode = 1;
} finally {
  client.close();
}
"""


JS_LOOP = """
import { Client, QUEUED } from "./coopsim.js";
const client = new Client();
const robot = await client.robot("robot1");
for (let i = 0; ; i++) {
  const got = await robot.exchange("motors.set_speeds", [0.1, 0.1]);
  console.log(`${i} ${got.step} ${got.text.startsWith(QUEUED) ? 1 : 0}`);
  await robot.awaitStep(got);
}
"""


@pytest.mark.slow
def test_js_loop_takes_one_iteration_a_step_while_the_run_is_paused_and_stepped(waiting,
                                                                               js_dir):
    """robot.awaitStep after each exchange: a paused run holds the loop, each step by hand
    moves it one iteration."""
    argv = ["node", "--input-type=module", "-e", JS_LOOP]
    assert_one_iteration_a_step(held_and_stepped(waiting, argv, js_dir))


def js_ids(live: Run, js_dir: Path, robot: str, keys: list):
    return run_process(live, ["node", "--input-type=module", "-e", JS_IDS, robot, *keys], js_dir)


def test_js_finds_ids_by_module_and_name(live, renumbered, js_dir):
    assert_finds_ids(live, renumbered, lambda robot: js_ids(live, js_dir, robot, LOOKED_UP))


def test_js_unknown_module_or_command_is_a_clear_error(live, js_dir):
    assert_clear_error(js_ids(live, js_dir, "robot1", ["motors.fly"]), NO_COMMAND)
    assert_clear_error(js_ids(live, js_dir, "robot1", ["wings.read"]), NO_MODULE)


def test_js_unit_and_live_tests_pass(live, js_dir, tmp_path):
    """``node --test``: encoding against the protocol doc's bytes, plus calls to the live run;
    what its tests make in the temporary folder they remove (a key folder was left in /tmp)."""
    (tmp := tmp_path / "tmp").mkdir()
    run_controller(live, ["node", "--test"], js_dir, env={"TMPDIR": str(tmp)})
    assert not list(tmp.iterdir())


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


@pytest.mark.slow
def test_octave_wander_drives_in_lockstep(waiting, octave_dir, reference):
    """One exchange a step (coopsim_exchange): the same path as two plain requests a step."""
    run_controller(waiting, [*OCTAVE, "--eval", f"wander robot1 {STEPS}"], octave_dir)
    assert_wandered(waiting)
    assert robot_pose(waiting) == reference


@pytest.mark.slow
def test_octave_packs_the_documented_bytes_and_raises_error_replies(live, octave_dir):
    script = (
        "disp(sprintf('%02x', coopsim_pack(1, '/robot1/motors')));"
        "bot = coopsim_robot('robot1');"
        "try, coopsim_request(bot, 'motors.set_speeds', '', [], 0.1); catch err, "
        "disp(err.message); end;"
        "r = coopsim_request(bot, 'sonar.read'); disp(numel(r.data)); coopsim_close(bot);")
    proc = run_process(live, [*OCTAVE, "--eval", script], octave_dir)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert lines[0] == "9500ae2f726f626f74312f6d6f746f7273019090"  # docs/protocol.md, section 1
    assert lines[1].startswith("error 3: set_speeds takes 2 data")
    assert lines[2].strip() == "11"


OCTAVE_LOOP = (
    "bot = coopsim_robot('robot1'); i = 0;"
    "while true,"
    " [~, step, ~, reply] = coopsim_exchange(bot, 'motors.set_speeds', [0.1 0.1], {});"
    " printf('%d %d %d\\n', i, step, strncmp(reply.text, 'lockstep: queued', 16));"
    " fflush(stdout); coopsim_await_step(reply); i = i + 1;"
    "end")


@pytest.mark.slow
def test_octave_loop_takes_one_iteration_a_step_while_the_run_is_paused_and_stepped(
        waiting, octave_dir):
    """coopsim_await_step after each exchange: a paused run holds the loop, each step by hand
    moves it one iteration."""
    argv = [*OCTAVE, "--eval", OCTAVE_LOOP]
    assert_one_iteration_a_step(held_and_stepped(waiting, argv, octave_dir))


# Prints `module.name id` for each key in the robot's table; an error goes to stderr, exit 1.
OCTAVE_IDS = (
    "bot = coopsim_robot('{robot}');"
    "try, for k = {{{keys}}}, printf('%s %d\\n', k{{1}}, coopsim_id(bot, k{{1}})); end;"
    "catch err, fprintf(2, 'ids: %s (%s)\\n', err.message, err.identifier); exit(1); end;"
    "coopsim_close(bot);")


def octave_ids(live: Run, octave_dir: Path, robot: str, keys: list):
    script = OCTAVE_IDS.format(robot=robot, keys=", ".join(f"'{k}'" for k in keys))
    return run_process(live, [*OCTAVE, "--eval", script], octave_dir)


@pytest.mark.slow
def test_octave_finds_ids_by_module_and_name(live, renumbered, octave_dir):
    assert_finds_ids(live, renumbered,
                     lambda robot: octave_ids(live, octave_dir, robot, LOOKED_UP))


@pytest.mark.slow
def test_octave_unknown_module_or_command_is_a_clear_error(live, octave_dir):
    assert_clear_error(octave_ids(live, octave_dir, "robot1", ["motors.fly"]),
                       NO_COMMAND, "coopsim:unknownname")
    assert_clear_error(octave_ids(live, octave_dir, "robot1", ["wings.read"]), NO_MODULE)
