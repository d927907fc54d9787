"""What a plugin rule reports is first-class recorded data: a rule from another package
(a real ``.dist-info`` entry point) reports ``metrics`` and a ``summary``; ``coopsim info``,
``export --csv`` (its metrics file), ``export --metrics-csv``, ``plot`` and the Foxglove export
all show them beside the ``[MONITORS]`` ones, named ``<rule>.<name>``."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PACKAGE = textwrap.dedent('''
    from coopsim.model.driver import Rule


    class Travel(Rule):
        """How far robot r1 is from the origin, m, and the largest so far."""

        label = "travel"
        description = "r1's distance from the origin"

        def __init__(self, params):
            super().__init__(params)
            self.now = self.far = 0.0

        def after_step(self, sim, snap):
            x, y = snap.poses[snap.index["r1"], :2]
            self.now = float((x * x + y * y) ** 0.5)
            self.far = max(self.far, self.now)

        def fields(self):
            return {"metrics": {"reach": self.now, "label_only": None},
                    "summary": {"reach": {"max": self.far, "mean": None, "final": self.now,
                                          "max_after": None}},
                    "after": 0.0, "note": "not a number"}
''')

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A 1 s lockstep run with the travel rule and a monitor, recorded: (folder, env, rec)."""
    where = tmp_path_factory.mktemp("travel")
    (where / "travelrule.py").write_text(PACKAGE)
    info = where / "travelrule-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: travelrule\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[coopsim.rules]\ntravel = travelrule:Travel\n")
    (where / "travel.scenario").write_text(
        f"[WORLD]\nfile {ROOT / 'worlds' / 'empty.world'}\n\n[ROBOT_1]\ntype single\nname r1\n"
        "position 0 0 0\ndriver wander\n\n[RULE_1]\ntype travel\n\n[MONITORS]\n"
        "metric v speed r1\n\n[SETTINGS]\nmode lockstep\nduration 1\n")
    env = dict(os.environ, PYTHONPATH=str(where))
    rec = where / "run.mcap"
    done = cli(env, "run", str(where / "travel.scenario"), "--headless", "--port", "0",
               "--record", str(rec))
    assert done.returncode == 0, done.stderr
    assert "travel.reach" in done.stdout  # the closing summary shows it too
    return where, env, rec


def cli(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "coopsim", *args], capture_output=True,
                          text=True, timeout=300, env=env, cwd=ROOT)


def test_info_shows_every_rules_metrics(recorded):
    _, env, rec = recorded
    facts = json.loads(cli(env, "info", str(rec), "--json").stdout)
    assert set(facts["metrics"]) == {"travel.reach", "travel.label_only", "monitors.v"}
    reach = facts["metrics"]["travel.reach"]
    assert reach["max"] >= reach["final"] > 0 and reach["mean"] is None
    assert facts["metrics"]["travel.label_only"] == {"max": None, "mean": None, "final": None,
                                                     "max_after": None}
    text = cli(env, "info", str(rec)).stdout
    assert "\ntravel.reach " in text and "\nmonitors.v " in text


def test_export_writes_the_rules_metrics_beside_the_csv(recorded):
    where, env, rec = recorded
    done = cli(env, "export", str(rec), "--csv", str(where / "run.csv"))
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(open(where / "run.metrics.csv")))
    assert list(rows[0])[:3] == ["time", "step", "sim_time"]
    assert sorted(list(rows[0])[3:]) == ["monitors.v", "travel.label_only", "travel.reach"]
    assert len(rows) == 101 and float(rows[-1]["travel.reach"]) > 0  # 1 s at dt 0.01
    assert {r["travel.label_only"] for r in rows} == {""}
    done = cli(env, "export", str(rec), "--csv", str(where / "b.csv"), "--metrics-csv",
               str(where / "only.csv"))
    assert done.returncode == 0 and (where / "only.csv").read_text() == \
        (where / "run.metrics.csv").read_text()


def test_plot_and_foxglove_show_the_rules_metrics(recorded):
    where, env, rec = recorded
    done = cli(env, "plot", str(rec), "--out", str(where / "plots"))
    assert done.returncode == 0, done.stderr
    assert (where / "plots" / "metrics.png").stat().st_size > 1000
    out = where / "fox.mcap"
    done = cli(env, "export", str(rec), "--foxglove", str(out))
    assert done.returncode == 0, done.stderr
    from mcap.reader import make_reader

    with open(out, "rb") as stream:
        topics = {c.topic for c in make_reader(stream).get_summary().channels.values()}
    assert {"/metrics/travel/reach", "/metrics/monitors/v"} <= topics
