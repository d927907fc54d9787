"""coopsim's COLLADA reader (coopsim/description/daereader.py) gives pycollada's triangles to the
bit (pycollada, the ``test`` extra, is the oracle: coopsim reads every file itself), and the
decimation on its indexed mesh gives the soup's triangles to the bit.

Over a sample of example-robot-data's files (one a feature); ``COOPSIM_DAE_ALL=1`` runs the
comparison over every ``.dae`` of the package (262 in version 6, all bit-identical)."""

from __future__ import annotations

import io
import os
import re
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

pycollada = pytest.importorskip("collada")

from coopsim.description import collada, daereader, numbertext  # noqa: E402
from coopsim.model.errors import FileFormatError  # noqa: E402

#: Files of example-robot-data and what each shows.
SAMPLE = ["hector_description/meshes/quadrotor/quadrotor_base.dae",  # rotate, scale
          "a1_description/meshes/hip.dae",  # <matrix>, empty controllers
          "anymal_b_simple_description/meshes/foot/anymal_foot.dae",  # comment, camera
          "icub_description/meshes/upmc/collision/icub_simple_collision_neck_1.dae",
          "z1_description/meshes/visual/z1_Link02.dae",  # triangles, normals
          "borinot_description/meshes/propeller_cw.dae",
          "anymal_c_simple_description/meshes/battery.dae",  # polylist
          "anymal_c_simple_description/meshes/handle.dae",  # <lines> beside triangles
          "anymal_b_simple_description/meshes/hip/anymal_hip_l.dae"]  # a source read and not


def _robots() -> Path:
    """example-robot-data's robots folder (the ``test`` extra installs the package)."""
    try:
        found = metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (pip install '.[test]')")
    return Path(found.locate_file("cmeel.prefix/share/example-robot-data/robots"))


_UNREAD = re.compile(rb"<(library_images|library_effects|library_materials|bind_material|"
                     rb"library_cameras|library_lights|library_animations)\b.*?</\1>", re.S)


def _pycollada(data: bytes) -> np.ndarray:
    """The triangles pycollada gives (float64 corners of its bound primitives, times the
    unit, rounded to float32): what coopsim gave when pycollada read its files. Without
    materials and textures: one naming a texture the package lacks makes pycollada drop the
    geometry bound to it (ANYmal B's foot), which coopsim never did."""
    ignore = [pycollada.common.DaeUnsupportedError, pycollada.common.DaeBrokenRefError]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        doc = pycollada.Collada(io.BytesIO(_UNREAD.sub(b"", data)), ignore=ignore)
        unit = doc.assetInfo.unitmeter or 1.0
        parts = []
        for bound in doc.scene.objects("geometry"):
            for prim in bound.primitives():
                tris = prim.triangleset() if hasattr(prim, "triangleset") else prim
                index = getattr(tris, "vertex_index", None)
                if index is not None and len(index) and np.shape(index)[1:] == (3,):
                    vertex = (np.asarray(tris.vertex, dtype=float) * unit).astype(np.float32)
                    parts.append(vertex[np.asarray(index)])
        return np.concatenate(parts).reshape(-1, 3, 3)


def _cases() -> list:
    if os.environ.get("COOPSIM_DAE_ALL"):
        robots = _robots()
        return [str(p.relative_to(robots)) for p in sorted(robots.rglob("*.dae"))]
    return SAMPLE


@pytest.mark.parametrize("name", _cases())
def test_shipped_files_give_pycollada_s_triangles_to_the_bit(name):
    path = _robots() / name
    if not path.is_file():
        pytest.skip(f"{name} is not in this example-robot-data")
    data = path.read_bytes()
    got = collada._converted(str(path), data)
    want = _pycollada(data)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def _same_parts(one: list, other: list) -> None:
    assert len(one) == len(other) > 0
    for (v1, i1), (v2, i2) in zip(one, other):
        assert v1.tobytes() == v2.tobytes() and np.array_equal(i1, i2)


def test_a_comment_is_skipped_by_the_cut_and_cdata_reads_the_whole_file():
    path = _robots() / "z1_description/meshes/visual/z1_Link06.dae"
    data = path.read_bytes()
    head = data.index(b"<asset>")
    commented = data[:head] + b"<!-- a <p>1 2 3</p> in a comment -->" + data[head:]
    cdata = data[:head] + b"<extra><![CDATA[ a <p> ]]></extra>" + data[head:]
    assert daereader._cut(commented, daereader.tag_starts(commented)) is not None
    assert daereader._cut(cdata, daereader.tag_starts(cdata)) is None
    cut = daereader.triangles(str(path), data)[0]
    _same_parts(cut, daereader.triangles(str(path), commented)[0])
    _same_parts(cut, daereader.triangles(str(path), cdata)[0])


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
    got = collada._converted(path, data)
    assert got.shape == (2, 3, 3)
    assert got.tobytes() == _pycollada(data).tobytes()


POLYGONS = ('<polygons count="2"><input semantic="VERTEX" source="#v" offset="0"/>'
            '<p>0 1 2 3</p><p>0 2 1</p></polygons>')


