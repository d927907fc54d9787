"""A scene file whose first ``<body>`` is not the robot (gymnasium-robotics' ``reach.xml``
files put the target first and ``<include>`` the robot after it): the section's ``body`` key
names the robot's body, whose subtree is the robot in the description and in MuJoCo's world;
a name the file lacks is refused at the key's line (docs/files.md, docs/robots.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coopsim.formats.files import load
from coopsim.model.errors import FileFormatError

SCENE = """<mujoco model="scene">
  <worldbody>
    <body name="target0" pos="1 0 0.5"><geom type="sphere" size="0.02" mass="0.01"/></body>
    <body name="robot0:base" pos="0 0 0.1">
      <geom type="box" size="0.1 0.1 0.05" mass="2"/>
      <body name="robot0:link" pos="0 0 0.1">
        <joint name="robot0:hinge" type="hinge" axis="0 0 1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _scenario(folder: Path, body: str | None) -> Path:
    (folder / "scene.xml").write_text(SCENE)
    (folder / "floor.world").write_text("[FLOOR]\nsize 8 8 0.1\n")
    key = f"body {body}\n" if body is not None else ""
    path = folder / "s.scenario"
    path.write_text("[WORLD]\nfile floor.world\n\n[ROBOT_1]\ndescription scene.xml\n"
                    f"name r1\nposition 0 0 0\n{key}\n[SETTINGS]\nengine mujoco\n"
                    "mode lockstep\n")
    return path


def test_the_first_body_is_the_robot_unless_the_section_names_one(tmp_path):
    from coopsim.model.plugins import ROBOT_TYPES

    first = ROBOT_TYPES.get(load(str(_scenario(tmp_path, None))).robots[0].type).DESCRIPTION
    assert [link.name for link in first.links] == ["target0"]
    named = ROBOT_TYPES.get(load(str(_scenario(tmp_path, "robot0:base"))).robots[0].type)
    described = named.DESCRIPTION
    assert described.root == "robot0:base"
    assert [link.name for link in described.links] == ["robot0:base", "robot0:link"]
    assert [joint.name for joint in described.joints] == ["robot0:hinge"]


def test_mujocos_world_holds_the_named_body_and_not_the_target(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    from coopsim.sim.simulation import Simulation

    sim = Simulation(load(str(_scenario(tmp_path, "robot0:base"))))
    sim.physics()
    model = sim.world.engine.model
    names = {mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or ""
             for b in range(model.nbody)}
    assert "r1/robot0:base" in names and "r1/robot0:link" in names
    assert not any(name.endswith("target0") for name in names)
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "r1/robot0:hinge") >= 0


def test_a_body_the_file_lacks_is_refused_at_the_keys_line(tmp_path):
    path = _scenario(tmp_path, "robot0:nobody")
    with pytest.raises(FileFormatError) as info:
        load(str(path))
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1)
                if text.startswith("body "))
    assert info.value.line == line
    assert "scene.xml has no body 'robot0:nobody'" in str(info.value)


@pytest.mark.slow
def test_coopsim_check_exits_2_on_a_missing_body(tmp_path):
    path = _scenario(tmp_path, "robot0:nobody")
    done = subprocess.run([sys.executable, "-m", "coopsim", "check", str(path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr
    assert f"{path}:8: body: scene.xml has no body 'robot0:nobody'" in done.stderr
    assert "Traceback" not in done.stderr
