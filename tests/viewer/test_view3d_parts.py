"""Carried bars in the 3D view: scenarios/team2_bar.scenario's bar (a part of the layout) is
drawn raised on its two supports where the projection puts it (Xvfb, Mesa's llvmpipe, a live
pymunk run over real sockets, shown in 3D as after Tab)."""

from __future__ import annotations

import numpy as np
import pytest

from nethelpers import live
from test_viewer import ROOT, pump, screenshot, viewer_for  # noqa: F401

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def test_a_teams_bar_is_drawn_above_its_two_robots_on_supports(display, viewer_for):  # noqa: F811
    from coopsim.app.run import load_scenario_or_world
    from coopsim.viewer import view3d_bodies as vb

    spec = load_scenario_or_world(ROOT / "scenarios" / "team2_bar.scenario")
    with live(spec, paused=True) as run:
        viewer = viewer_for(run.network.endpoint)
        viewer.view3d.chosen = True  # Tab: a 2D world in the 3D view
        pump(viewer, lambda: viewer.link.frame is not None and viewer.view3d.active
             and len(viewer.view3d.pose7) == 2, "the team in 3D")
        part = viewer.scene.layout["parts"][0]
        robots = viewer.scene.layout["robots"]
        top = float(vb.ground_height(viewer.view3d.radius).max())
        z = top + vb.PART_LIFT + vb.PART_THICKNESS / 2
        bars = [r for r in viewer.view3d.drawn["box"] if np.allclose(r[2], z)]
        assert len(bars) == 1 and np.allclose(bars[0][:2], (part["x"], part["y"]), atol=0.01)
        posts = [r for r in viewer.view3d.drawn["cylinder"] if np.isclose(r[7], 0.03)]
        assert sorted((round(float(p[0]), 2), round(float(p[1]), 2)) for p in posts) == \
            sorted((round(r["x"], 2), round(r["y"], 2)) for r in robots)
        # the view opens framed on the two robots: the bar fills much of it already
        image = screenshot(viewer, "view3d_team2_bar")
        rgb = np.frombuffer(image.get_data("RGB", image.width * 3), np.uint8).reshape(
            image.height, image.width, 3)
        x, y = (int(round(v)) for v in viewer.view3d.camera.to_screen(part["x"], part["y"], z))
        r, g, b = (int(v) for v in rgb[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3).mean(axis=0))
        assert r > g > b and r - b > 40, (r, g, b)  # the bar's brown, lit


def test_the_viewer_leaves_a_core_to_the_run_beside_it():
    """``coopsim view`` (lower_priority) runs nicer and lets Mesa's llvmpipe rasterize on one
    core fewer than the machine has, unless LP_NUM_THREADS is set (a process of its own: the
    nice value and the environment are the process's)."""
    import os
    import subprocess
    import sys

    code = ("import os; from coopsim.viewer import lower_priority; lower_priority(); "
            "print(os.environ['LP_NUM_THREADS'], os.nice(0))")
    env = {k: v for k, v in os.environ.items() if k != "LP_NUM_THREADS"}
    got = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert got == [str(max(1, (os.cpu_count() or 2) - 1)), str(os.nice(0) + 5)]
    env["LP_NUM_THREADS"] = "3"
    got = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert got[0] == "3"
