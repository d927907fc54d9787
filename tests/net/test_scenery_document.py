"""A world's meshes and terrain shown (protocol 9): ``/sim state`` over a real socket carries
the layout document's ``scenery`` (basenames, outlines, a bounded grid; no triangle, no local
path), and the Foxglove scene draws each mesh and the terrain as triangle lists."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")
pytest.importorskip("PIL")

from coopsim.client.connection import Client  # noqa: E402
from coopsim.formats.files import load  # noqa: E402
from coopsim.foxglove.scene import Scene  # noqa: E402
from coopsim.foxglove.scenery import LOCAL_MESHES, scenery_entities  # noqa: E402
from coopsim.model.scenerydoc import GRID_MAX  # noqa: E402

from nethelpers import live  # noqa: E402
from scenery_helpers import scenario_text, write_world  # noqa: E402

TB = "[ROBOT_1]\ntype turtlebot3\nname tb\nposition -4 -4 0\n"


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shown")
    write_world(folder)
    (folder / "s.scenario").write_text(scenario_text(TB))
    return load(folder / "s.scenario")


@pytest.fixture(scope="module")
def layout(scenario):
    """The layout document as a client reads it: ``/sim state`` over the socket."""
    with live(scenario, paused=True) as run, Client(run.network.endpoint) as client:
        return client.sim().state()


def test_sim_state_carries_the_scenery_without_triangles_or_paths(layout, scenario):
    wall, platform = layout["scenery"]["meshes"]
    assert (wall["name"], wall["file"], wall["triangles"]) == ("MESH_1", "wall.stl", 12)
    assert str(scenario.world.meshes[0].path) not in repr(layout)  # nothing of the local path
    xs, ys = np.array(wall["outline"]).T  # the 0.2 x 2 m wall's footprint at (3, 0)
    assert (xs.min(), xs.max(), ys.min(), ys.max()) == pytest.approx((2.9, 3.1, -1, 1))
    assert (wall["bottom"], wall["top"]) == pytest.approx((0.0, 1.0))
    assert len(platform["outline"]) == 4 and platform["quat"][0] == pytest.approx(
        np.cos(np.radians(15)))  # turned 30 degrees about z
    terrain = layout["scenery"]["terrain"]
    assert (terrain["file"], terrain["rows"], terrain["cols"]) == ("bump.pgm", 64, 64)
    grid = np.array(terrain["grid"])
    assert grid.shape == (GRID_MAX, GRID_MAX) and terrain["max"] == pytest.approx(0.3, abs=0.01)
    assert grid[GRID_MAX // 2, GRID_MAX // 2] > 0.25 and grid[0, 0] < 0.01  # bump in the middle


def test_a_world_without_scenery_has_no_key():
    from helpers import robot, scenario as plain
    from coopsim.sim.world import World
    assert "scenery" not in World(plain([robot("a", 0, 0)])).describe()


def _triangle_lists(update: bytes) -> int:
    """How many TriangleListPrimitive fields (SceneEntity field 12) ``update`` holds: counted
    by their tag after an entity id of ours (a crude but real read of the bytes)."""
    return update.count(b"mesh/") + update.count(b"terrain")


def test_the_foxglove_scene_draws_the_meshes_from_their_files_and_the_terrain(layout, scenario):
    local = dict(layout, **{LOCAL_MESHES: {m.name: m for m in scenario.world.meshes}})
    wall, platform, terrain = scenery_entities(local)
    tris = (GRID_MAX - 1) ** 2 * 2
    assert len(terrain.data) > tris * 3 * 29  # 29 bytes a corner: every cell's two triangles
    assert len(wall.data) > 36 * 29 and b"wall.stl" in wall.data  # 12 triangles, 36 corners
    outlined = scenery_entities(layout)  # a replay: the outline's prism (4 sides, 2 on top)
    assert len(outlined[0].data) > 30 * 29
    update = Scene(layout, three_d=True).world.fill(np.zeros(0), 1).tobytes()
    assert _triangle_lists(update) == 3


def test_ros2_static_tf_has_a_frame_per_mesh_and_the_terrain(scenario):
    """/tf_static of a real world's RosScene, decoded by rosbags: ``map`` -> the robot's odom
    as before, then ``scenery/MESH_1``, ``scenery/MESH_2`` (turned 30 degrees) and the
    terrain's frame."""
    rosbags = pytest.importorskip("rosbags", reason="rosbags (test extra) decodes the messages")
    from rosbags.typesys import Stores, get_typestore

    from coopsim.ros2 import messages as m
    from coopsim.ros2.scene import RosScene
    from coopsim.sim.simulation import Simulation
    sim = Simulation(scenario)
    scene = RosScene(sim.world.describe(), sim.snapshot)
    tf = get_typestore(Stores.ROS2_HUMBLE).deserialize_cdr(scene.static_transforms(5),
                                                          m.ros_name(m.TF))
    frames = {t.child_frame_id: t for t in tf.transforms}
    assert {"tb/odom", "scenery/MESH_1", "scenery/MESH_2", "scenery/terrain"} <= set(frames)
    assert frames["tb/odom"].transform.translation.x == pytest.approx(-4.0, abs=0.01)
    platform = frames["scenery/MESH_2"]
    assert platform.header.frame_id == "map" and rosbags
    assert (platform.transform.translation.x, platform.transform.translation.y) == (-2.0, 3.0)
    assert platform.transform.rotation.z == pytest.approx(np.sin(np.radians(15)))
