"""Meshes drawn as meshes in the 3D view (protocol 11, ``/sim`` command 27 ``mesh``): the
triangles travel indexed and bounded, a hostile name gets a documented error, and the window
draws a world's meshes from them (Xvfb, Mesa's llvmpipe, a live MuJoCo run over real sockets)."""

from __future__ import annotations

import numpy as np
import pytest

from coopsim.model.meshwire import MAX_TRIANGLES, flat_rows, indexed, parse_reply, reply_fields

from nethelpers import live
from scenery_helpers import scenario_text, write_stl, write_world
from test_viewer import ROOT, frame_floor, pump, screenshot, viewer_for  # noqa: F401

pytest.importorskip("mujoco")


def _sphere(rings: int, segments: int) -> np.ndarray:
    """(T, 3, 3) a unit sphere's latitude-longitude triangles, unindexed (as an STL holds)."""
    th, ph = np.meshgrid(np.linspace(0, np.pi, rings + 1), np.linspace(0, 2 * np.pi,
                                                                    segments + 1), indexing="ij")
    p = np.stack((np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)), axis=-1)
    a, b, c, d = p[:-1, :-1], p[1:, :-1], p[1:, 1:], p[:-1, 1:]
    return np.concatenate((np.stack((a, b, c), axis=2), np.stack((a, c, d), axis=2))
                          ).reshape(-1, 3, 3)


def test_a_large_mesh_is_welded_decimated_under_the_cap_and_read_back_as_sent():
    tris = _sphere(100, 100)  # 20,000 triangles, under a cap of 2,000 here
    verts, faces = indexed(tris, cap=2000)
    assert 500 < len(faces) <= 2000 < MAX_TRIANGLES
    assert np.linalg.norm(verts, axis=1) == pytest.approx(1.0, abs=0.02)  # still the sphere
    params, data = reply_fields(verts, faces, len(tris))
    back, back_faces, source = parse_reply(params, data)
    assert source == len(tris) and np.array_equal(back_faces, faces)
    assert np.allclose(back, verts)
    small = _sphere(4, 6)
    v, f = indexed(small)  # under the cap: only welded, every triangle kept
    assert len(f) == len({tuple(sorted(x)) for x in f}) <= len(small)
    assert flat_rows(v, f).shape == (3 * len(f), 6)
    with pytest.raises(ValueError):
        parse_reply((2, 1, 1, 0, 1, 5), (0.0,) * 6)  # index 5 of 2 vertices


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from coopsim.formats.files import load

    folder = tmp_path_factory.mktemp("meshes3d")
    write_world(folder)
    urdf = (ROOT / "tests" / "data" / "descriptions" / "tiny_arm.urdf").read_text()
    write_stl(folder / "fore.stl", (-0.02, -0.02, 0.0), (0.02, 0.02, 0.2))  # its forearm
    (folder / "arm.urdf").write_text(urdf.replace(
        '<box size="0.04 0.04 0.2"/>', '<mesh filename="fore.stl"/>'))
    (folder / "s.scenario").write_text(scenario_text(
        "[ROBOT_1]\ndescription arm.urdf\nname m1\nposition -3 -3 0\n"))
    with live(load(folder / "s.scenario"), paused=True) as running:
        yield running


def test_sim_mesh_answers_the_file_triangles_and_refuses_paths_and_unknown_names(run):
    from coopsim.client.connection import Client
    from coopsim.model.errors import CoopsimError

    with Client(run.network.endpoint) as client:
        sim = client.sim()
        verts, faces = sim.mesh("MESH_1")  # wall.stl: the box -0.1..0.1, -1..1, 0..1
        assert len(verts) == 8 and len(faces) == 12
        assert verts.min(axis=0) == pytest.approx((-0.1, -1, 0))
        assert verts.max(axis=0) == pytest.approx((0.1, 1, 1))
        verts, faces = sim.mesh("m1 fore.stl")  # the robot's mesh, by its file's basename
        assert len(faces) == 12 and verts.max(axis=0) == pytest.approx((0.02, 0.02, 0.2))
        codes = []
        for text in ("../../etc/passwd", "/etc/passwd", "MESH_9", "nobody wall.stl", "a b c"):
            with pytest.raises(CoopsimError) as err:
                sim.call(27, text)
            codes.append(err.value.code)
        assert codes == [5, 5, 5, 5, 3]
        assert sim.status()["robots"] == 1  # the server is still there and answering


@pytest.mark.slow
def test_the_3d_view_draws_the_worlds_meshes_from_their_triangles(display, viewer_for, run):  # noqa: F811
    viewer = viewer_for(run.network.endpoint, top=False)
    pump(viewer, lambda: len(viewer.view3d.meshes.rows) == 3, "the three meshes' triangles")
    pump(viewer, lambda: viewer.view3d._static_key[1] == viewer.view3d.meshes.version,
         "the scenery rebuilt")
    shapes = viewer.view3d._gl.static  # the terrain, then MESH_1 and MESH_2: 12 triangles each
    assert [s.vertices for s in shapes[1:]] == [36, 36]
    arm = [k for k in viewer.view3d.drawn if k.startswith("mesh:") and k.endswith("fore.stl")]
    assert len(arm) == 1 and len(viewer.view3d.drawn[arm[0]]) == 1  # the link's mesh, once
    assert viewer.view3d._gl.kinds[arm[0]].vertices == 36
    frame_floor(viewer)  # the walls stand away from the arm the view opens on
    image = screenshot(viewer, "view3d_meshes")
    cam = viewer.view3d.camera
    rgb = np.frombuffer(image.get_data("RGB", image.width * 3), np.uint8).reshape(
        image.height, image.width, 3)
    x, y = (int(round(v)) for v in cam.to_screen(3.0, 0.0, 0.5))  # the wall's middle
    r, g, b = (int(v) for v in rgb[y, x])
    assert abs(r - g) < 12 and abs(g - b) < 12 and r < 200  # the wall's grey, lit, not floor
