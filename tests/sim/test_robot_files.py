"""Robot files as MuJoCo's and PyBullet's users ship them (docs/robots.md "Your own robot"):
the root body's pose counted once, massless frames, the file's actuator limits and a
``move_to`` the arm cannot hold refused, ``coopsim check`` refusing what ``run`` refuses at the
file's line, ``<include>`` confined to the file's folder and xacro leftovers with a default.
Small files written by each test, on the real MuJoCo engine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.formats.files import load  # noqa: E402
from coopsim.model.errors import FileFormatError  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402


def scenario(folder: Path, robot: list[str], name: str = "s") -> Path:
    """A scenario of one robot on a floor, mujoco, lockstep."""
    (folder / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    path = folder / f"{name}.scenario"
    path.write_text("\n".join(["[WORLD]", "file w.world", "[SETTINGS]", "engine mujoco",
                               "dt 0.01", "mode lockstep", "[ROBOT_1]"] + robot) + "\n")
    return path


def body_pose(sim: Simulation, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(position, quaternion w x y z) of MuJoCo body ``name`` now."""
    engine = sim.world.engine
    sim.physics()
    model, data = engine.model, engine.data
    i = model.body(name).id
    return data.xpos[i].copy(), data.xquat[i].copy()


BALL = """<mujoco model="ball">
  <worldbody>
    <body name="torso" pos="0 0 0.75" euler="0 0 90">
      {joint}
      <geom type="sphere" size="0.1" mass="5"/>
      <body name="leg" pos="0.3 0 0">
        <joint name="hip" type="hinge" axis="0 0 1" range="-30 30"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.05" mass="0.5"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("base", ["fixed", "floating"])
def test_the_root_bodys_pose_is_the_sections_counted_once(tmp_path, base):
    # the root's pos="0 0 0.75" and turn were added to the section's pose: a humanoid given
    # its file's height hung at twice it, gymnasium's Ant started at 1.5 m
    (tmp_path / "ball.xml").write_text(BALL.format(
        joint='<freejoint name="root"/>' if base == "floating" else ""))
    sim = Simulation(load(str(scenario(tmp_path, ["description ball.xml", "name b",
                                                  "position 0.5 0 0.75", f"base {base}"]))))
    pos, quat = body_pose(sim, "b/torso")
    assert pos == pytest.approx([0.5, 0, 0.75], abs=1e-3)
    assert np.abs(quat) == pytest.approx([1, 0, 0, 0], abs=1e-6)
    assert sim.snapshot.pose3d[0][:3] == pytest.approx(pos, abs=1e-3)
