"""The worked example 4c (examples/shared-control): the scripted person flies the three
Crazyflies in formation through the pillars by the squad's velocity alone; none touches a
pillar, the squad gets past them, the feedback force pulls back as they come near, and the run
ends with the CSV and the plot written (the example's scenario on the aerial engine at 100 Hz
and as fast as it goes, so the test takes seconds, not the 19 s of a real-time flight)."""

from __future__ import annotations

import csv
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from coopsim.formats.files import load

HERE = Path(__file__).resolve()
EXAMPLE = HERE.parents[2] / "examples" / "shared-control"
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(EXAMPLE))
from nethelpers import live  # noqa: E402
import person  # noqa: E402

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def test_the_person_flies_the_squad_round_the_pillars_and_plots_the_feedback(tmp_path):
    spec = load(EXAMPLE / "shared_flight.scenario")
    # real time, as a person flies it: the loop then sees the steps at the run's pace, not at
    # whatever pace an unpaced run outruns it on this machine (89 rows at load 3, 100 asked)
    spec = replace(spec, settings=replace(spec.settings, engine="aerial", dt=0.01, speed=1.0))
    pillars = spec.world.objects
    with live(spec) as run:
        code = person.main(["--nameserver", run.network.endpoint, "--csv",
                            str(tmp_path / "f.csv"), "--plot", str(tmp_path / "f.png"),
                            "--world", str(EXAMPLE / "pillars.world")])
    assert code == 0
    with open(tmp_path / "f.csv") as f:
        rows = list(csv.DictReader(f))
    assert float(rows[-1]["time"]) - float(rows[0]["time"]) >= person.END and len(rows) > 100
    pos = np.array([[float(r[f"{n}_{a}"]) for n in ("cf1", "cf2", "cf3") for a in "xyz"]
                    for r in rows]).reshape(len(rows), 3, 3)
    for obj in pillars:  # upright: the horizontal clearance to each pillar's outline
        gap = np.linalg.norm(pos[:, :, :2] - obj.position[:2], axis=2) - max(obj.size[:2]) / 2
        if obj.shape == "box":
            gap = np.max(np.abs(pos[:, :, :2] - obj.position[:2]) - np.array(obj.size[:2]) / 2,
                         axis=2)
        assert gap.min() > 0.05, obj.name
    assert float(rows[-1]["centre_x"]) > 0.5  # from x = -3.5, past the first two pillars
    fx = np.array([float(r["fx"]) for r in rows])
    t = np.array([float(r["time"]) for r in rows])
    assert np.abs(fx[t < 3.0]).max() < 1e-9  # hovering at the start, 2 m from any pillar
    assert fx.min() < -0.3  # the pillars ahead pull the hand back
    assert (tmp_path / "f.png").stat().st_size > 10_000
