"""The flight controller over the network, in lockstep on the real MuJoCo engine: the Python
client (clients/python/flight.py: the flight driver hosted by coopsim.client) flies an eight
over real sockets, and the C twin (clients/c/flight.c) builds with -Werror and hovers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.app.run import Run, RunOptions  # noqa: E402
from coopsim.formats.files import load  # noqa: E402

from clienthelpers import CLIENTS  # noqa: E402

DT = 0.005


@pytest.fixture
def flying(tmp_path):
    """A running lockstep simulation of one Crazyflie 1 m up, and its recorded path:
    (snapshots' pose3d rows, rotors command rows) appended every step."""
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    path = tmp_path / "cf.scenario"
    path.write_text(f"[WORLD]\nfile w.world\n[SETTINGS]\nengine mujoco\ndt {DT}\n"
                    "mode lockstep\nseed 2\n[ROBOT_1]\ntype crazyflie\nname cf1\n"
                    "position 0 0 1\n")
    track: list = []
    with Run(load(str(path)), RunOptions(port=0, controllers=False)) as run:
        run.stepper.hooks.append(lambda snap: track.append(
            (snap.pose3d[0, :3].copy(), snap.commands["rotors"][0].copy())))
        run.start()
        yield run, track


def control(run, argv, cwd, timeout=900):
    env = dict(os.environ, COOPSIM_NAMESERVER=run.network.endpoint, COOPSIM_ROBOT="cf1")
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{argv} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"


def test_the_python_network_controller_flies_an_eight(flying):
    run, track = flying
    steps = int(5.0 / DT)
    control(run, [sys.executable, "flight.py", "cf1", "--size", "0.5", "--period", "4",
                  "--takeoff", "1", "--steps", steps], CLIENTS / "python")
    where = np.array([p for p, _ in track])
    refs = np.array([c[5:8] for _, c in track])
    tracked = np.array([c[8] for _, c in track]) > 0.5
    lap = tracked & (np.arange(len(track)) > int(1.0 / DT))
    assert lap.sum() > 0.7 * steps  # it commanded every step with its reference
    error = np.linalg.norm(where[lap] - refs[lap], axis=1)
    print(f"python network eight: mean error {error.mean() * 1000:.1f} mm over {lap.sum()} "
          f"steps")
    assert error.mean() < 0.08
    assert np.ptp(where[lap, 0]) > 0.8 and np.ptp(where[lap, 1]) > 0.4


def test_the_c_network_controller_builds_and_hovers(flying, tmp_path):
    if shutil.which("cc") is None or shutil.which("make") is None:
        pytest.skip("cc and make are not installed")
    build = tmp_path / "c"
    build.mkdir()
    for f in (CLIENTS / "c").iterdir():
        if f.suffix in (".c", ".h") or f.name == "Makefile":
            shutil.copy(f, build)
    made = subprocess.run(["make", "flight", "CFLAGS=-O2 -Werror"], cwd=build,
                          capture_output=True, text=True)
    if made.returncode and "zmq.h" in made.stderr:
        pytest.skip("libzmq3-dev / libmsgpuck-dev headers not installed")
    assert made.returncode == 0, made.stderr
    run, track = flying
    control(run, [build / "flight", "cf1", int(3.0 / DT), "hover", DT], build)
    where = np.array([p for p, _ in track])
    held = np.linalg.norm(where[int(1.5 / DT):] - [0.0, 0.0, 1.0], axis=1)
    print(f"C network hover: max {held.max() * 1000:.1f} mm over the last 1.5 s")
    assert held.max() < 0.03
