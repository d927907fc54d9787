"""Hostile and large COLLADA files for the mesh reader's tests (tests/formats and tests/net):
written to disk, each with the line its fault is at."""

from __future__ import annotations

from pathlib import Path

HEAD = """<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="1"/></asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="pos"><float_array id="pa" count="{count}">"""
MIDDLE = """</float_array>
      <technique_common><accessor source="#pa" count="{vertices}" stride="3"><param name="X"
      type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor>
      </technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#pos"/></vertices>
    <triangles count="{triangles}"><input semantic="VERTEX" source="#v" offset="0"/>
      <p>{p}</p>
    </triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s">
"""
TAIL = """  </visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
"""
CUBE = "0 0 0 1 0 0 1 1 0 0 1 0 0 0 1 1 0 1 1 1 1 0 1 1"
CUBE_P = "0 2 1 0 3 2 4 5 6 4 6 7 0 1 5 0 5 4 1 2 6 1 6 5 2 3 7 2 7 6 3 0 4 3 4 7"
ONE = '    <node id="n"><instance_geometry url="#g"/></node>\n'


def text(positions: str = CUBE, p: str = CUBE_P, scene: str = ONE) -> str:
    """A COLLADA document of one geometry (``positions``, triangles ``p``) and ``scene``."""
    count = len(positions.split())
    return (HEAD.format(count=count) + positions +
            MIDDLE.format(vertices=count // 3, triangles=len(p.split()) // 3, p=p) +
            scene + TAIL)


def write(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


def line_of(path: Path, needle: str) -> int:
    """The first line of ``path`` holding ``needle``."""
    with open(path) as fh:
        return next(n for n, line in enumerate(fh, 1) if needle in line)


def nested(path: Path, depth: int = 100_000) -> Path:
    """``depth`` nested ``<node>`` elements, one geometry instance at the bottom."""
    scene = "<node>" * depth + '<instance_geometry url="#g"/>' + "</node>" * depth + "\n"
    return write(path, text(scene=scene))


def instances(path: Path, count: int = 200_000) -> Path:
    """``count`` nodes each instancing the 12-triangle cube (about 14 MB for 200,000)."""
    scene = '    <node><translate>1 2 3</translate><instance_geometry url="#g"/></node>\n' * count
    return write(path, text(scene=scene))


def big_positions(path: Path, megabytes: float = 50) -> Path:
    """A valid file whose one ``<float_array>`` is ``megabytes`` MB of positions (a cube's
    12 triangles index its first 8 vertices)."""
    unit = " 0.1234567 -2.345678 3.456789"  # 29 bytes a vertex
    n = int(megabytes * 1e6 / len(unit))
    return write(path, text(positions=CUBE + unit * (n - 8)))
