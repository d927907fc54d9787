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


DESCRIPTIONS = Path(__file__).resolve().parent / "data" / "descriptions"
BOX = ('<collision><origin xyz="0 0 0.1"/><geometry><box size="0.04 0.04 0.2"/></geometry>'
       '</collision>')


def scenario(folder: Path, dae: Path) -> Path:
    """A scenario in ``folder`` (its world, its URDF beside it) of one arm whose forearm
    collides as the COLLADA file ``dae`` (named relative to ``folder``, or absolute)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "floor.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    arm = (DESCRIPTIONS / "tiny_arm.urdf").read_text().replace(
        BOX, f'<collision><geometry><mesh filename="{dae}"/></geometry></collision>', 1)
    (folder / f"{Path(dae).stem}.urdf").write_text(arm)
    path = folder / f"{Path(dae).stem}.scenario"
    path.write_text(f"[WORLD]\nfile floor.world\n\n[ROBOT_1]\ndescription {Path(dae).stem}.urdf"
                    "\nname r1\nposition 0.5 0 0\n\n[SETTINGS]\nengine mujoco\n")
    return path


def peak(path: str) -> dict:
    """Read the COLLADA file ``path`` in this process (the mesh cache off) and say what it
    cost: RSS after the imports and at the peak (bytes), the mesh's bytes (triangles and
    indexed mesh) or the refusal."""
    import os
    os.environ["COOPSIM_MESH_CACHE"] = "off"
    from coopsim.description import collada
    from coopsim.model.errors import FileFormatError
    base = _status("VmRSS")
    try:
        st = os.stat(path)  # what dae_triangles reads, with the indexed mesh it keeps
        tris, (table, corner), _ = collada._cached(os.path.realpath(path), st.st_size,
                                                   st.st_mtime_ns, collada.MAX_TRIANGLES)
        out = dict(mesh=tris.nbytes + table.nbytes + corner.nbytes, triangles=len(tris))
    except FileFormatError as exc:
        out = dict(refused=str(exc))
    return dict(out, base=base, peak=_status("VmHWM"), size=os.path.getsize(path))


def _status(key: str) -> int:
    """A figure of /proc/self/status in bytes: VmRSS now, VmHWM the peak of this program
    (getrusage's ru_maxrss is not: it keeps the forking parent's peak across exec)."""
    with open("/proc/self/status") as fh:
        line = next(line for line in fh if line.startswith(key + ":"))
    return int(line.split()[1]) * 1024


if __name__ == "__main__":  # python tests/daehelpers.py FILE: peak(FILE) as JSON
    import json
    import sys
    print(json.dumps(peak(sys.argv[1])))
