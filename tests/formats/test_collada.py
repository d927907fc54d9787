"""COLLADA triangles are read from positions only (coopsim/formats/collada.py,
``_positions_only``): the normals and texture coordinates a primitive names are not parsed,
and the triangles are those pycollada gives from the whole file, to the bit."""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
import pytest

collada = pytest.importorskip("collada")

from coopsim.formats import collada as reader  # noqa: E402

#: Two geometries: a polylist whose corners index positions, normals (offset 1) and texture
#: coordinates (offset 2), and a triangle set whose ``<vertices>`` carries its own normals
#: (read with the positions: kept).
DAE = """<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="millimetre" meter="0.001"/></asset>
  <library_geometries>
    <geometry id="a"><mesh>
      <source id="a-pos"><float_array id="a-pos-array" count="12">0 0 0 10 0 0 10 10 0 0 10 5
        </float_array><technique_common><accessor source="#a-pos-array" count="4" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z"
        type="float"/></accessor></technique_common></source>
      <source id="a-nrm"><float_array id="a-nrm-array" count="6">0 0 1 0 0.6 0.8</float_array>
        <technique_common><accessor source="#a-nrm-array" count="2" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z"
        type="float"/></accessor></technique_common></source>
      <source id="a-uv"><float_array id="a-uv-array" count="4">0 0 1 1</float_array>
        <technique_common><accessor source="#a-uv-array" count="2" stride="2">
        <param name="S" type="float"/><param name="T" type="float"/></accessor>
        </technique_common></source>
      <vertices id="a-v"><input semantic="POSITION" source="#a-pos"/></vertices>
      <polylist count="1">
        <input semantic="VERTEX" source="#a-v" offset="0"/>
        <input semantic="NORMAL" source="#a-nrm" offset="1"/>
        <input semantic="TEXCOORD" source="#a-uv" offset="2" set="0"/>
        <vcount>4</vcount><p>0 0 0 1 0 1 2 1 1 3 1 0</p>
      </polylist>
    </mesh></geometry>
    <geometry id="b"><mesh>
      <source id="b-pos"><float_array id="b-pos-array" count="9">0 0 1 1 0 1 0 1 1
        </float_array><technique_common><accessor source="#b-pos-array" count="3" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z"
        type="float"/></accessor></technique_common></source>
      <source id="b-nrm"><float_array id="b-nrm-array" count="9">0 0 1 0 0 1 0 0 1
        </float_array><technique_common><accessor source="#b-nrm-array" count="3" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z"
        type="float"/></accessor></technique_common></source>
      <vertices id="b-v"><input semantic="POSITION" source="#b-pos"/>
        <input semantic="NORMAL" source="#b-nrm"/></vertices>
      <triangles count="1"><input semantic="VERTEX" source="#b-v" offset="0"/>
        <p>0 1 2</p></triangles>
    </mesh></geometry>
  </library_geometries>
  <library_visual_scenes><visual_scene id="s">
    <node id="n"><translate>1 2 3</translate><instance_geometry url="#a"/>
      <instance_geometry url="#b"/></node>
  </visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
"""


def _whole(path: str, data: bytes) -> np.ndarray:
    """The triangles pycollada gives from every source of the file, float64 corners gathered
    from its bound primitives (the reader before: not the reader's own gather)."""
    ignore = [collada.common.DaeUnsupportedError, collada.common.DaeBrokenRefError]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        doc = collada.Collada(io.BytesIO(reader._geometry_only(data)), ignore=ignore)
        parts = []
        for bound in doc.scene.objects("geometry"):
            for prim in bound.primitives():
                tris = prim.triangleset() if hasattr(prim, "triangleset") else prim
                index = getattr(tris, "vertex_index", None)
                if index is not None and len(index) and np.ndim(index) == 2:
                    parts.append(np.asarray(tris.vertex, dtype=float)[np.asarray(index)])
        return np.concatenate(parts).reshape(-1, 3, 3)


def test_unused_normals_and_texture_coordinates_are_not_parsed():
    data = DAE.encode()
    stripped = reader._positions_only(data)
    assert b'<float_array id="a-nrm-array" count="6"></float_array>' in stripped
    assert b'<float_array id="a-uv-array" count="4"></float_array>' in stripped
    assert b'semantic="UNREAD" source="#a-nrm" offset="1"' in stripped
    assert b"0 0 1 0 0 1 0 0 1" in stripped  # b's normals: its <vertices> names them
    assert b"0 0 0 10 0 0 10 10 0" in stripped  # positions untouched


def test_the_triangles_are_pycollada_s_of_the_whole_file(tmp_path):
    path = tmp_path / "two.dae"
    path.write_text(DAE)
    got = reader._converted(str(path), DAE.encode())
    want = _whole(str(path), DAE.encode())
    assert got.shape == (3, 3, 3)  # a quad (two triangles) and a triangle
    np.testing.assert_array_equal(got, (want * 0.001).astype(np.float32))


def _package() -> Path:
    try:
        from importlib.metadata import distribution
        return Path(distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data/robots"))
    except Exception:  # noqa: BLE001 -- PackageNotFoundError: the test extra is missing
        pytest.skip("example-robot-data is not installed (pip install '.[test]')")


@pytest.mark.parametrize("name", ["borinot_description/meshes/propeller_cw.dae",  # triangles
                                  "anymal_c_simple_description/meshes/battery.dae",  # polylist
                                  "z1_description/meshes/visual/z1_Link02.dae"])
def test_shipped_files_give_the_same_triangles_to_the_bit(name):
    path = _package() / name
    if not path.is_file():
        pytest.skip(f"{name} is not in this example-robot-data")
    data = path.read_bytes()
    assert len(reader._positions_only(reader._geometry_only(data))) < len(data)
    unit = reader._parse(str(path), data).assetInfo.unitmeter or 1.0
    np.testing.assert_array_equal(reader._converted(str(path), data),
                                  (_whole(str(path), data) * unit).astype(np.float32))
