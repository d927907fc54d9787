"""Maps from images: ``[WORLD] map FILE`` turns an occupancy image into static walls.

Two kinds of file:

* a **ROS map_server YAML** file (``image``, ``resolution``, ``origin``, ``negate``,
  ``occupied_thresh``, ``free_thresh``; ``mode`` trinary or scale) naming a PGM or PNG image:
  the image's lower-left pixel sits at ``origin`` (x, y in m, world frame; the yaw must be 0)
  and each pixel is ``resolution`` m square;
* a **PNG or PGM image** on its own (Stage's bitmap worlds): stretched over the whole floor,
  with ROS's default thresholds (occupied above 0.65, dark = occupied).

A pixel of value v (0..255, grey; colour images are averaged) is occupied when
``p = (255 - v) / 255`` (``v / 255`` with ``negate 1``) exceeds ``occupied_thresh``; an
image's alpha channel, where present, makes transparent pixels free. Occupied pixels are merged
into few axis-aligned rectangles (runs along each row, then equal runs of neighbouring rows
stacked), which become static ``box`` objects named ``MAP_1``, ``MAP_2``... of the world: both
engines collide with them, every sensor sees them, the swarm planner plans around them, and
the viewer, plots and Foxglove draw them as they draw every wall.

PGM (P2 and P5, 8 and 16 bit) is read here with numpy; PNG needs Pillow (the ``maps`` extra,
already installed with matplotlib): a well-kept decoder, where PNG's per-row filters would make
a hand-written one in numpy slow for a 4,000 x 4,000 map.
"""

from __future__ import annotations

import os
import re

import numpy as np

from ..model.specs import FloorSpec, ObjectSpec
from .sections import open_regular

MAP_COLOR = (90, 90, 90)
HEIGHT = 0.5  # m, the walls' height (2D physics ignores it)
MAX_PIXELS = 100_000_000  # a larger image is refused (memory), not loaded
#: Walls a map may make (each a static box of the world): see docs/reliability.md, *Maps*
MAX_WALLS = 20_000
SUFFIXES = (".png", ".pgm", ".yaml", ".yml")


class MapError(ValueError):
    """A map file that cannot be used; the message says why (the caller adds file:line)."""


def load_map(path: str, floor: FloorSpec, confine: bool = False) -> tuple[ObjectSpec, ...]:
    """The static walls of the map file ``path`` on ``floor``; with ``confine`` a YAML's image
    must lie in the YAML's own folder (a map a network request named).

    Raises:
        MapError: missing file, not an image, bad YAML values, a map off the floor.
    """
    if not os.path.lexists(path):
        raise MapError(f"map file {path!r} not found")
    _open(path, "map file").close()  # a FIFO or a device is refused, never read
    if path.lower().endswith((".yaml", ".yml")):
        meta, image = _yaml_image(path, confine)
        occupied = read_occupancy(image, meta["negate"], meta["occupied_thresh"])
        res = meta["resolution"]
        x0, y0 = meta["origin"][0], meta["origin"][1]
        rows, cols = occupied.shape
        _on_floor(floor, x0, y0, cols * res, rows * res)
        return walls(occupied, res, res, x0, y0)
    occupied = read_occupancy(path, False, 0.65)
    rows, cols = occupied.shape
    return walls(occupied, floor.length / cols, floor.width / rows, -floor.length / 2,
                 -floor.width / 2)


def _yaml_image(path: str, confine: bool) -> tuple[dict, str]:
    """(the YAML's keys, its image's resolved path); with ``confine`` the image must lie in
    the YAML's own folder."""
    meta = read_yaml(path)
    folder = os.path.dirname(os.path.realpath(path))
    image = os.path.realpath(os.path.join(folder, meta["image"]))
    if confine and os.path.commonpath([folder, image]) != folder:
        raise MapError(f"map image {meta['image']!r} is outside the map file's folder")
    return meta, image


def floor_of(path: str, confine: bool = False, height: float = 0.1) -> FloorSpec:
    """The floor of a scenario whose ``[WORLD]`` names a ROS map_server YAML and no world
    file: the map's extent, as map_server users expect, as the smallest floor centred on the
    origin that holds the whole map (exactly the map when its origin is minus half its size).

    Raises:
        MapError: an image alone (it has no size in metres), or a map load_map refuses.
    """
    if not path.lower().endswith((".yaml", ".yml")):
        raise MapError("a map image alone has no size in metres: name a world file too "
                       "('file', for the floor), or use a ROS map_server .yaml")
    if not os.path.isfile(path):
        raise MapError(f"map file {path!r} not found")
    meta, image = _yaml_image(path, confine)
    rows, cols = read_image(image).shape[:2]
    res, (x0, y0, _) = meta["resolution"], meta["origin"]
    return FloorSpec(2 * max(abs(x0), abs(x0 + cols * res)),
                     2 * max(abs(y0), abs(y0 + rows * res)), height)


