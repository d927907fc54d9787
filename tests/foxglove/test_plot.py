"""coopsim plot: PNGs of the bundled sample recording and of one with metrics; bad input."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rechelpers import RECDATA, record, run_cli

SAMPLE = Path(__file__).resolve().parents[2] / "recordings" / "sample.mcap"


def _image(path: Path) -> np.ndarray:
    import matplotlib.image

    return matplotlib.image.imread(path)


@pytest.mark.slow
def test_plots_of_the_sample_recording(tmp_path):
    done = run_cli("plot", str(SAMPLE), "--out", str(tmp_path / "plots"))
    assert done.returncode == 0, done.stderr
    written = [Path(line) for line in done.stdout.split()]
    assert [p.name for p in written] == ["trajectories.png", "robots.png"]  # no metrics there
    for path in written:
        image = _image(path)
        assert image.shape[0] > 300 and image.shape[1] > 300
        assert image[..., :3].std() > 0.05  # something drawn, not a blank page
    # the robots' colours are on the trajectory plot: robot1 is red (230, 40, 40)
    traj = _image(written[0])[..., :3]
    red = (abs(traj[..., 0] - 230 / 255) < 0.05) & (traj[..., 1] < 0.3) & (traj[..., 2] < 0.3)
    assert red.sum() > 50


@pytest.mark.slow
def test_metrics_are_plotted_and_robots_can_be_picked(tmp_path):
    rec = tmp_path / "rec.mcap"
    done = run_cli("run", str(RECDATA / "foxglove.scenario"), "--headless", "--port", "0",
                   "--duration", "0.5", "--record", str(rec))
    assert done.returncode == 0, done.stderr
    done = run_cli("plot", str(rec), "--robot", "beta")
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "rec-plots"
    assert sorted(p.name for p in folder.iterdir()) == ["metrics.png", "robots.png",
                                                         "trajectories.png"]
    # the zones lie on the floor plan in their colours (the pond and the border box)
    from coopsim.replay.player import recorded_steps
    from coopsim.recording.reader import Recording

    with Recording(rec) as recording:
        zones = next(iter(recorded_steps(recording)))[1]["zones"]
    traj = _image(folder / "trajectories.png")[..., :3]
    for zone in zones:
        rgb = np.array(zone["color"][:3]) / 255
        assert (np.abs(traj - rgb).max(axis=-1) < 0.02).sum() > 100, zone["name"]
    done = run_cli("plot", str(rec), "--robot", "gamma")
    assert done.returncode == 2 and "no robot named gamma" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_plot_of_a_bad_file_is_exit_2(tmp_path):
    bad = tmp_path / "x.mcap"
    bad.write_bytes(b"\x89MCAP0\r\n" + b"\0" * 40)
    done = run_cli("plot", str(bad), "--out", str(tmp_path / "p"))
    assert done.returncode == 2 and str(bad) in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "p").exists()
    done = run_cli("plot", str(tmp_path / "missing.mcap"))
    assert done.returncode == 2 and "no such file" in done.stderr


@pytest.mark.slow
def test_plot_without_matplotlib_says_which_pip_command_to_run(tmp_path):
    code = ("import sys\nsys.modules['matplotlib'] = None\nfrom coopsim.app.cli import main\n"
            "main(sys.argv[1:])\n")
    done = subprocess.run([sys.executable, "-c", code, "plot", str(SAMPLE), "--out",
                           str(tmp_path / "p")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "pip install" in done.stderr and "matplotlib" in done.stderr
    # the plot extra, in the clone's editable form (this suite runs from a clone)
    assert "pip install -e '.[plot]'" in done.stderr and "foxglove" not in done.stderr
    assert "Traceback" not in done.stderr



@pytest.mark.slow
def test_a_3d_recording_gets_the_altitude_plot(tmp_path):
    """A real MuJoCo world recorded: two free bodies let go at 1 m and 2 m fall under gravity."""
    pytest.importorskip("mujoco")
    from coopsim.app.plot import Series
    from coopsim.model.specs import RobotSpec, Settings
    from coopsim.recording.reader import Recording

    from flyhelpers import flyer_type
    from helpers import scenario

    kind = flyer_type()
    spec = dataclasses.replace(scenario(), robots=(
        RobotSpec(kind, "low", (-1.0, 0.0, 1.0)), RobotSpec(kind, "high", (1.0, 0.0, 2.0))),
        settings=Settings(dt=0.01, mode="lockstep", engine="mujoco"))
    rec = tmp_path / "fall.mcap"
    _, truth = record(rec, 30, spec, drive=False)
    with Recording(rec) as recording:
        altitude = Series(recording).altitude
    assert list(altitude) == ["low", "high"]
    for k, name in enumerate(altitude):
        z = np.array(altitude[name])[:, 1]
        assert z[0] == pytest.approx(1.0 + k, abs=1e-3)  # the format keeps 0.1 mm
        assert z[-1] == pytest.approx(truth[-1].pose3d[k, 2], abs=1e-3) and z[-1] < z[0] - 0.3
    done = run_cli("plot", str(rec), "--out", str(tmp_path / "plots"), timeout=300)
    assert done.returncode == 0, done.stderr
    written = [Path(line).name for line in done.stdout.split()]
    assert written == ["trajectories.png", "robots.png", "altitude.png"]
    image = _image(tmp_path / "plots" / "altitude.png")[..., :3]
    assert image.shape[1] > 500 and image.std() > 0.05


def test_a_2d_recording_has_no_altitude_plot(tmp_path):
    from coopsim.app.plot import Series
    from coopsim.recording.reader import Recording

    rec = tmp_path / "flat.mcap"
    record(rec, 5)
    with Recording(rec) as recording:
        assert Series(recording).altitude == {}
