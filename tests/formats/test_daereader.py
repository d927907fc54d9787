"""The lean COLLADA reader (coopsim/formats/daereader.py) gives pycollada's triangles to the
bit, hands what it does not read to pycollada, and loads no file pycollada refuses; the
decimation on its indexed mesh gives the soup's triangles to the bit.

Over a sample of example-robot-data's files (one a feature); ``COOPSIM_DAE_ALL=1`` runs the
comparison over every ``.dae`` of the package (262 in version 6: all bit-identical, 251 read
by the lean reader, 2026-11-25)."""

from __future__ import annotations

import os
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("collada")

from coopsim.formats import collada, daereader, numbertext  # noqa: E402
from coopsim.model.errors import FileFormatError  # noqa: E402

#: (file, read by the lean reader): what each shows.
SAMPLE = [("hector_description/meshes/quadrotor/quadrotor_base.dae", True),  # rotate, scale
          ("a1_description/meshes/hip.dae", True),  # <matrix>, empty controllers
          ("anymal_b_simple_description/meshes/foot/anymal_foot.dae", True),  # comment, camera
          ("icub_description/meshes/upmc/collision/icub_simple_collision_neck_1.dae", True),
          ("z1_description/meshes/visual/z1_Link02.dae", True),  # triangles, normals
          ("borinot_description/meshes/propeller_cw.dae", True),
          ("anymal_c_simple_description/meshes/handle.dae", False),  # <lines>: pycollada
          ("anymal_b_simple_description/meshes/hip/anymal_hip_l.dae", False)]  # shared source


def _robots() -> Path:
    """example-robot-data's robots folder (the ``test`` extra installs the package)."""
    try:
        found = metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (pip install '.[test]')")
    return Path(found.locate_file("cmeel.prefix/share/example-robot-data/robots"))


def _pycollada(path: str, data: bytes) -> np.ndarray:
    """The triangles of pycollada's reader (the reader before the lean one, unchanged)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        doc = collada._parse(path, data)
        unit = doc.assetInfo.unitmeter or 1.0
        return collada._gathered(collada._scene_primitives(doc, path), path,
                                 2 * collada.MAX_TRIANGLES, float(unit))[0]


def _cases() -> list:
    if os.environ.get("COOPSIM_DAE_ALL"):
        robots = _robots()
        return [(str(p.relative_to(robots)), None) for p in sorted(robots.rglob("*.dae"))]
    return SAMPLE


@pytest.mark.parametrize("name, lean", _cases())
def test_shipped_files_give_pycollada_s_triangles_to_the_bit(name, lean):
    path = _robots() / name
    if not path.is_file():
        pytest.skip(f"{name} is not in this example-robot-data")
    data = path.read_bytes()
    if lean is not None:
        assert (daereader.triangles(data) is not None) == lean
    got = collada._converted(str(path), data)
    want = _pycollada(str(path), data)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_a_comment_reads_the_whole_file_and_the_cut_file_alike():
    data = (_robots() / "z1_description/meshes/visual/z1_Link06.dae").read_bytes()
    head = data.index(b"<asset>")
    commented = data[:head] + b"<!-- a <p>1 2 3</p> in a comment -->" + data[head:]
    assert daereader._cut(commented, daereader.tag_starts(commented)) is None
    assert daereader._cut(data, daereader.tag_starts(data)) is not None
    (cut, _), (whole, _) = daereader.triangles(data), daereader.triangles(commented)
    assert len(cut) == len(whole) > 0
    for (v1, i1), (v2, i2) in zip(cut, whole):
        assert v1.tobytes() == v2.tobytes() and np.array_equal(i1, i2)


DAE = """<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="0.01"/></asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="pos"><float_array id="pa" count="12">POSITIONS</float_array>
      <technique_common><accessor source="#pa" count="4" stride="3"><param name="X"
      type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor>
      </technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#pos"/></vertices>
    PRIMITIVE
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="n">
    <rotate>0 0 1 30</rotate><translate>1 2 3</translate><scale>2 2 2</scale>
    <instance_geometry url="#g"/>
  </node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