def _on_floor(floor: FloorSpec, x0: float, y0: float, w: float, h: float) -> None:
    eps = 1e-9
    if x0 < -floor.length / 2 - eps or y0 < -floor.width / 2 - eps \
            or x0 + w > floor.length / 2 + eps or y0 + h > floor.width / 2 + eps:
        raise MapError(f"the map ({w:g} x {h:g} m from ({x0:g}, {y0:g})) does not fit on the "
                       f"{floor.length:g} x {floor.width:g} m floor centred on the origin")


# -- reading --------------------------------------------------------------------------------------

def _open(path: str, what: str):
    """``path`` opened for reading bytes if it is a regular file (never blocking on a FIFO:
    :func:`coopsim.model.files.open_regular`).

    Raises:
        MapError: missing, unreadable, or not a regular file (the sentence says which).
    """
    try:
        return open_regular(path)
    except OSError as exc:
        raise MapError(f"{what} {path!r} cannot be read: {exc.strerror or exc}") from None

_YAML_KEYS = ("image", "resolution", "origin", "negate", "occupied_thresh", "free_thresh", "mode")


def read_yaml(path: str) -> dict:
    """The keys of a ROS map_server YAML file (a flat ``key: value`` file), checked.

    Raises:
        MapError: a missing ``image`` or ``resolution``, a value out of its range.
    """
    try:
        with _open(path, "map file") as fh:
            text = fh.read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MapError(f"map file {path!r} cannot be read: {exc}") from None
    raw = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, colon, value = line.partition(":")
        if not colon or key.strip() not in _YAML_KEYS:
            raise MapError(f"{path}:{n}: not a map_server key ({', '.join(_YAML_KEYS)}): "
                           f"{line[:40]!r}")
        raw[key.strip()] = value.strip().strip("'\"")
    return _meta(raw, path)


def _meta(raw: dict, path: str) -> dict:
    for key in ("image", "resolution"):
        if key not in raw:
            raise MapError(f"map file {path!r} has no {key}")
    try:
        meta = {"image": raw["image"], "resolution": float(raw["resolution"]),
                "origin": [float(v) for v in re.findall(r"[-+0-9.eE]+",
                                                         raw.get("origin", "[0, 0, 0]"))],
                "negate": raw.get("negate", "0") in ("1", "true", "True"),
                "occupied_thresh": float(raw.get("occupied_thresh", 0.65)),
                "free_thresh": float(raw.get("free_thresh", 0.196))}
    except ValueError as exc:
        raise MapError(f"map file {path!r}: a number is not a number ({exc})") from None
    if not 0.0 < meta["resolution"] <= 1000.0 or not np.isfinite(meta["resolution"]):
        raise MapError(f"map resolution = {raw['resolution']} must be above 0 (m per pixel)")
    if len(meta["origin"]) != 3 or meta["origin"][2] != 0.0:
        raise MapError("map origin must be [x, y, 0]: coopsim places maps unrotated")
    if not 0.0 <= meta["free_thresh"] <= meta["occupied_thresh"] <= 1.0:
        raise MapError("map thresholds must satisfy 0 <= free_thresh <= occupied_thresh <= 1")
    return meta


def read_image(path: str) -> np.ndarray:
    """The image at ``path`` as (rows, cols) grey values 0..255 (float), row 0 at the top; an
    alpha channel turns transparent pixels white (free).

    Raises:
        MapError: missing, not a PGM or PNG image, or too large.
    """
    with _open(path, "map image") as fh:
        head = fh.read(8)
    if head[:2] in (b"P5", b"P2"):
        return _pgm(path)
    if head == b"\x89PNG\r\n\x1a\n":
        return _png(path)
    raise MapError(f"map image {path!r} is not an image (PNG or PGM)")


