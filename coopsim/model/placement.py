"""Where bodies may start: the placement check of engines that refuse bodies placed inside
each other, inside static geometry or below the floor (``Engine.strict_placement``: mujoco).

MuJoCo resolves an overlap by a contact force as deep as the overlap: a body started inside a
table is thrown out (or, pressed by the table against the floor plane, below it), a thousand
boxes started at one point make half a million contacts a step, and a body below the floor
falls forever. So such a placement is refused before anything is built: ``coopsim check`` and
the loaders say ``file:line`` (:func:`coopsim.formats.enginecheck.check_engine`), a run-time insertion
(``/sim insert_object``, ``insert_robot``, a timed ``insert``) is refused with the sentence
(:class:`coopsim.sim.world.World`).

Each object and each body of a robot section is seen as *solids* the way the mujoco engine
builds them (:mod:`coopsim.physics.mujoco.build`): a box's or cylinder's outline on the floor (a
polygon shape as its bounding box) extruded over its height, a sphere as a ball. A movable
object stands on the floor unless its bottom is above it (its centre at max(z, height / 2));
a ground robot's shapes stand on its origin (``BodySpec.z``), a flyer's are centred on it.
Two solids *overlap* when they reach more than :data:`TOUCH` into each other (touching is
fine: a cube resting on a table). Static solids may overlap each other (walls meet at
corners, a table stands against a wall); the bodies of one item (a robot section) too. A
body whose origin is more than :data:`TOUCH` below the floor (z = 0) is below it (a flyer's
origin is its centre: at z = 0 it stands on the floor as files have it, and MuJoCo lifts it
by half its height in the first steps). What
is not checked: an arm's links and pedestal (they start where the arm's joint angles put
them), targets and zones (they do not collide).

Costs: :func:`first_problem` bins the solids in a 3D grid and checks each against those in
its cells, in the order the items were added (O(N) for N solids of similar size; the few
large ones, walls, are checked against everything in one numpy pass); :func:`clash` checks new
solids against N placed ones in one numpy pass (a run-time insertion).

Frames and units: world frame (z up, the floor's top at z = 0), metres, radians.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .robot_type import Assembly, BodySpec
from .specs import ObjectSpec

TOUCH = 0.005  # m: how far solids may reach into each other (and below the floor) and touch
DEFAULT_HEIGHT = 0.2  # m, the height of a body or object that gives none (as built in 3D)
CIRCLE, BOX, BALL = 0, 1, 2  # solid kinds: extruded circle, extruded box, ball
# Row columns: kind, x, y (centre, m), yaw (rad), a, b (half length and half width of a box,
# the radius of a circle or ball, m), zlo, zhi (m), static (1.0 or 0.0), the height of its
# body's origin (m: a flyer's centre, a ground robot's bottom; an object's centre).
KIND, X, Y, YAW, A, B, ZLO, ZHI, STATIC, ORIGIN = range(10)
WIDTH = 10  # columns
MAX_CELLS = 64  # a solid covering more grid cells is checked against all others at once


class Problem(NamedTuple):
    """A refused placement: ``item`` (its index among the items checked) and why."""

    item: int
    reason: str


class Solids:
    """Solids of items (objects, robot sections) in world coordinates, in the order added:
    :meth:`arrays` gives them as (N, WIDTH) rows (columns :data:`KIND` ... :data:`ORIGIN`) and
    (N,) the index of each row's item.

    Attributes:
        labels: Each item's name in sentences (``object crate``, ``robot cf1``).
    """

    def __init__(self) -> None:
        self._rows: list[np.ndarray] = []
        self._items: list[int] = []
        self.labels: list[str] = []
        self._cache: tuple | None = None

    def add(self, label: str, rows: np.ndarray) -> int:
        """Add one item's solids (world coordinates); return its index."""
        self.labels.append(label)
        self._rows.append(np.asarray(rows, dtype=float).reshape(-1, WIDTH))
        self._items.append(len(self.labels) - 1)
        self._cache = None
        return len(self.labels) - 1

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, items) as arrays."""
        if self._cache is None:
            counts = [len(r) for r in self._rows]
            rows = np.concatenate(self._rows) if self._rows else np.zeros((0, WIDTH))
            self._cache = rows, np.repeat(np.array(self._items, dtype=np.int64), counts)
        return self._cache

    def __len__(self) -> int:
        return len(self.labels)


# --- solids of specs ------------------------------------------------------------------------------

def object_rows(spec: ObjectSpec) -> np.ndarray:
    """(1, WIDTH) the solid of an object where its spec places it (lifted onto the floor)."""
    x, y, z = spec.position
    static = 1.0 if spec.static else 0.0
    if spec.shape == "sphere":
        r = spec.radius
        zc = max(z, r)
        return np.array([[BALL, x, y, 0.0, r, r, zc - r, zc + r, static, zc]])
    height = spec.size[2] or DEFAULT_HEIGHT
    zc = max(z, height / 2)
    kind, a, b = (BOX, spec.size[0] / 2, spec.size[1] / 2) if spec.shape == "box" else \
        (CIRCLE, spec.radius, spec.radius)
    return np.array([[kind, x, y, spec.yaw, a, b, zc - height / 2, zc + height / 2, static,
                      zc]])


def body_rows(body: BodySpec) -> np.ndarray:
    """(K, WIDTH) the solids of an assembly body where its spec places it: its shapes over its
    height, standing on its origin (a flyer's centred on it)."""
    height = body.height or DEFAULT_HEIGHT
    zlo = body.z - (height / 2 if body.free else 0.0)
    c, s = math.cos(body.yaw), math.sin(body.yaw)
    static = 1.0 if body.kind == "static" else 0.0
    out = []
    for shape in body.shapes:
        if shape.kind == "circle":
            kind, (ox, oy), a, b = CIRCLE, shape.offset, shape.radius, shape.radius
        elif shape.kind == "box":
            kind, (ox, oy), (a, b) = BOX, shape.offset, np.divide(shape.size, 2)
        else:  # a polygon: its bounding box, as the mujoco engine builds it
            v = np.asarray(shape.vertices, dtype=float)
            lo, hi = v.min(axis=0), v.max(axis=0)
            kind, (ox, oy), (a, b) = BOX, (lo + hi) / 2 + shape.offset, (hi - lo) / 2
        x, y = body.position[0] + c * ox - s * oy, body.position[1] + s * ox + c * oy
        out.append([kind, x, y, body.yaw, a, b, zlo, zlo + height, static, body.z])
    return np.array(out, dtype=float).reshape(-1, WIDTH)


def assembly_rows(assembly: Assembly) -> np.ndarray:
    """(K, WIDTH) the solids of every body of an assembly (its arms' links left out)."""
    return np.concatenate([body_rows(b) for b in assembly.bodies] or [np.zeros((0, WIDTH))])


def moved(rows: np.ndarray, start: np.ndarray, now: np.ndarray) -> np.ndarray:
    """Solids ``rows`` of bodies that stood at ``start`` and stand at ``now`` (both (N, 4) x,
    y, z, yaw per row, m and rad): turned about z and shifted with their bodies (a tilted body
    is taken level)."""
    out = rows.copy()
    turn = now[:, 3] - start[:, 3]
    c, s = np.cos(turn), np.sin(turn)
    dx, dy = rows[:, X] - start[:, 0], rows[:, Y] - start[:, 1]
    out[:, X], out[:, Y] = now[:, 0] + c * dx - s * dy, now[:, 1] + s * dx + c * dy
    out[:, YAW] += turn
    for column in (ZLO, ZHI, ORIGIN):
        out[:, column] += now[:, 2] - start[:, 2]
    return out


# --- the checks -----------------------------------------------------------------------------------

def first_problem(solids: Solids) -> Problem | None:
    """The first item, in the order added, that is below the floor or overlaps an item added
    before it (static with static excepted), with the sentence; None when all may start."""
    rows, items = solids.arrays()
    if not len(rows):
        return None
    low = _below(rows)
    stop = int(items[np.argmax(low)]) if low.any() else -1  # the first item below the floor
    boxes = _aabbs(rows)
    # cells twice the middle solid's reach: most solids fall in one to eight of them
    size = max(2 * float(np.median((boxes[:, 1::2] - boxes[:, 0::2]).max(axis=1))), 0.01)
    lo = np.floor(boxes[:, 0::2] / size).astype(np.int64)
    hi = np.floor(boxes[:, 1::2] / size).astype(np.int64)
    big = (np.prod(hi - lo + 1, axis=1) > MAX_CELLS).tolist()
    lo, hi = lo.tolist(), hi.tolist()  # Python ints: they hash fast as grid keys
    scan = _Scan(rows, items, boxes)
    starts = np.flatnonzero(np.r_[True, items[1:] != items[:-1]]).tolist()
    for first, last in zip(starts, starts[1:] + [len(rows)]):
        if scan.items[first] == stop:
            k = first + int(np.argmax(low[first:last]))
            return Problem(stop, _below_text(solids.labels[stop], rows[k]))
        for k in range(first, last):
            found = scan.against_all(k, first) if big[k] else scan.against(k, lo[k], hi[k])
            if found is not None:
                return Problem(scan.items[k], _overlap_text(solids.labels, items, rows, k,
                                                            *found))
        for k in range(first, last):
            scan.bin(k, lo[k], hi[k], big[k])
    return None


class _Scan:
    """The solids checked so far, binned in a grid of cells (the large ones kept apart), and
    the checks of one solid against them: pure Python on the few a cell holds."""

    def __init__(self, rows: np.ndarray, items: np.ndarray, boxes: np.ndarray) -> None:
        self.array, self.boxes_array, self.items_array = rows, boxes, items
        self.rows, self.boxes, self.items = rows.tolist(), boxes.tolist(), items.tolist()
        self.grid: dict[tuple, list[int]] = {}
        self.bigs: list[int] = []

    def bin(self, k: int, lo, hi, big: bool) -> None:
        if big:
            self.bigs.append(k)
            return
        for cell in _cells(lo, hi):
            self.grid.setdefault(cell, []).append(k)

    def against(self, k: int, lo, hi) -> tuple | None:
        """(j, depth) of the first earlier solid in ``k``'s cells or among the large ones
        that ``k`` reaches into, or None."""
        seen: set = set()
        for cell in _cells(lo, hi):
            seen.update(self.grid.get(cell, ()))
        found = self._first(k, sorted(seen))
        if found is None and self.bigs:
            found = self._first(k, self._near(k, np.array(self.bigs)))
        return found

    def against_all(self, k: int, first: int) -> tuple | None:
        """The same against every solid before ``first`` (``k`` is a large one)."""
        return self._first(k, self._near(k, np.arange(first)))

    def _near(self, k: int, pool: np.ndarray) -> list:
        return pool[_touching(self.boxes_array[pool], self.boxes_array[k])].tolist()

    def _first(self, k: int, pool) -> tuple | None:
        row, box, item = self.rows[k], self.boxes[k], self.items[k]
        for j in pool:
            if self.items[j] == item or (row[STATIC] and self.rows[j][STATIC]):
                continue
            other = self.boxes[j]
            if all(min(box[a + 1], other[a + 1]) - max(box[a], other[a]) > TOUCH
                   for a in (0, 2, 4)):
                depth = _depth(row, self.rows[j])
                if depth > TOUCH:
                    return j, depth
        return None


def clash(new: np.ndarray, label: str, placed: Solids) -> str:
    """Why solids ``new`` (one item, world coordinates) may not start among ``placed`` (below
    the floor, or overlapping a placed item; static with static excepted); "" when they may.
    One numpy pass over the placed solids."""
    new = np.asarray(new, dtype=float).reshape(-1, WIDTH)
    low = _below(new)
    if low.any():
        return _below_text(label, new[int(np.argmax(low))])
    rows, items = placed.arrays()
    if not len(rows):
        return ""
    boxes, mine = _aabbs(rows), _aabbs(new)
    for k in range(len(new)):
        near = np.flatnonzero(_touching(boxes, mine[k]))
        for j in near:
            depth = _depth(new[k], rows[j])
            if depth > TOUCH and not (new[k, STATIC] and rows[j, STATIC]):
                return _overlap_sentence(label, new[k], placed.labels[items[j]], rows[j], depth)
    return ""


# --- helpers --------------------------------------------------------------------------------------

def _below(rows: np.ndarray) -> np.ndarray:
    return rows[:, ORIGIN] < -TOUCH


def _below_text(label: str, row: np.ndarray) -> str:
    return (f"{label} at {_at(row)} is below the floor: a body must start on or above the "
            "floor (z >= 0)")


def _at(row: np.ndarray) -> str:
    return "(" + ", ".join(f"{round(row[k], 4) + 0.0:g}" for k in (X, Y, ORIGIN)) + ")"


def _overlap_text(labels, items, rows, k: int, j: int, depth: float) -> str:
    return _overlap_sentence(labels[items[k]], rows[k], labels[items[j]], rows[j], depth)


def _overlap_sentence(label: str, row: np.ndarray, other: str, orow: np.ndarray,
                      depth: float) -> str:
    where = "inside static" if orow[STATIC] else "overlapping"
    return (f"{label} at {_at(row)} starts {where} {other} at {_at(orow)} ({depth:.3g} m deep): "
            f"bodies must not start inside each other or inside static geometry (more than "
            f"{TOUCH:g} m): move it")


def _aabbs(rows: np.ndarray) -> np.ndarray:
    """(N, 6) x0, x1, y0, y1, z0, z1 of each solid."""
    c, s = np.abs(np.cos(rows[:, YAW])), np.abs(np.sin(rows[:, YAW]))
    box = rows[:, KIND] == BOX
    hx = np.where(box, c * rows[:, A] + s * rows[:, B], rows[:, A])
    hy = np.where(box, s * rows[:, A] + c * rows[:, B], rows[:, A])
    return np.stack([rows[:, X] - hx, rows[:, X] + hx, rows[:, Y] - hy, rows[:, Y] + hy,
                     rows[:, ZLO], rows[:, ZHI]], axis=1)


def _touching(boxes: np.ndarray, one: np.ndarray) -> np.ndarray:
    """Which of ``boxes`` reach more than TOUCH into box ``one`` along every axis."""
    return ((np.minimum(boxes[:, 1::2], one[1::2]) - np.maximum(boxes[:, 0::2], one[0::2]))
            > TOUCH).all(axis=1)


def _cells(lo: np.ndarray, hi: np.ndarray):
    for i in range(lo[0], hi[0] + 1):
        for j in range(lo[1], hi[1] + 1):
            for k in range(lo[2], hi[2] + 1):
                yield i, j, k


def _depth(p: np.ndarray, q: np.ndarray) -> float:
    """How far solids ``p`` and ``q`` reach into each other, m (<= 0: apart)."""
    if p[KIND] == BALL and q[KIND] == BALL:
        return p[A] + q[A] - math.dist(_centre(p), _centre(q))
    if p[KIND] == BALL or q[KIND] == BALL:
        ball, prism = (p, q) if p[KIND] == BALL else (q, p)
        x, y, z = _centre(ball)
        flat = _outside(prism, x, y)
        up = max(prism[ZLO] - z, z - prism[ZHI], 0.0)
        return ball[A] - math.hypot(max(flat, 0.0), up)
    return min(min(p[ZHI], q[ZHI]) - max(p[ZLO], q[ZLO]), _depth2d(p, q))


def _centre(row: np.ndarray) -> tuple[float, float, float]:
    return row[X], row[Y], (row[ZLO] + row[ZHI]) / 2


def _outside(prism: np.ndarray, x: float, y: float) -> float:
    """Distance from (x, y) to a solid's outline, m (negative inside: minus the depth)."""
    dx, dy = x - prism[X], y - prism[Y]
    if prism[KIND] == CIRCLE:
        return math.hypot(dx, dy) - prism[A]
    c, s = math.cos(prism[YAW]), math.sin(prism[YAW])
    u, v = abs(c * dx + s * dy) - prism[A], abs(-s * dx + c * dy) - prism[B]
    return math.hypot(max(u, 0.0), max(v, 0.0)) if u > 0 or v > 0 else max(u, v)


def _depth2d(p: np.ndarray, q: np.ndarray) -> float:
    """How far the outlines of ``p`` and ``q`` reach into each other, m."""
    if p[KIND] == CIRCLE:
        return p[A] - _outside(q, p[X], p[Y])
    if q[KIND] == CIRCLE:
        return q[A] - _outside(p, q[X], q[Y])
    d = np.array([q[X] - p[X], q[Y] - p[Y]])
    depth = math.inf
    for axis_of in (p, q):  # separating axes: the two boxes' own
        c, s = math.cos(axis_of[YAW]), math.sin(axis_of[YAW])
        for n in ((c, s), (-s, c)):
            reach = sum(abs(n[0] * math.cos(r[YAW]) + n[1] * math.sin(r[YAW])) * r[A]
                        + abs(-n[0] * math.sin(r[YAW]) + n[1] * math.cos(r[YAW])) * r[B]
                        for r in (p, q))
            depth = min(depth, reach - abs(n[0] * d[0] + n[1] * d[1]))
    return depth
