"""Controllers launched by the scenario (``controller <command>``): their environment, that they
drive their robot, that they are stopped at exit, and that one crashing does not stop the run."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import pytest

from coopsim.app.controllers import Controllers, ControllerSpec
from coopsim.app.run import load_scenario_or_world

from nethelpers import ROOT, Peer, live, lookup, wait_until

CONTROLLER = textwrap.dedent("""\
    import json, os, sys
    from coopsim.client import Client

    robot = os.environ["COOPSIM_ROBOT"]
    with open(robot + ".env.json", "w") as out:
        json.dump({"nameserver": os.environ["COOPSIM_NAMESERVER"], "robot": robot,
                   "argv": sys.argv, "executable": sys.executable, "cwd": os.getcwd()}, out)
    if "--crash" in sys.argv:
        raise SystemExit(3)
    with Client() as client:
        bot = client.robot(robot)
        for _ in bot.loop(period=0.02):
            bot.motors.set_speeds(0.4, 0.4)
    """)

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def _scenario(folder, sections: str):
    (folder / "w.world").write_text("[FLOOR]\nsize 10 10 0.1\n")
    (folder / "ctl.py").write_text(CONTROLLER)
    path = folder / "run.scenario"
    path.write_text("[WORLD]\nfile w.world\n[SETTINGS]\nmode realtime\n" + sections)
    return load_scenario_or_world(path)


def _robot(n: int, name: str, y: float, command: str, rtype: str = "single") -> str:
    return (f"[ROBOT_{n}]\ntype {rtype}\nname {name}\nposition -3 {y} 0\n"
            f"controller {command}\n")


def _x(run, name: str) -> float:
    return Peer(lookup(run.network.endpoint, f"/{name}")).ok(500)[4][0]


def test_a_launched_controller_gets_its_environment_drives_and_is_stopped(tmp_path):
    spec = _scenario(tmp_path, _robot(1, "r1", 0, "python ctl.py --tag 'two words'"))
    with live(spec, controllers=True) as run:
        wait_until(lambda: _x(run, "r1") > -2.5, timeout=20)
        env = json.loads((tmp_path / "r1.env.json").read_text())
        procs = dict(run.controllers.procs)
        assert run.controllers.exited() == {}
        nameserver = run.network.endpoint
    assert env["nameserver"] == nameserver and env["robot"] == "r1"
    assert env["argv"][1:] == ["--tag", "two words"]
    assert env["executable"] == sys.executable, "python means the interpreter running coopsim"
    assert env["cwd"] == str(tmp_path), "it runs in the scenario's folder"
    assert procs["r1"].poll() is not None, "stopped when the run ends"


def test_a_crashing_controller_does_not_stop_the_run(tmp_path):
    sections = (_robot(1, "r1", 0, "python ctl.py") + _robot(2, "r2", 2, "python ctl.py --crash")
                + _robot(3, "r3", -2, "no-such-program-here --x"))
    with live(_scenario(tmp_path, sections), controllers=True) as run:
        wait_until(lambda: run.controllers.exited().get("r2") == 3, timeout=20)
        assert set(run.controllers.procs) == {"r1", "r2"}, "r3's command did not start"
        step = run.stepper.snapshot.step
        wait_until(lambda: _x(run, "r1") > -2.5, timeout=20)
        assert run.stepper.running and run.stepper.snapshot.step > step
        assert _x(run, "r2") == pytest.approx(-3.0, abs=1e-3)
        assert "r1" not in run.controllers.exited()


def test_each_member_of_a_team_gets_the_teams_controller(tmp_path):
    spec = _scenario(tmp_path, _robot(1, "t", 0, "python ctl.py", rtype="team2"))
    with live(spec, controllers=True) as run:
        assert set(run.controllers.procs) == {"t_leader", "t_helper"}
        wait_until(lambda: (tmp_path / "t_helper.env.json").exists()
                   and (tmp_path / "t_leader.env.json").exists(), timeout=20)


def test_a_controller_ignoring_sigterm_is_killed(tmp_path):
    stubborn = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "print('ready', flush=True); time.sleep(60)")
    controllers = Controllers([ControllerSpec("r1", f'python -c "{stubborn}"', str(ROOT))],
                              "tcp://127.0.0.1:1", log_dir=str(tmp_path)).start()
    wait_until(lambda: "ready" in (tmp_path / "r1.log").read_text(), timeout=10)
    controllers.stop(grace=0.3)
    assert controllers.procs["r1"].returncode == -9


def test_the_demo_robots_are_driven_by_launched_controllers():
    demo = load_scenario_or_world(None)
    with live(demo, controllers=True) as run:
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        start = _poses(sim)
        assert len(start) == 4 and set(run.controllers.procs) == set(start)

        def all_moved():
            now = _poses(sim)
            return all(math.dist(start[n][:2], now[n][:2]) > 0.1 for n in start)
        wait_until(all_moved, timeout=30, every=0.2)
        assert run.controllers.exited() == {}


def _poses(sim: Peer) -> dict:
    reply = sim.ok(10)
    names = reply[1].splitlines()
    return {n: reply[4][3 * i:3 * i + 3] for i, n in enumerate(names)}


def test_coopsim_run_with_the_demo_on_the_command_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "coopsim", "run", "--port", "0", "--duration",
                          "2", "--headless", "--controller-logs", str(tmp_path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "name server: tcp://127.0.0.1:" in out.stderr
    assert "robots            4" in out.stdout
    logs = sorted(p.name for p in tmp_path.iterdir())
    assert logs == ["robot1.log", "robot2.log", "robot3.log", "robot4.log"]
    assert "Traceback" not in "".join(p.read_text() for p in tmp_path.iterdir())
