"""Worlds with static meshes and a height field on real MuJoCo (docs/files.md, *Meshes and
terrain*): a TurtleBot rides over a bump and stops at a mesh wall, a falling body lands on a
mesh, a lidar sees the wall; bad scenery files are refused at their line, whole."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("mujoco")
pytest.importorskip("PIL")

from coopsim.formats.files import load  # noqa: E402
from coopsim.model.errors import FileFormatError  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.stepper import Stepper  # noqa: E402
from coopsim.sim.world import World  # noqa: E402

from flyhelpers import flyer_type  # noqa: E402
from scenery_helpers import WORLD, scenario_text, write_stl, write_world  # noqa: E402

TB = "[ROBOT_1]\ntype turtlebot3\nname tb\nposition {x} {y} 0\norientation 0 0 {yaw}\n"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scenery")
    write_world(folder)
    return folder


def scenario(folder, robots: str, name: str = "s.scenario"):
    (folder / name).write_text(scenario_text(robots))
    return load(folder / name)


def test_the_world_file_reads_its_meshes_and_terrain(folder):
    world = load(folder / "t.world")
    wall, platform = world.meshes
    assert (wall.name, wall.triangles, wall.position) == ("MESH_1", 12, (3.0, 0.0, 0.0))
    assert np.allclose(wall.bounds, ((-0.1, -1.0, 0.0), (0.1, 1.0, 1.0)))
    assert platform.rpy[2] == pytest.approx(math.radians(30))
    t = world.terrain
    assert t.heights.shape == (64, 64) and t.size == (4.0, 4.0, 0.3)
    assert t.height_at(0.0, 0.0) == pytest.approx(0.3 * np.exp(-0.0 / 0.2), abs=0.01)
    assert t.height_at(2.5, 0.0) == 0.0  # off the field: the floor


def test_an_ascii_stl_is_built_from_its_triangles_and_outlined(folder):
    write_stl(folder / "ascii.stl", (-0.1, -1, 0), (0.1, 1, 1), ascii=True)
    (folder / "ascii.world").write_text(WORLD.replace("wall.stl", "ascii.stl"))
    (folder / "ascii.scenario").write_text(scenario_text("", "ascii.world"))
    scn = load(folder / "ascii.scenario")
    assert scn.world.meshes[0].vertices.shape == (36, 3)
    _, _, segments, _ = World(scn).engine.static_geometry()
    wall = segments[(abs(segments[:, [0, 2]] - 3) < 0.5).all(axis=1)]  # the wall mesh's hull
    assert len(wall) == 4
    assert sorted({round(v, 6) for v in wall[:, [0, 2]].ravel()}) == [2.9, 3.1]


def test_a_turtlebot_rides_over_the_bump_and_stops_at_the_mesh_wall(folder):
    world = World(scenario(folder, TB.format(x=-2.5, y=0, yaw=0)))
    engine, terrain = world.engine, world.engine._scenery.terrain
    engine.drive(np.array([0]), np.array([0.5]), np.array([0.0]))
    heights = []
    for _ in range(600):  # 12 s at 0.5 m/s: over the bump and on to the wall
        engine.step(0.02)
        x, y, z = engine.state3d()[0, :3]
        heights.append(z)
        assert z == pytest.approx(float(terrain.height_at(x, y)), abs=1e-9)
    assert max(heights) > 0.28  # the bump's top, 0.3 m, under the robot's centre
    assert heights[0] < 0.01 and heights[-1] < 0.01  # before it and after it: the floor
    x = engine.state3d()[0, 0]
    assert x == pytest.approx(2.9 - 0.089, abs=0.02)  # its rim against the wall's face


def test_a_falling_body_lands_on_the_platform_mesh(folder):
    robots = f"[ROBOT_1]\ntype {flyer_type()}\nname q\nposition -2 3 1.0\n"
    world = World(scenario(folder, robots, "fly.scenario"))
    for _ in range(150):  # 3 s: a 0.95 m fall and its settling
        world.engine.step(0.02)
    z, vz = world.engine.state3d()[0, [2, 9]]
    assert z == pytest.approx(0.3 + 0.05, abs=0.01)  # resting on its top, 0.3 m high
    assert abs(vz) < 1e-3


def test_a_lidar_sees_the_mesh_wall_and_not_the_terrain(folder):
    tb = TB.format(x=2.0, y=0, yaw=0) + "param lidar.x 0\nparam lidar.beams 4\n"
    stepper = Stepper(Simulation(scenario(folder, tb, "scan.scenario")), mode="lockstep")
    stepper.tick()
    ahead, left, behind, right = (stepper.snapshot.extra["lidar"].of("tb")[k]
                                  for k in (2, 3, 0, 1))
    assert ahead == pytest.approx(0.9, abs=1e-6)  # the wall's face at x = 2.9
    # the lidar casts in 3D at its chassis's middle height h: behind, the bump (0.3 m high,
    # exp(-x^2 / 0.8) over its 4 m field) rises to h where 0.3 exp(-x^2 / 0.8) = h
    h = float(stepper.sim.world.engine.chassis_extent([0]).mean())
    assert behind == pytest.approx(2.0 - math.sqrt(0.8 * math.log(0.3 / h)), abs=0.03)
    del left, right


@pytest.mark.parametrize("change, line, words", [
    (("file wall.stl", "file nope.stl"), 5, "not found"),
    (("file platform.obj", "file bad.obj"), 9, "expected 3 numbers"),
    (("position 3 0 0", "position 3 0 0\nscale 2000"), 7, "at most 1000 m"),
    (("image bump.pgm", "image huge.pgm"), 14, "each side must be"),
    (("image bump.pgm", "image notimage.png"), 14, "not a readable"),
    (("size 4 4 0.3", "size 4 4 0"), 15, "height"),
])
def test_bad_scenery_is_refused_at_its_line(folder, change, line, words):
    (folder / "bad.obj").write_text("v 0 0 0\nv 1 0\n")
    (folder / "huge.pgm").write_bytes(b"P5\n5000 3\n255\n" + bytes(15000))
    (folder / "notimage.png").write_text("not an image")
    (folder / "bad.world").write_text(WORLD.replace(*change))
    with pytest.raises(FileFormatError) as exc:
        load(folder / "bad.world")
    assert exc.value.line == line and words in str(exc.value)
    assert str(exc.value).startswith(str(folder / "bad.world"))


def test_a_2d_engine_refuses_scenery_at_its_line(folder):
    (folder / "flat.scenario").write_text(scenario_text(TB.format(x=-3, y=-3, yaw=0))
                                          .replace("mujoco", "pymunk"))
    with pytest.raises(FileFormatError) as exc:
        load(folder / "flat.scenario")
    assert exc.value.path.endswith("t.world") and exc.value.line == 4  # [MESH_1]
    assert "scenery feature" in str(exc.value)


@pytest.mark.slow
def test_coopsim_check_and_run_say_file_line_and_exit_2(folder):
    (folder / "missing.world").write_text(WORLD.replace("wall.stl", "gone.stl"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-m", "coopsim", "check", str(folder / "missing.world")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2
    assert "missing.world:5: file 'gone.stl' not found" in out.stderr + out.stdout
    assert "Traceback" not in out.stderr
    # run alone, the world gets the default engine (pymunk), which refuses its scenery
    out = subprocess.run([sys.executable, "-m", "coopsim", "run", str(folder / "t.world"),
                          "--headless", "--duration", "0.1"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 2 and "t.world:4: the pymunk engine has no meshes" in out.stderr


def test_a_requested_world_names_only_files_inside_the_data_folders(folder, tmp_path):
    from coopsim.formats.folders import DataFolders
    from coopsim.model.errors import NotAllowedError

    inside = tmp_path / "data"
    inside.mkdir()
    (inside / "w.world").write_text(WORLD.replace("wall.stl", str(folder / "wall.stl")))
    with pytest.raises(NotAllowedError) as exc:
        load(inside / "w.world", DataFolders([inside]))
    assert "w.world:5: file" in str(exc.value)
    write_world(inside)  # the same files inside: loaded
    assert len(load(inside / "t.world", DataFolders([inside])).meshes) == 2


def test_seen_above_makes_the_bump_top_a_wall_to_range_sensors(folder):
    (folder / "seen.world").write_text(WORLD + "seen_above 0.2\n")
    world = load(folder / "seen.world")
    outline = np.array(world.terrain.outline)  # (cx, cy, length, width) rectangles
    assert len(outline) and (np.abs(outline[:, :2]) < 0.6).all()  # the bump's top, around 0
    cells = [(x, y) for x in np.linspace(-1, 1, 21) for y in np.linspace(-1, 1, 21)
             if world.terrain.height_at(x, y) > 0.21]
    covered = [any(abs(x - cx) <= w / 2 and abs(y - cy) <= h / 2 for cx, cy, w, h in outline)
               for x, y in cells]
    assert cells and all(covered)
