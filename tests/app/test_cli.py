"""Every coopsim subcommand of the core, run as a user runs it: a real process."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def coopsim(*args, timeout=120):
    """Run ``coopsim ARGS`` in a subprocess (the installed console script's module)."""
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "coopsim", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, env=env)


def test_check_accepts_every_bundled_file():
    files = sorted(str(p) for p in (ROOT / "worlds").glob("*.world"))
    files += sorted(str(p) for p in (ROOT / "scenarios").glob("*.scenario"))
    files += sorted(str(p) for p in (ROOT / "sweeps").glob("*.sweep"))
    result = coopsim("check", *files)
    assert result.returncode == 0, result.stderr
    assert f"{len(files)} file(s) OK" in result.stdout


def test_check_rejects_a_bad_file_with_path_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.world"
    bad.write_text("[FLOOR]\nsize 8 8 0.1\n[WALL_1]\ntype pyramid\nsize 1 1 1\nposition 0 0 0\n")
    result = coopsim("check", str(bad))
    assert result.returncode == 2
    assert result.stderr.startswith(f"{bad}:4:")
    assert "Traceback" not in result.stderr


def test_check_rejects_a_bad_sweep_at_its_line(tmp_path):
    bad = tmp_path / "bad.sweep"
    bad.write_text(f"[SWEEP]\nscenario {ROOT / 'scenarios' / 'amsa_follow.scenario'}\n"
                   "[AXIS_1]\nparam nobody.motors.efficiency\nvalues 50 100\n")
    result = coopsim("check", str(bad))
    assert result.returncode == 2, result.stdout
    assert result.stderr.startswith(f"{bad}:4:"), result.stderr
    assert "Traceback" not in result.stderr


def test_list_prints_robot_types_modules_and_parameters():
    result = coopsim("list")
    assert result.returncode == 0
    for word in ("single", "team2", "sonar", "max_range", "efficiency", "support"):
        assert word in result.stdout


def test_run_headless_prints_a_summary(tmp_path):
    result = coopsim("run", "scenarios/one_robot.scenario", "--headless", "--duration", "0.5",
                     "--speed", "0", "--port", "0", "--no-controllers")
    assert result.returncode == 0, result.stderr
    assert "name server: tcp://127.0.0.1:" in result.stderr
    for key in ("steps", "sim time", "wall time", "real-time factor", "deadline misses"):
        assert key in result.stdout
    assert "steps             50" in result.stdout


def test_a_headless_run_whose_step_fails_ends_with_one_line_and_exit_1(tmp_path):
    (tmp_path / "boom_metric.py").write_text(
        "def bad(snapshot):\n    if snapshot.step > 3:\n        raise ValueError('boom')\n"
        "    return 1.0\n")
    scenario = tmp_path / "boom.scenario"
    scenario.write_text((ROOT / "scenarios" / "one_robot.scenario").read_text().replace(
        "../worlds/", f"{ROOT / 'worlds'}/") + "\n[MONITORS]\nmetric m python boom_metric:bad\n")
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env_path}"
    try:
        result = coopsim("run", str(scenario), "--headless", "--duration", "5", "--speed", "0",
                         "--port", "0", "--no-controllers")
    finally:
        os.environ["PYTHONPATH"] = env_path
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "step 4 failed: RuleError: rule monitors: python metric boom_metric:bad raised " \
        "ValueError: boom; the run ends" in result.stderr
    assert "ended             step 4: FAIL: RuleError" in result.stdout
    assert "steps             3" in result.stdout


def test_run_demo_drives_robots_with_launched_controllers(tmp_path):
    result = coopsim("run", "--headless", "--duration", "3", "--port", "0",
                     "--controller-logs", str(tmp_path), timeout=60)
    assert result.returncode == 0, result.stderr
    logs = sorted(p.name for p in tmp_path.glob("*.log"))
    assert logs == ["robot1.log", "robot2.log", "robot3.log", "robot4.log"]
    for log in tmp_path.glob("*.log"):
        assert "Traceback" not in log.read_text(), log.read_text()