def read_occupancy(path: str, negate: bool, occupied_thresh: float) -> np.ndarray:
    """``occupancy(read_image(path), negate, occupied_thresh)``, the same booleans, without a
    float per pixel: every pixel's value is an integer (8 or 16 bit), so the grey value and the
    threshold rule are worked out once per possible value and looked up (a 4,000 x 4,000 map
    no longer passes 128 MB arrays of floats through five operations)."""
    raw = _raw(path)
    if raw is None:  # a plain (P2) PGM: text, read as before
        return occupancy(read_image(path), negate, occupied_thresh)
    values, top, alpha = raw
    grey = np.arange(256 if values.dtype.itemsize == 1 else 65536, dtype=float)  # any value
    grey = grey * (255.0 / top) if alpha is None else grey  # as _pgm and _png make them
    table = occupancy(grey, negate, occupied_thresh)
    occupied = _look_up(table, values)
    if alpha is not None:  # transparent pixels read as white (255), as _png has them
        occupied[alpha < 128] = table[255]
    return occupied


def _look_up(table: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``table[values]``; one comparison when the table is a threshold (the rule is monotonic
    in the value, and so are its rounded float operations), cheaper than a gather."""
    k = int(np.argmin(table)) if table[0] else int(np.argmax(table))
    if table[0] and not table[k:].any():
        return values < k  # occupied below k (dark, negate 0)
    if not table[0] and table[k:].all():
        return values >= k  # occupied from k on (bright, negate 1)
    return table[values]


def _raw(path: str):
    """(integer pixel values, their maximum, alpha or None) of a P5 PGM or a PNG; None for
    a P2 PGM. Raises MapError as :func:`read_image`."""
    with _open(path, "map image") as fh:
        head = fh.read(8)
    if head[:2] == b"P5":
        values, top = _pgm(path, raw=True)
        return values, top, None
    if head == b"\x89PNG\r\n\x1a\n":
        grey_alpha = _png(path, raw=True)
        return grey_alpha[..., 0], 255, grey_alpha[..., 1]
    if head[:2] == b"P2":
        return None
    return read_image(path)  # raises the right MapError


def _pgm(path: str, raw: bool = False):
    """A PGM's grey values (0..255 floats, rows x cols); with ``raw`` (its integer values,
    maxval) instead."""
    with _open(path, "map image") as fh:
        data = fh.read()
    tokens, at = [], 0
    while len(tokens) < 4:  # magic, width, height, maxval, with comments between
        m = re.compile(rb"\s*(#[^\n]*\n\s*)*([^\s#]+)").match(data, at)
        if m is None:
            raise MapError(f"map image {path!r} is not a valid PGM file")
        tokens.append(m.group(2))
        at = m.end()
    try:
        w, h, top = int(tokens[1]), int(tokens[2]), int(tokens[3])
    except ValueError:
        raise MapError(f"map image {path!r} is not a valid PGM file") from None
    if not (w > 0 and h > 0 and 0 < top < 65536) or w * h > MAX_PIXELS:
        raise MapError(f"map image {path!r}: size {w} x {h} or maximum {top} is not usable")
    if tokens[0] == b"P2":
        values = np.array(data[at:].split()[:w * h], dtype=float)
    else:
        dtype = np.uint8 if top < 256 else np.dtype(">u2")
        values = np.frombuffer(data, dtype=dtype, count=w * h, offset=at + 1) \
            if len(data) >= at + 1 + w * h * np.dtype(dtype).itemsize else np.zeros(0)
    if values.size != w * h:
        raise MapError(f"map image {path!r} is cut short ({values.size} of {w * h} pixels)")
    if raw:
        return values.reshape(h, w), top
    return values.reshape(h, w).astype(float) * (255.0 / top)


def _png(path: str, raw: bool = False) -> np.ndarray:
    """A PNG's grey values (0..255 floats, transparent pixels 255); with ``raw`` its (rows,
    cols, 2) uint8 grey and alpha instead."""
    try:
        from PIL import Image
    except ImportError:
        raise MapError("reading a PNG map needs Pillow: pip install 'coopsim[maps]' (or give "
                       "the map as PGM)") from None
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        with _open(path, "map image") as fh, Image.open(fh) as img:
            img = img.convert("LA")
            grey_alpha = np.asarray(img, dtype=np.uint8 if raw else float)
    except Exception as exc:  # noqa: BLE001 -- Pillow raises many kinds for bad files
        raise MapError(f"map image {path!r} is not a readable PNG ({exc})") from None
    if raw:
        return grey_alpha
    grey, alpha = grey_alpha[..., 0], grey_alpha[..., 1]
    return np.where(alpha < 128, 255.0, grey)


def occupancy(grey: np.ndarray, negate: bool, occupied_thresh: float) -> np.ndarray:
    """(rows, cols) bool: occupied pixels (ROS map_server's rule, see the module)."""
    p = grey / 255.0 if negate else (255.0 - grey) / 255.0
    return p > occupied_thresh


# -- merging --------------------------------------------------------------------------------------

def rectangles(occupied: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Occupied pixels merged into rectangles (col, row, width, height), pixel units, row 0 at
    the top, ordered by row then column: the runs of each row, stacked while the next row has
    the very same run."""
    return [tuple(r) for r in _merge(occupied).tolist()]


def count_walls(occupied: np.ndarray) -> int:
    """How many rectangles :func:`rectangles` makes of ``occupied``, counted a block of rows at
    a time (memory bounded by the block, not by the count: a checkerboard of 16 million pixels
    is counted, and refused, without making its 8 million rectangles)."""
    keys = _changed_rows(occupied)
    step = max(1, _BLOCK_PIXELS // max(1, occupied.shape[1]))
    total = 0
    for a in range(0, len(keys), step):
        lo = max(0, a - 1)  # the key row before the block: whether its first row's runs go on
        k, _, _, goes_on = _runs(occupied[keys[lo:a + step]])
        total += int(np.count_nonzero(~goes_on[k >= a - lo]))
    return total


_BLOCK_PIXELS = 1 << 22  # pixels of one block of rows that count_walls works on at once


def _changed_rows(occupied: np.ndarray) -> np.ndarray:
    """Indices of the rows that differ from the row above (row 0 always): most rows of a map
    repeat the one above, and runs need finding only in the others."""
    changed = np.ones(occupied.shape[0], dtype=bool)
    changed[1:] = (occupied[1:] != occupied[:-1]).any(axis=1)
    return np.nonzero(changed)[0]


def _runs(rows: np.ndarray):
    """The runs of occupied pixels of ``rows`` (each row different from the one before):
    (row index, first column, end column, whether the row before has the very same run), in
    row-major order, as arrays (numpy, no Python loop over pixels or runs)."""
    cols = rows.shape[1]
    padded = np.zeros((rows.shape[0], cols + 2), dtype=np.int8)
    padded[:, 1:-1] = rows
    edges = np.diff(padded, axis=1)
    k, c0 = np.nonzero(edges == 1)
    _, c1 = np.nonzero(edges == -1)  # same order: row-major, one end per start
    span = np.int64(cols + 1)
    code = (k.astype(np.int64) * span + c0) * span + c1  # sorted, as the runs are
    above = code - span * span  # the same run one row up
    at = np.minimum(np.searchsorted(code, above), max(len(code) - 1, 0))
    goes_on = code[at] == above if len(code) else np.zeros(0, dtype=bool)
    return k, c0, c1, goes_on


def _merge(occupied: np.ndarray) -> np.ndarray:
    """(n, 4) int64 rectangles (col, row, width, height) ordered by row then column."""
    keys = _changed_rows(occupied)
    k, c0, c1, goes_on = _runs(occupied[keys])
    order = np.lexsort((k, c1, c0))  # a rectangle's runs: same columns, consecutive key rows
    first = ~goes_on[order]
    begin = np.nonzero(first)[0]
    last = np.append(begin[1:], len(order))[:len(begin)] - 1
    ends = np.append(keys, occupied.shape[0])
    top = keys[k[order[begin]]]
    bottom = ends[k[order[last]] + 1]
    left = c0[order[begin]]
    out = np.column_stack((left, top, c1[order[begin]] - left, bottom - top)).astype(np.int64)
    return out[np.lexsort((out[:, 0], out[:, 1]))]


def walls(occupied: np.ndarray, res_x: float, res_y: float, x0: float,
          y0: float) -> tuple[ObjectSpec, ...]:
    """Static boxes for the occupied pixels of an image whose lower-left corner is at (x0, y0)
    m with pixels res_x by res_y m (row 0 is the image's top row).

    Raises:
        MapError: the map would make more than :data:`MAX_WALLS` walls (counted first).
    """
    n = count_walls(occupied)
    if n > MAX_WALLS:
        raise MapError(f"map makes {n} walls, at most {MAX_WALLS} (merge its occupied pixels "
                       "into larger areas, or lower its resolution)")
    rows = occupied.shape[0]
    out = []
    for k, (c, r, w, h) in enumerate(_merge(occupied).tolist(), 1):
        cx = x0 + (c + w / 2) * res_x
        cy = y0 + (rows - r - h / 2) * res_y
        out.append(ObjectSpec(f"MAP_{k}", "box", (w * res_x, h * res_y, HEIGHT),
                              (cx, cy, HEIGHT / 2), 0.0, 0.0, MAP_COLOR))
    return tuple(out)
