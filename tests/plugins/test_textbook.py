"""The real robots' textbook behaviours do what the textbook says, headless on real worlds:
Braitenberg avoidance on the e-puck, right-hand wall following on the TurtleBot3, edge following
on the Thymio, aggregation and dispersion of Kilobots by IR messages; and the Python client
scripts run the same drivers over the network."""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coopsim.formats.files import load_scenario
from coopsim.model.specs import DriverSetting
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from helpers import box, robot, scenario
from nethelpers import live

ROOT = Path(__file__).resolve().parents[2]


def _driven(bot, label, **settings):
    return bot.__class__(**{**bot.__dict__,
                            "drivers": (DriverSetting(label, tuple(settings.items())),)})


def _run(spec, steps, each=None):
    st = Stepper(Simulation(spec), mode="lockstep")
    for _ in range(steps):
        st.tick()
        if each:
            each(st.snapshot)
    return st.snapshot


def test_the_epuck_turns_away_from_a_wall_before_it_stays_against_it():
    bot = _driven(robot("e", 0.0, 0.0, type="epuck"), "braitenberg")
    touching, xy = [], []

    def note(s):
        touching.append(s.reading("e", "bumper").any())
        xy.append(s.poses[0, :2].copy())

    _run(scenario([bot], [box("W", 0.5, 0, size=(0.1, 1.0))], floor=(2, 2), dt=0.02), 600, note)
    xy = np.array(xy)
    assert xy[:, 0].max() > 0.38  # it drove up to the wall (its face at x = 0.45)...
    assert xy[-1, 0] < xy[:, 0].max() - 0.2  # ...and away from it again
    assert np.hypot(*np.diff(xy, axis=0).T).sum() > 0.9  # kept moving (0.1 m/s, 12 s)
    assert sum(touching) < 60  # a brush at most, never pinned against the wall


def test_the_turtlebot_follows_the_corridor_wall_on_its_right():
    spec = load_scenario(ROOT / "scenarios" / "turtlebot3_wall_follow.scenario")
    gaps = []
    snap = _run(spec, 1000, lambda s: gaps.append(s.extra["lidar"].of("tb3")[90]))
    x, y, _ = snap.poses[0]
    assert x > -10.5 + 2.0  # along the corridor
    assert 0.25 < np.median(gaps) < 0.6  # about gap = 0.4 m from the wall on its right
    assert not snap.reading("tb3", "bumper").any()


@pytest.mark.slow
def test_the_thymio_goes_round_the_band_along_its_edge():
    spec = load_scenario(ROOT / "scenarios" / "thymio_line.scenario")
    angles, off_edge = [], []

    def note(s):
        x, y, _ = s.poses[0]
        angles.append(math.atan2(y, x))
        off_edge.append(min(abs(abs(x) - 0.3), abs(abs(y) - 0.25)))  # the box is 0.6 x 0.5

    _run(spec, 2500, note)
    swept = np.sum(np.abs(np.diff(np.unwrap(angles))))
    assert swept > 2 * math.pi  # a whole lap
    assert np.percentile(off_edge[500:], 90) < 0.1  # the centre stays near the edge


def _kilobots(mode, n=30, spacing=0.12):
    rng = np.random.default_rng(4)
    bots = []
    for i in range(n):
        x, y = (i % 6) * spacing - 0.3, (i // 6) * spacing - 0.3
        bots.append(_driven(robot(f"k{i}", x + rng.uniform(-0.01, 0.01), y,
                                  rng.uniform(-3, 3), type="kilobot"), "kilobot_swarm",
                            mode=mode, run=60, tumble=40))
    return scenario(bots, floor=(1.2, 1.2), dt=0.05, seed=4)


def _neighbours(poses, within=0.1):
    d = np.hypot(*(poses[:, None, :2] - poses[None, :, :2]).transpose(2, 0, 1))
    return (d < within).sum(axis=1) - 1


@pytest.mark.slow
def test_kilobots_aggregate_by_messages():
    spec = _kilobots("aggregate")
    start = (_neighbours(np.array([r.position for r in spec.robots])) >= 2).mean()
    snap = _run(spec, 1500)
    assert (_neighbours(snap.poses) >= 2).mean() > start + 0.2
    led = snap.readings["leds"][:, 0]  # each shows its state: green resting, red walking
    assert set(led.tolist()) == {200 * 256.0, 200 * 65536.0}
    walking = np.hypot(snap.velocities[:, 0], snap.velocities[:, 1]) > 0.005
    assert (led[walking] == 200 * 65536).mean() > 0.9


@pytest.mark.slow
def test_kilobots_disperse_by_messages():
    spec = _kilobots("disperse", spacing=0.04)
    start = np.median(_neighbours(np.array([r.position for r in spec.robots]), 0.06))
    snap = _run(spec, 1500)
    assert np.median(_neighbours(snap.poses, 0.06)) < start


@pytest.mark.slow
def test_the_python_client_script_drives_an_epuck_over_the_network():
    spec = scenario([robot("epuck1", 0.0, 0.0, type="epuck")], [box("W", 0.3, 0, (0.1, 1.0))],
                    floor=(2, 2), dt=0.02, mode="lockstep")
    with live(spec) as run:
        done = subprocess.run([sys.executable, str(ROOT / "clients" / "python" / "braitenberg.py"),
                               "epuck1", "--steps", "150"], capture_output=True, text=True,
                              env={"COOPSIM_NAMESERVER": run.network.endpoint,
                                   "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
                              timeout=120)
        assert done.returncode == 0, done.stderr
        snap = run.stepper.snapshot
    assert snap.step >= 140 and snap.poses[0][0] > 0.1  # it drove
    assert snap.poses[0][0] < 0.3 - 0.05  # and did not run into the wall