def test_run_a_world_file_and_lockstep_mode():
    result = coopsim("run", "worlds/maze.world", "--mode", "lockstep", "--duration", "1",
                     "--port", "0")
    assert result.returncode == 0, result.stderr
    assert "lockstep" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["run", "nope.scenario"], "nope.scenario:0:"),
    (["run", "scenarios/one_robot.scenario", "--dt", "5", "--port", "0"], "dt must be"),
])
def test_run_bad_input_is_one_line_and_exit_2(args, message):
    result = coopsim(*args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_bench_step_prints_a_table():
    result = coopsim("bench", "step", "--robots", "5,20", "--steps", "5")
    assert result.returncode == 0, result.stderr
    assert "| 5 |" in result.stdout and "| 20 |" in result.stdout
    assert "| pymunk |" in result.stdout  # no --engine: the default engine (Engine.default)


def test_bench_step_builds_its_world_of_the_robot_type_asked_for():
    result = coopsim("bench", "step", "--robots", "3", "--steps", "2",
                     "--robot-type", "holonomic")
    assert result.returncode == 0, result.stderr
    assert "| 3 |" in result.stdout
    result = coopsim("bench", "step", "--robots", "3", "--steps", "2",
                     "--robot-type", "nope")
    assert result.returncode == 2 and "unknown robot type 'nope'" in result.stderr
    assert "Traceback" not in result.stderr


# --- engines and drivers (the plugin kinds) -------------------------------------------------------

TEAM = ("[WORLD]\nfile {world}\n[SETTINGS]\n{engine}\n[ROBOT_1]\ntype team2\nname t\n"
        "position 0 0 0\n")


def test_an_engine_that_cannot_run_a_scenario_is_a_file_line_error(tmp_path):
    world = ROOT / "worlds" / "empty.world"
    named = tmp_path / "named.scenario"
    named.write_text(TEAM.format(world=world, engine="engine kinematic"))
    result = coopsim("check", str(named))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"{named}:5: robot t (team2): the kinematic engine has no "
                                    "joints"), result.stderr
    plain = tmp_path / "plain.scenario"
    plain.write_text(TEAM.format(world=world, engine="seed 1"))
    assert coopsim("check", str(plain)).returncode == 0
    result = coopsim("run", str(plain), "--engine", "kinematic", "--headless", "--port", "0")
    assert result.returncode == 2 and result.stderr.startswith(f"coopsim: {plain}:5: ")
    result = coopsim("run", str(plain), "--engine", "warp", "--headless", "--port", "0")
    assert result.returncode == 2 and "unknown engine 'warp'" in result.stderr


def test_run_on_the_kinematic_engine(tmp_path):
    result = coopsim("run", "scenarios/one_robot.scenario", "--engine", "kinematic",
                     "--headless", "--duration", "0.5", "--speed", "0", "--port", "0",
                     "--no-controllers", "--mode", "lockstep")
    assert result.returncode == 0, result.stderr
    assert "steps             50" in result.stdout and "duration 0.5 s reached" in result.stdout


def test_drive_hosts_a_registered_driver_over_the_network():
    from coopsim.formats.files import load
    from nethelpers import live

    with live(load(str(ROOT / "scenarios" / "one_robot.scenario")), paused=True,
              mode="lockstep") as run:
        run.stepper.resume()
        start = run.stepper.snapshot.poses[0].copy()
        result = coopsim("drive", "wander", "robot1", "--nameserver", run.network.endpoint,
                         "--steps", "60", "-p", "cruise=0.4", timeout=60)
        assert result.returncode == 0, result.stderr
        assert "60 control steps" in result.stderr
        assert abs(run.stepper.snapshot.poses[0][0] - start[0]) + abs(
            run.stepper.snapshot.poses[0][1] - start[1]) > 0.05
        bad = coopsim("drive", "wander", "robot1", "--nameserver", run.network.endpoint,
                      "-p", "cruise=fast", timeout=60)
        assert bad.returncode == 2 and "cruise takes a float, not 'fast'" in bad.stderr
    unknown = coopsim("drive", "nope", timeout=60)
    assert unknown.returncode == 2 and "unknown driver 'nope'" in unknown.stderr


def test_record_refuses_a_path_that_is_not_mcap_and_leaves_the_file_alone(tmp_path):
    # --record takes an optional value, so "--record FILE.scenario" would otherwise record the
    # demo over the scenario file
    scenario = tmp_path / "mine.scenario"
    scenario.write_text((ROOT / "scenarios" / "one_robot.scenario").read_text())
    before = scenario.read_bytes()
    result = coopsim("run", "--record", str(scenario), "--headless", "--duration", "0.2",
                     "--port", "0")
    assert result.returncode == 2
    assert "does not end in .mcap" in result.stderr and "Traceback" not in result.stderr
    assert scenario.read_bytes() == before


@pytest.mark.parametrize("option", ["--csv", "--metrics-csv", "--feedback-csv"])
def test_export_refuses_to_write_over_the_recording_it_reads(tmp_path, option):
    rec = tmp_path / "run.mcap"
    rec.write_bytes((ROOT / "recordings" / "sample.mcap").read_bytes())
    before = rec.read_bytes()
    extra = () if option == "--csv" else ("--csv", str(tmp_path / "out.csv"))
    result = coopsim("export", str(rec), *extra, option, str(tmp_path / "." / "run.mcap"))
    assert result.returncode == 2 and "would overwrite the recording it reads" in result.stderr
    assert "Traceback" not in result.stderr and rec.read_bytes() == before


def test_a_taken_port_ends_run_before_anything_is_loaded_or_recorded(tmp_path):
    """The port is checked first: a missing scenario is not even read (it would be the error
    otherwise) and no recording is started."""
    import zmq
    taken = zmq.Context.instance().socket(zmq.ROUTER)
    port = taken.bind_to_random_port("tcp://127.0.0.1")
    try:
        result = coopsim("run", str(tmp_path / "missing.scenario"), "--headless",
                         "--port", str(port), "--record", str(tmp_path / "r.mcap"))
    finally:
        taken.close(0)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"coopsim: cannot bind the name server on 127.0.0.1:{port}: Address already in use "
        f"(addr='tcp://127.0.0.1:{port}') (is another coopsim running? --port picks another "
        "port)"]
    assert list(tmp_path.iterdir()) == []
