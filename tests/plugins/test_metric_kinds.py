"""Metric kinds are plugins: a kind from another package (a real ``.dist-info`` entry point
under ``coopsim.metrics``) shows in ``coopsim list``, is checked by ``coopsim check`` through
its own declaration (argument count, syntax, the scenario's robots) and is computed by the
monitors rule in a run; the built-in ``min_sonar`` comes from the sonar module's file."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from coopsim.model.plugins import METRICS

ROOT = Path(__file__).resolve().parents[2]

PACKAGE = textwrap.dedent('''
    from coopsim.model.metric_kind import MetricKind, need_robot, robot_row


    class Heading(MetricKind):
        label = "heading"
        description = "heading ROBOT [SCALE]: the robot's yaw times SCALE, rad"
        args = (1, 2)

        @classmethod
        def parse(cls, args):
            if len(args) > 1 and args[1] not in ("1", "2"):
                raise ValueError(f"heading scale must be 1 or 2, got {args[1]!r}")

        @classmethod
        def build(cls, robot, scale="1"):
            return lambda snap: robot_row(snap, robot,
                                          lambda i: snap.poses[i, 2] * float(scale))
''')


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("headingkind")
    (where / "headingkind.py").write_text(PACKAGE)
    info = where / "headingkind-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: headingkind\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[coopsim.metrics]\nheading = headingkind:Heading\n")
    return where


def scenario(where: Path, metric: str) -> Path:
    path = where / "h.scenario"
    path.write_text(f"[WORLD]\nfile {ROOT / 'worlds' / 'empty.world'}\n\n[ROBOT_1]\ntype single\n"
                    f"name r1\nposition 0 0 0\norientation 0 0 30\n\n[MONITORS]\n{metric}\n\n[SETTINGS]\n"
                    "mode lockstep\nduration 0.1\n")
    return path


def cli(plugin: Path, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(plugin))
    return subprocess.run([sys.executable, "-m", "coopsim", *args], capture_output=True,
                          text=True, timeout=300, env=env, cwd=plugin)


def test_builtin_kinds_are_registered_by_the_plugins_that_compute_them():
    assert {"distance", "speed", "at_target", "python", "min_sonar"} <= set(METRICS.labels())
    assert METRICS.origin("min_sonar").target == "coopsim.plugins.modules.sonar:MinSonar"
    assert METRICS.origin("distance").package == "coopsim"


@pytest.mark.slow
def test_a_plugin_kind_is_listed_checked_and_computed(plugin):
    listing = cli(plugin, "list").stdout
    kinds = listing.split("Metric kinds:")[1]
    assert "heading" in kinds and "[headingkind 0.1]" in kinds and "min_sonar" in kinds
    path = scenario(plugin, "metric h heading r1 2")
    assert cli(plugin, "check", str(path)).returncode == 0
    done = cli(plugin, "run", str(path), "--headless", "--port", "0")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("monitors.h "))
    assert float(row.split()[3]) == pytest.approx(1.0472, abs=1e-3)  # final: 2 x 30 deg


@pytest.mark.parametrize("metric, reason", [
    ("metric h heading r1 3", "heading scale must be 1 or 2, got '3'"),
    ("metric h heading r1 1 2", "metric heading takes 1 to 2 arguments, got 3"),
    ("metric h heading ghost", "metric h: no robot named 'ghost'"),
    ("metric h compass_rose r1", "unknown metric kind 'compass_rose' (expected at_target, "),
])
@pytest.mark.slow
def test_a_plugin_kind_checks_its_own_arguments_at_the_line(plugin, metric, reason):
    path = scenario(plugin, metric)
    done = cli(plugin, "check", str(path))
    assert done.returncode == 2
    assert done.stderr.startswith(f"{path}:11: ") and reason in done.stderr, done.stderr
