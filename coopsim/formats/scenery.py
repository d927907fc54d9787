"""``[MESH_n]`` and ``[TERRAIN]`` of a ``.world`` file (normative spec: ``docs/files.md``,
*Meshes and terrain*): their keys, and the frozen specs of :mod:`coopsim.model.scenery` built
from them with the files they name read and checked.

A mesh file is read by :mod:`coopsim.description.meshes` (its triangles counted, its bounds found,
its limits checked); a height field's image by Pillow (PNG and PGM, the ``maps`` extra), its
size checked from its header before its pixels are decoded. Every problem is a
:class:`~coopsim.model.errors.FileFormatError` at the line that names the file or the value.
"""

from __future__ import annotations

import os

import numpy as np

from ..model import scenery as sc
from ..model.errors import FileFormatError, NotAllowedError
from . import maps
from .sections import (POSITION, Bad, Key, PathLike, Section, fixed, number, open_regular, real,
                       rest)

MESH_SUFFIXES = (".stl", ".obj")
IMAGE_SUFFIXES = (".png", ".pgm")


def _scale(key: str, tokens: list, rest: str) -> tuple:
    """``scale s`` (all three axes) or ``scale sx sy sz``."""
    if len(tokens) not in (1, 3):
        raise Bad(f"scale needs 1 or 3 values (factor, or x y z factors), got {len(tokens)}")
    lo, hi = sc.SCALE_RANGE
    values = tuple(number(t) for t in tokens) * (3 if len(tokens) == 1 else 1)
    if not all(lo <= abs(v) <= hi for v in values):
        raise Bad(f"scale factors must be between {lo:g} and {hi:g} (or their negatives), got "
                  f"{' '.join(f'{v:g}' for v in values)}")
    return values


def _span(what: str, bounds: tuple[float, float]):
    lo, hi = bounds
    return real(f"between {lo:g} and {hi:g} m ({what})", lambda v: lo <= v <= hi)


MESH_KEYS = {  # and "color", added by coopsim.formats.keys
    "file": Key(rest("an STL or OBJ file, relative to the world file"), required=True),
    "position": Key(POSITION, required=True),
    "orientation": Key(fixed(("phi", "psi", "theta"), real(
        "between -360 and 360 degrees", lambda v: -360 <= v <= 360)),
                       doc="about x, then y, then z (fixed axes); all three used; default 0 0 0"),
    "scale": Key(_scale, doc="file units into metres; default 1"),
}
TERRAIN_KEYS = {
    "image": Key(rest("a PNG or PGM grey image, relative to the world file"), required=True),
    "size": Key(fixed(("length", "width", "height"), (
        _span("length", sc.HFIELD_SIZE_RANGE), _span("width", sc.HFIELD_SIZE_RANGE),
        _span("height", sc.HFIELD_HEIGHT_RANGE))), required=True),
    "position": Key(POSITION, doc="the field's centre and its black level; default 0 0 0"),
    "base": Key(fixed(("m",), _span("base", sc.HFIELD_BASE_RANGE)),
                doc="thickness below black; default 0.1"),
    "seen_above": Key(fixed(("m",), real(">= 0 m", lambda v: v >= 0))),
}


def _file(section: Section, key: str, path: PathLike, suffixes: tuple, folders) -> str:
    """The file ``key`` names, relative to the world file's folder (inside ``folders`` when
    given); it must exist and be a regular file with one of ``suffixes``."""
    name, line = section.get(key), section.line_of(key)
    where = os.path.normpath(os.path.join(os.path.dirname(os.fspath(path)), name))
    if not where.lower().endswith(suffixes):
        raise FileFormatError(path, line, f"{key} {name!r} must be a {' or '.join(suffixes)} "
                                          "file")
    if folders is not None:
        try:
            where = folders.readable(where, suffixes + tuple(s.upper() for s in suffixes))
        except NotAllowedError as exc:
            raise NotAllowedError(f"{path}:{line}: {key} {name!r}: {exc}") from None
    if not os.path.exists(where):
        raise FileFormatError(path, line, f"{key} {name!r} not found (looked for {where})")
    try:
        open_regular(where).close()
    except Exception as exc:  # noqa: BLE001 -- a directory, a FIFO: one line, no traceback
        raise FileFormatError(path, line, f"{key} {name!r} cannot be read ({exc})") from None
    return where


def mesh(section: Section, path: PathLike, folders=None) -> sc.MeshSpec:
    """The MeshSpec of a ``[MESH_n]`` section, its file read and checked.

    Raises:
        FileFormatError: a missing or malformed file, too many triangles, absurd extents.
    """
    from ..description import meshes  # the description loader's reader: STL and OBJ
    where = _file(section, "file", path, MESH_SUFFIXES, folders)
    line = section.line_of("file")
    try:
        info = meshes.mesh_info(where)
    except FileFormatError as exc:  # a problem inside the mesh: said at its own line too
        raise FileFormatError(path, line, f"mesh {section.get('file')!r}: {exc}") from None
    scale = section.get("scale", (1.0, 1.0, 1.0))
    lo, hi = np.asarray(info.lower, dtype=float), np.asarray(info.upper, dtype=float)
    _check_extent(section, path, (hi - lo) * np.abs(scale))
    rpy = tuple(np.radians(section.get("orientation", (0.0, 0.0, 0.0))).tolist())
    return sc.MeshSpec(section.name, where, section.get("position"), rpy, scale,
                       section.get("color") or sc.MESH_COLOR, section.line, info.triangles,
                       (tuple(lo.tolist()), tuple(hi.tolist())), _ascii_vertices(where))


