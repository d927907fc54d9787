"""A mirrored mesh (a URDF ``<mesh scale="1 -1 1">``, as the Talos' and TIAGo dual's
left-hand parts are) is lit as its unmirrored twin in the 3D view: its normals turn with the
scale's sign (viewer/gl3d.py's vertex shader). Real window under Xvfb, a live MuJoCo run over
real sockets: one link carries the same box file twice, side by side, once mirrored across y;
seen square from the front (-y), their front faces are the same colour."""

from __future__ import annotations

import pytest

from nethelpers import live
from scenery_helpers import write_stl
from test_viewer import close, pixel, pump, screenshot, viewer_for  # noqa: F401

pytest.importorskip("mujoco")

URDF = """<robot name="twins">
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0"
      iyz="0"/></inertial>
    <visual><origin xyz="-0.3 0 0.3"/><geometry><mesh filename="box.stl"/></geometry></visual>
    <visual><origin xyz="0.3 0 0.3"/>
      <geometry><mesh filename="box.stl" scale="1 -1 1"/></geometry></visual>
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>
  </link>
</robot>
"""

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


def test_a_mirrored_mesh_is_lit_as_its_twin(display, viewer_for, tmp_path):
    from coopsim.formats.files import load
    from coopsim.viewer.view3d_meshes import robot_key

    write_stl(tmp_path / "box.stl", (-0.1, -0.1, -0.1), (0.1, 0.1, 0.1))
    (tmp_path / "twins.urdf").write_text(URDF)
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 4 4 0.1\n")
    (tmp_path / "s.scenario").write_text(
        "[WORLD]\nfile w.world\n[SETTINGS]\nengine mujoco\ndt 0.01\nmode lockstep\n"
        "[ROBOT_1]\nname twins\ndescription twins.urdf\nbase fixed\nposition 0 0 0\n")
    with live(load(str(tmp_path / "s.scenario")), paused=True) as run:
        viewer = viewer_for(run.network.endpoint, top=False)

        def drawn() -> bool:
            layout = viewer.scene.layout
            if layout is None or not viewer.view3d.active:
                return False
            key = robot_key(layout["robots"][0]["type"], "box.stl")
            rows = viewer.view3d.drawn.get(key)
            return key in viewer.view3d.meshes.rows and rows is not None and len(rows) == 2

        pump(viewer, lambda: viewer.link.connected and viewer.frames > 3 and drawn(),
             "the two boxes drawn from their triangles")
        image = screenshot(viewer, "view3d_mirrored_twins")
        cam = viewer.view3d.camera
        left = pixel(image, *cam.to_screen(-0.3, -0.1, 0.27))
        right = pixel(image, *cam.to_screen(0.3, -0.1, 0.27))
        sky = pixel(image, 5, 5)
    assert not close(left, sky, 30)  # the box is there, not the background
    assert close(left, right, 8), f"the mirrored box's front face {right} vs its twin's {left}"