"""
QUAD = '<polylist count="1"><input semantic="VERTEX" source="#v" offset="0"/>' \
       '<vcount>4</vcount><p>0 1 2 3</p></polylist>'


def _file(tmp_path, positions="0 0 0 1 0 0 1 1 0 0 1 0.5", primitive=QUAD) -> tuple:
    text = DAE.replace("POSITIONS", positions).replace("PRIMITIVE", primitive)
    path = tmp_path / "one.dae"
    path.write_text(text)
    return str(path), text.encode()


def test_a_fanned_quad_under_three_transforms_is_pycollada_s(tmp_path):
    path, data = _file(tmp_path)
    assert daereader.triangles(data) is not None
    got = collada._converted(path, data)
    assert got.shape == (2, 3, 3)
    assert got.tobytes() == _pycollada(path, data).tobytes()


@pytest.mark.parametrize("primitive", [
    '<lines count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1</p></lines>',
    '<polylist count="2"><input semantic="VERTEX" source="#v" offset="0"/>'
    '<vcount>2 2</vcount><p>0 1 2 3</p></polylist>',  # polygons of 2 corners
    '<triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/>'
    '<p>0 1 -1</p></triangles>'])  # a negative index (pycollada wraps it)
def test_what_the_lean_reader_does_not_read_is_pycollada_s(tmp_path, primitive):
    path, data = _file(tmp_path, primitive=primitive)
    assert daereader.triangles(data) is None
    try:
        want = _pycollada(path, data)
    except FileFormatError as exc:
        with pytest.raises(FileFormatError) as got:
            collada._converted(path, data)
        assert str(got.value) == str(exc)
    else:
        assert collada._converted(path, data).tobytes() == want.tobytes()


@pytest.mark.parametrize("positions", ["0 0 0 1 0 0 1 1 0 0 1 x", "0 0 0 1 0 0 1 1 0 0 1",
                                       "0 0 0 1 0 0 1 1 0 0 1 0\x0b5"])
def test_malformed_numbers_get_pycollada_s_refusal(tmp_path, positions):
    path, data = _file(tmp_path, positions=positions)
    assert daereader.triangles(data) is None
    with pytest.raises(FileFormatError, match=r"one\.dae:\d+: "):
        collada._converted(path, data)


def test_an_index_past_the_positions_is_refused(tmp_path):
    path, data = _file(tmp_path, primitive=QUAD.replace("0 1 2 3", "0 1 2 4"))
    assert daereader.triangles(data) is None
    with pytest.raises(FileFormatError, match="not a readable COLLADA file"):
        collada._converted(path, data)


@pytest.mark.parametrize("name", ["z1_description/meshes/visual/z1_Link01.dae",
                                  "b1_description/meshes/hip.dae"])
def test_the_decimation_on_the_indexed_mesh_is_the_soup_s(name):
    path = _robots() / name
    if not path.is_file():
        pytest.skip(f"{name} is not in this example-robot-data")
    tris, indexed = collada._read_indexed(str(path), path.read_bytes())
    assert np.array_equal(indexed[0][indexed[1]].reshape(-1, 3, 3), tris)
    for limit in (2_000, collada.ENGINE_FACES):
        assert len(tris) > limit
        soup = collada.decimated(tris, limit)
        assert len(soup) <= limit
        assert collada.decimated(tris, limit, indexed).tobytes() == soup.tobytes()


@pytest.mark.parametrize("text", [b"1 -0 0.5", b"-0.0 1e5 -2.5E-3", b"+.5 5. -.25e+1",
                                  b"\n 0.06334948 0.1494719\t9.99987e-4\r\n",
                                  b"123456789012345678 1", b"1e23 1", b"1.2.3", b"1e", b". 1",
                                  b"1-2", b"1 e5", b"1e5e5", b"--1", b"nan 1", b"0x10"])
def test_the_decimal_parse_is_numpy_s_or_hands_over(text):
    try:
        want = np.fromstring(text, dtype=np.float32, sep=" ")
    except ValueError:
        want = None
    got = numbertext.decimals(text)
    if got is not None:
        assert want is not None and got.tobytes() == want.tobytes()


@pytest.mark.slow
def test_every_array_of_numbers_shipped_parses_to_numpy_s_bits():
    parsed = 0
    for path in sorted(_robots().rglob("*.dae")):
        data = path.read_bytes()
        for start in daereader.tag_starts(data):
            if not data.startswith(b"<float_array", start) or \
                    data.startswith(b"/>", data.index(b">", start) - 1):
                continue
            text = data[data.index(b">", start) + 1:data.index(b"<", start + 1)]
            got = numbertext.decimals(text) if text.strip() else None
            if got is not None:
                parsed += 1
                assert got.tobytes() == np.fromstring(text, np.float32, sep=" ").tobytes()
    assert parsed >= 1_000
