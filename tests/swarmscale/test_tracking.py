"""SwarmSimX's quadrotor in 2D: the ``holonomic`` type, the ``velocity`` module (lag,
acceleration limit, position loop), the ``tracking`` driver in-process and over the network,
and ``coopsim analyze tracking`` on real recordings."""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from helpers import robot, scenario
from nethelpers import live

from coopsim.client import Client, RemoteError
from coopsim.client.host import run_controller
from coopsim.model.specs import DriverSetting
from coopsim.net import protocol as p
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

ROOT = Path(__file__).resolve().parents[2]
DT = 0.02


def quad(name="q1", x=0.0, y=0.0, **params):
    """A holonomic robot spec, with a tracking driver when ``params`` are given."""
    spec = robot(name, x, y, type="holonomic")
    if params:
        spec = dataclasses.replace(spec, drivers=(DriverSetting(
            "tracking", tuple((k, v) for k, v in params.items())),))
    return spec


@pytest.mark.parametrize("engine", ["kinematic", "pymunk"])
def test_velocity_commands_pass_the_lag_and_the_acceleration_limit(engine):
    sim = Simulation(scenario([quad()], floor=(40.0, 40.0), dt=DT), engine=engine)
    stepper = Stepper(sim)
    stepper.slots.put("q1", "velocity", (1.0, 0.0, 0.0, 0.0, 0.0, 0.0), attach=False)
    speeds = [stepper.tick().readings["velocity"][0, 3] for _ in range(150)]
    # first step: the lag asks 1 - exp(-0.02 / 0.15) = 12.5 % of 1 m/s, the limit allows
    # 4 m/s^2 * 0.02 s = 0.08 m/s
    assert speeds[0] == pytest.approx(0.08, abs=0.01)
    assert all(b >= a - 1e-6 for a, b in zip(speeds, speeds[1:]))  # no overshoot
    assert speeds[-1] == pytest.approx(1.0, abs=0.01)
    x = sim.snapshot.poses[0, 0]
    assert 2.0 < x < 3.0  # 3 s at up to 1 m/s, after a start of ~0.4 s


def test_speed_cap_and_track_reference_stored():
    sim = Simulation(scenario([quad()], floor=(40.0, 40.0), dt=DT), engine="kinematic")
    stepper = Stepper(sim)
    stepper.slots.put("q1", "velocity", (9.0, 9.0, 0.0, 0.0, 0.0, 0.0), attach=False)
    for _ in range(200):
        snap = stepper.tick()
    assert math.hypot(*snap.velocities[0, :2]) == pytest.approx(2.0, abs=1e-6)  # max_speed
    stepper.slots.put("q1", "velocity", (0.0, 0.0, 0.0, 1.0, -1.0, 1.0), attach=False)
    for _ in range(400):
        snap = stepper.tick()
    assert snap.commands["velocity"][0, 3:].tolist() == [1.0, -1.0, 1.0]
    assert snap.poses[0, :2] == pytest.approx([1.0, -1.0], abs=0.01)  # the loop got there


@pytest.mark.parametrize("engine", ["kinematic", "pymunk"])
def test_batch_tracking_keeps_every_robot_near_its_reference(engine):
    spec = scenario([quad(f"q{k}", -4.0 + 4 * k, 0.0, shape=shape, size=1.0, period=8)
                     for k, shape in enumerate(("eight", "circle", "eight"))],
                    floor=(20.0, 20.0), dt=DT)
    stepper = Stepper(Simulation(spec, engine=engine))
    errors = []
    for k in range(400):
        snap = stepper.tick()
        ref = snap.commands["velocity"][:, 3:5]
        if k > 50:  # past the start-up
            errors.append(np.hypot(*(snap.poses[:, :2] - ref).T))
    errors = np.array(errors)
    assert errors.mean() < 0.1 and errors.max() < 0.25
    start = np.array([[-4.0, 0.0], [0.0, 0.0], [4.0, 0.0]])
    spread = np.ptp(snap.commands["velocity"][:, 3:5] - start, axis=0)
    assert spread.max() < 2.5  # each flies its own shape about its own start


def test_a_network_controller_tracks_in_lockstep():
    # wait_for: the run takes no step before the controller's first command (an unattached
    # lockstep run steps as fast as it can, and the reference would start far ahead)
    with live(scenario([quad()], dt=DT, mode="lockstep"), wait_for=1) as run:
        errors, refs = [], []

        def note(snap):
            ref = snap.commands["velocity"][0, 3:5]
            if snap.commands["velocity"][0, 5] > 0.5:  # tracking (a stop at the end is not)
                refs.append(np.hypot(*ref))
                errors.append(np.hypot(*(snap.poses[0, :2] - ref)))
        run.stepper.hooks.append(note)
        done = []
        worker = threading.Thread(target=lambda: done.append(run_controller(
            "tracking", "q1", {"shape": "circle", "size": 1.0, "period": 6}, steps=300,
            nameserver=run.network.endpoint)))
        worker.start()
        worker.join(120)
    assert done == [300] and len(errors) >= 290
    assert np.mean(errors[50:]) < 0.1 and max(errors) < 0.3
    assert max(refs) > 1.5  # it went round, away from the start (the circle is 2 m across)


def test_bad_velocity_commands_get_error_replies():
    with live(scenario([quad()], dt=DT, mode="realtime")) as run, \
            Client(run.network.endpoint) as c:
        bot = c.robot("q1")
        with pytest.raises(RemoteError) as info:
            bot.velocity.set_velocity(5000.0, 0.0, 0.0)
        assert info.value.code == p.OUT_OF_RANGE
        with pytest.raises(RemoteError) as info:
            bot.velocity.track(1.0, 2.0)
        assert info.value.code == p.WRONG_ARITY
        bot.velocity.track(1.0, 2.0, 0.0, 0.0)


def _coopsim(*args, cwd=ROOT):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    return subprocess.run([sys.executable, "-m", "coopsim", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, env=env)


@pytest.mark.slow
def test_analyze_tracking_table_figure_and_errors(tmp_path):
    rec = tmp_path / "eight.mcap"
    out = _coopsim("run", "scenarios/tracking.scenario", "--headless", "--port", "0",
                   "--duration", "6", "--record", str(rec))
    assert out.returncode == 0, out.stderr
    png = tmp_path / "f.png"
    out = _coopsim("analyze", "tracking", str(rec), str(rec), "--label", "a", "--label", "b",
                   "--plot", str(png))
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| a") or
            line.startswith("| b")]
    assert len(rows) == 2 and "| quad1 | 300 |" in rows[0]
    mean = float(rows[0].split("|")[4])
    assert 0.0 < mean < 0.15
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    plain = tmp_path / "plain.mcap"  # single robots only: no reference recorded
    assert _coopsim("run", "scenarios/one_robot.scenario", "--headless", "--port", "0",
                    "--duration", "0.2", "--no-controllers", "--record",
                    str(plain)).returncode == 0
    out = _coopsim("analyze", "tracking", str(plain))
    assert out.returncode == 2 and "no robot tracked a reference" in out.stderr
    out = _coopsim("analyze", "tracking", str(rec), "--label", "x", "--label", "y")
    assert out.returncode == 2 and "--label given 2 times for 1 recordings" in out.stderr
    out = _coopsim("analyze", "tracking", str(rec), "--robot", "nobody")
    assert out.returncode == 2 and "robot 'nobody' never tracked" in out.stderr
