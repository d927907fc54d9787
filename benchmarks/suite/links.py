"""Robots from description files drawn link by link (protocol 10's ``links``): what
a client pays per frame to place every link, and what the ``posture`` module adds to a step.

* ``LinkPoses.time_frame``: :func:`coopsim.model.linkposes.link_poses` of N rovers
  (examples/descriptions/rover.urdf: 6 links, its wheels turned) from their ``links`` document
  and a stream row each: the per-frame cost of a viewer, Foxglove or ROS 2 outlet, s.
* ``Posture.track_ms``: ms per step of N example rovers on the mujoco engine at 50 Hz, driving
  (each step their wheels turned and the ``posture`` reading gathered), one thread.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from .common import Case, sizes, threads, tick_ms, unit

ROOT = Path(__file__).resolve().parents[2]
ROVER = ROOT / "examples" / "descriptions" / "rover.urdf"


def _document() -> dict:
    """The rover's links document (needs MuJoCo: NotImplementedError, asv skips, without)."""
    try:
        from coopsim.formats.description import load_description
        from coopsim.description.robot import DescriptionSpec
        from coopsim.physics.mujoco.links import links_document
        return links_document(load_description(DescriptionSpec(path=str(ROVER))))
    except ImportError as exc:
        raise NotImplementedError(f"mujoco is not installed: {exc}") from None


class LinkPoses(Case):
    """link_poses of N rovers, one frame: s."""

    params = (sizes(1, 100, smoke=1),)
    param_names = ("robots",)

    def setup(self, robots):
        self.doc = _document()
        rng = np.random.default_rng(1)
        self.rows = [((x, y, 0.0, 1.0, 0.0, 0.0, 0.0), {"link_q1": a, "link_q2": b})
                     for x, y, a, b in rng.uniform(-3, 3, (robots, 4))]

    def time_frame(self, robots):
        from coopsim.model.linkposes import link_poses
        for pose, columns in self.rows:
            link_poses(self.doc, pose, columns)


class Posture(Case):
    """N example rovers driving on mujoco at 50 Hz: ms per step."""

    params = (sizes(10, 100, smoke=1),)
    param_names = ("robots",)

    def setup(self, robots):
        _document()
        threads(1)
        from coopsim.formats.files import load
        from coopsim.sim.drivers import LocalRobot
        from coopsim.sim.simulation import Simulation
        from coopsim.sim.stepper import Stepper
        self.folder = tempfile.TemporaryDirectory(prefix="coopsim-links-")
        folder = Path(self.folder.name)
        side = 2 * int(robots ** 0.5 + 1) + 2
        (folder / "w.world").write_text(f"[FLOOR]\nsize {side} {side} 0.1\n")
        rows = int(robots ** 0.5 + 0.999)
        sections = [f"[ROBOT_{k + 1}]\ndescription {ROVER}\nname r{k}\nposition "
                    f"{2 * (k % rows) - rows + 1} {2 * (k // rows) - rows + 1} 0\n"
                    "wheels wheel_left_joint wheel_right_joint\n" for k in range(robots)]
        (folder / "s.scenario").write_text(
            "[WORLD]\nfile w.world\n" + "".join(sections)
            + "[SETTINGS]\nengine mujoco\ndt 0.02\nmode lockstep\nseed 1\n")
        sim = Simulation(load(str(folder / "s.scenario")))
        self.stepper = Stepper(sim, mode="lockstep")
        for k in range(robots):
            LocalRobot(sim, f"r{k}").motors.set_speeds(0.1, 0.15)
        self.stepper.tick()

    def teardown(self, robots):
        self.folder.cleanup()

    @unit("ms")
    def track_ms(self, robots):
        return tick_ms(self.stepper, 20)