def test_polygons_are_fanned_as_pycollada_fans_them(tmp_path):
    path, data = _file(tmp_path, primitive=POLYGONS)
    got = collada._converted(path, data)
    assert got.shape == (3, 3, 3)
    assert got.tobytes() == _pycollada(data).tobytes()


@pytest.mark.parametrize("primitive, corners", [
    ('<tristrips count="1"><input semantic="VERTEX" source="#v" offset="0"/>'
     '<p>0 1 3 2</p></tristrips>', [[0, 1, 3], [3, 1, 2]]),  # the second wound back
    ('<trifans count="1"><input semantic="VERTEX" source="#v" offset="0"/>'
     '<p>0 1 2 3</p></trifans>', [[0, 1, 2], [0, 2, 3]]),
    ('<lines count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1</p></lines>'
     + QUAD, [[0, 1, 2], [0, 2, 3]])])  # lines skipped
def test_strips_and_fans_are_read_and_lines_skipped(tmp_path, primitive, corners):
    path, data = _file(tmp_path, primitive=primitive)
    (vertex, index), = daereader.triangles(path, data)[0]
    assert index.tolist() == corners and len(vertex) == 4


@pytest.mark.parametrize("primitive, line, why", [
    ('<lines count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1</p></lines>',
     0, "mesh has no triangles"),
    ('<polylist count="2"><input semantic="VERTEX" source="#v" offset="0"/>'
     '<vcount>2 2</vcount><p>0 1 2 3</p></polylist>', 10, "<vcount> must count each polygon"),
    ('<triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/>\n'
     '<p>0 1 -1</p></triangles>', 11, "vertex index -1 is outside the 4 positions"),
    ('<triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/>\n'
     '<p>0 1 12345678901234567890</p></triangles>', 11,
     "a vertex index of over 18 digits is outside the 4 positions"),
    ('<triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/>\n'
     '<p>0 1 2.5</p></triangles>', 11, "<p> holds '2.5', not an integer"),
    (QUAD.replace("0 1 2 3", "0 1 2 4"), 10, "vertex index 4 is outside the 4 positions"),
    (POLYGONS.replace("<p>0 2 1</p>", "<ph>0 1 2</ph>"), 10,
     "polygons with holes (<ph>) are not read")])
def test_what_is_wrong_is_said_at_its_line(tmp_path, primitive, line, why):
    """Wrapped by pycollada before (a negative index to the last vertex, a 20-digit one to
    int32's -1) or refused by it without a line."""
    path, data = _file(tmp_path, primitive=primitive)
    with pytest.raises(FileFormatError) as got:
        collada._converted(path, data)
    assert (got.value.line, got.value.reason[:len(why)]) == (line, why), str(got.value)


@pytest.mark.parametrize("positions, why", [
    ("0 0 0 1 0 0 1 1 0 0 1 x", "<float_array> holds 'x', not a finite decimal number"),
    ("0 0 0 1 0 0 1 1\n0 0 1 nan", "<float_array> holds 'nan', not a finite decimal number"),
    ("0 0 0 1 0 0 1 1 0 0 1 -inf", "<float_array> holds '-inf', not a finite decimal number"),
    ("0 0 0 1 0 0 1 1 0 0 1 1e99", "<float_array>'s number 12 is past float32's range"),
    ("0 0 0 1 0 0 1 1 0 0 1", "11 position numbers: not 3 a vertex"),
    ("0 0 0 1 0 0 1 1 0 0 1 1-2", "<float_array> holds a word that is not a number"),
    ("0 0 0 1 0 0 1 1 0 0 1 0\x0b5", "not well-formed XML")])
def test_numbers_that_are_no_finite_positions_are_refused_at_their_line(tmp_path, positions,
                                                                         why):
    """A NaN position was read as 0 before (pycollada's rule), inf refused at line 0."""
    path, data = _file(tmp_path, positions=positions)
    with pytest.raises(FileFormatError) as got:
        collada._converted(path, data)
    assert got.value.line == 5 + positions.count("\n") * ("nan" in positions), str(got.value)
    assert got.value.reason.startswith(why), str(got.value)


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


def test_lines_after_cut_texts_of_many_lines_are_the_file_s(tmp_path):
    """The number texts are cut before the XML is parsed: an element after them is still
    said at its line in the file."""
    positions = "0 0 0\n1 0 0\n1 1 0\n0 1 0.5\n"
    primitive = QUAD.replace("<p>0 1 2 3</p>", "<p>0 1\n2 3</p>").replace(
        "<vcount>4</vcount>", "<vcount>5</vcount>")
    path, data = _file(tmp_path, positions=positions, primitive=primitive)
    with pytest.raises(FileFormatError) as got:
        collada._converted(path, data)
    want = data.decode().splitlines().index(next(line for line in data.decode().splitlines()
                                                 if "<vcount>5" in line)) + 1
    assert got.value.line == want == 14, str(got.value)