def _check_extent(section: Section, path: PathLike, extent: np.ndarray) -> None:
    """Raise FileFormatError (at the ``scale`` line, else the ``file`` line) when a mesh's
    scaled bounding box (``extent``, m) is beyond the limits."""
    if sc.MIN_MESH_EXTENT <= extent.max() <= sc.MAX_MESH_EXTENT:
        return
    sides = " x ".join(f"{v:g}" for v in extent)
    raise FileFormatError(path, section.line_of("scale") if section.get("scale") else
                          section.line_of("file"),
                          f"mesh {section.get('file')!r} is {sides} m scaled: each side at most "
                          f"{sc.MAX_MESH_EXTENT:g} m and the largest at least "
                          f"{sc.MIN_MESH_EXTENT:g} m")


def _ascii_vertices(where: str) -> np.ndarray | None:
    """The triangles' corners of an ASCII STL (MuJoCo reads only binary STL), as the mesh
    reader converts it; None for any other file."""
    from ..description import meshes
    binary = meshes.ascii_stl_as_binary(where)
    if binary is None:
        return None
    record = np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    return np.frombuffer(binary, dtype=record, offset=84)["v"].reshape(-1, 3).astype(float)


def terrain(section: Section, path: PathLike, folders=None) -> sc.TerrainSpec:
    """The TerrainSpec of the ``[TERRAIN]`` section, its image read.

    Raises:
        FileFormatError: a missing or unreadable image, one too large or too small.
    """
    where = _file(section, "image", path, IMAGE_SUFFIXES, folders)
    line = section.line_of("image")
    try:
        grey = read_heights(where)
    except maps.MapError as exc:
        raise FileFormatError(path, line, str(exc)) from None
    size = section.get("size")
    pos = section.get("position", (0.0, 0.0, 0.0))
    seen = section.get("seen_above")
    outline = ()
    if seen is not None:
        try:  # maps' rows run from the top: the image's own order
            walls = maps.walls(grey[::-1] * size[2] > seen, size[0] / grey.shape[1],
                               size[1] / grey.shape[0], pos[0] - size[0] / 2,
                               pos[1] - size[1] / 2)
        except maps.MapError as exc:
            raise FileFormatError(path, section.line_of("seen_above"), str(exc)) from None
        outline = tuple((w.position[0], w.position[1], w.size[0], w.size[1]) for w in walls)
    return sc.TerrainSpec(where, size, pos, section.get("base", 0.1), grey, seen, outline,
                          section.line)


def read_heights(path: str) -> np.ndarray:
    """(rows, cols) float32 heights in [0, 1] of a grey image (black 0, white 1; colour
    averaged), row 0 at the image's bottom (the lowest y); its size checked before decoding.

    Raises:
        maps.MapError: not a PNG or PGM, unreadable, too large or too small.
    """
    try:
        from PIL import Image
    except ImportError:
        raise maps.MapError("reading a height field needs Pillow: pip install "
                            "'coopsim[maps]'") from None
    try:
        with open_regular(path) as fh, Image.open(fh) as img:
            cols, rows = img.size
            if (max(cols, rows) > sc.MAX_HFIELD_SIDE or cols * rows > sc.MAX_HFIELD_PIXELS
                    or min(cols, rows) < sc.MIN_HFIELD_SIDE):
                raise maps.MapError(
                    f"height field image {os.path.basename(path)!r} is {cols} x {rows} pixels: "
                    f"each side must be {sc.MIN_HFIELD_SIDE} to {sc.MAX_HFIELD_SIDE} pixels")
            top = 65535.0 if img.mode.startswith("I") else 255.0  # 16-bit PGM or PNG
            grey = np.asarray(img.convert("F"), dtype=np.float32)
    except maps.MapError:
        raise
    except Exception as exc:  # noqa: BLE001 -- Pillow raises many kinds for bad files
        raise maps.MapError(f"height field image {os.path.basename(path)!r} is not a readable "
                            f"PNG or PGM ({exc})") from None
    return np.ascontiguousarray(np.clip(grey / top, 0.0, 1.0)[::-1])


def check_count(meshes: list, path: PathLike) -> None:
    """Raise FileFormatError at the first mesh beyond :data:`~coopsim.model.scenery.MAX_MESHES`."""
    if len(meshes) > sc.MAX_MESHES:
        raise FileFormatError(path, meshes[sc.MAX_MESHES].line, f"a world holds at most "
                                                                 f"{sc.MAX_MESHES} meshes")
