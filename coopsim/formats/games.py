"""The scenario sections games add: ``[ZONE_n]`` no-go zones and ``[SQUAD_n]`` squads.

The key tables live in :mod:`coopsim.formats.files` with the other sections; here are the value
parsers of the zone shapes and the checks that build :class:`~coopsim.model.specs.ZoneSpec` and
:class:`~coopsim.model.specs.SquadSpec` (a zone must be a simple polygon on the floor; a squad's
robots must exist and belong to no other squad). Pure: errors are ``FileFormatError``.
"""

from __future__ import annotations

import math

from ..model.errors import FileFormatError
from ..model.plugins import ROBOT_TYPES
from ..model.specs import ZONE_COLORS, FloorSpec, SquadSpec, ZoneSpec, yaw_from_degrees
from .sections import Bad, PathLike, Section, about, number

MAX_VERTICES = 256


def polygon(key: str, tokens: list, rest: str) -> tuple:
    """``polygon x1 y1 x2 y2 x3 y3 ...``: at least 3 vertices, m."""
    if len(tokens) < 6 or len(tokens) % 2:
        raise Bad(f"polygon needs x y pairs of at least 3 vertices, got {len(tokens)} numbers")
    if len(tokens) > 2 * MAX_VERTICES:
        raise Bad(f"polygon has more than {MAX_VERTICES} vertices")
    with about("polygon"):
        values = [number(t) for t in tokens]
    return tuple(zip(values[::2], values[1::2]))


def box(key: str, tokens: list, rest: str) -> tuple:
    """``box x y length width [theta]``: a rectangle centred on (x, y), m, turned by theta
    degrees; returned as its 4 corners."""
    if len(tokens) not in (4, 5):
        raise Bad(f"box needs 4 or 5 values (x y length width [theta]), got {len(tokens)}")
    with about("box"):
        x, y, length, width, *theta = [number(t) for t in tokens]
    if not (length > 0 and width > 0):
        raise Bad(f"box length and width must be > 0, got {length:g} {width:g}")
    yaw = yaw_from_degrees(theta[0] if theta else 0.0)
    c, s = math.cos(yaw), math.sin(yaw)
    return tuple((x + c * dx - s * dy, y + s * dx + c * dy)
                 for dx, dy in ((-length / 2, -width / 2), (length / 2, -width / 2),
                                (length / 2, width / 2), (-length / 2, width / 2)))


def zone(section: Section, floor: FloorSpec, path: PathLike) -> ZoneSpec:
    """The ZoneSpec of a ``[ZONE_n]`` section: exactly one of polygon / box, a simple polygon
    whose vertices all lie on the floor."""
    shapes = [k for k in ("polygon", "box") if section.get(k) is not None]
    if len(shapes) != 1:
        why = "both polygon and box" if shapes else "no polygon or box"
        raise FileFormatError(path, section.line, f"[{section.name}] has {why}; a zone takes "
                                                  "exactly one of them")
    key = shapes[0]
    verts = section.get(key)
    line = section.line_of(key)
    for k, (x, y) in enumerate(verts, start=1):
        if not floor.contains(x, y):
            raise FileFormatError(path, line, f"vertex {k} ({x:g}, {y:g}) of [{section.name}] "
                                              f"is off the {floor.length:g} x {floor.width:g} m "
                                              "floor")
    why = simple_polygon_problem(verts)
    if why:
        raise FileFormatError(path, line, f"[{section.name}] {key}: {why}; a zone is a simple "
                                          "polygon (its edges meet only at shared vertices)")
    kind = section.get("kind")
    color = section.get("color") or ZONE_COLORS[kind]
    return ZoneSpec(section.name, kind, tuple(verts), color, section.line)


def simple_polygon_problem(verts) -> str:
    """Why the closed polygon ``verts`` ((x, y), ...) is not simple ("" when it is): a repeated
    vertex, an edge that doubles back, two edges that cross or touch, or no area."""
    n = len(verts)
    edges = [(verts[i], verts[(i + 1) % n]) for i in range(n)]
    for i, (a, b) in enumerate(edges):
        if a == b:
            return f"vertex {i + 1} repeats vertex {(i + 1) % n + 1}"
    for i in range(n):
        (a, b), (_, c) = edges[i], edges[(i + 1) % n]
        if _cross(a, b, c) == 0 and _dot(a, b, c) < 0:
            return f"edge {(i + 1) % n + 1} doubles back along edge {i + 1}"
    for i in range(n):
        for j in range(i + 2, n):
            if i == 0 and j == n - 1:
                continue  # neighbours through the closing vertex
            if _segments_meet(*edges[i], *edges[j]):
                return f"edges {i + 1} and {j + 1} cross"
    area = sum(a[0] * b[1] - b[0] * a[1] for a, b in edges) / 2
    if abs(area) < 1e-12:
        return "it has no area"
    return ""


def _cross(a, b, c) -> float:
    """z of (b - a) x (c - b)."""
    return (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0])


def _dot(a, b, c) -> float:
    return (b[0] - a[0]) * (c[0] - b[0]) + (b[1] - a[1]) * (c[1] - b[1])


def _orient(p, q, r) -> float:
    return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])


def _on(p, q, r) -> bool:
    """r on segment p-q, given the three are collinear."""
    return min(p[0], q[0]) <= r[0] <= max(p[0], q[0]) and min(p[1], q[1]) <= r[1] <= max(p[1], q[1])


def _segments_meet(p1, p2, q1, q2) -> bool:
    """True when the closed segments p1-p2 and q1-q2 share a point."""
    d1, d2 = _orient(q1, q2, p1), _orient(q1, q2, p2)
    d3, d4 = _orient(p1, p2, q1), _orient(p1, p2, q2)
    if ((d1 > 0) != (d2 > 0)) and d1 and d2 and ((d3 > 0) != (d4 > 0)) and d3 and d4:
        return True
    return any(d == 0 and _on(a, b, c) for d, a, b, c in
               ((d1, q1, q2, p1), (d2, q1, q2, p2), (d3, p1, p2, q1), (d4, p1, p2, q2)))


def squad(section: Section) -> SquadSpec:
    """The SquadSpec of a ``[SQUAD_n]`` section (its robots are checked by :func:`check_squads`)."""
    return SquadSpec(section.get("name"), tuple(section.get("robots")),
                     section.get("formation", "wedge"), section.get("spacing", 0.6),
                     section.get("team", ""), section.line, section.get("radius"))


def check_squads(squads, sections, robots, path: PathLike) -> None:
    """Every squad's name is new, and its robots exist and are in no other squad.

    Args:
        squads: SquadSpecs; sections: their Sections (same order); robots: the RobotSpecs.

    Raises:
        FileFormatError: at the ``name`` or ``robots`` line of the first squad at fault.
    """
    names: set[str] = set()
    for robot in robots:
        names.add(robot.name)
        if robot.type in ROBOT_TYPES:
            names.update(ROBOT_TYPES.get(robot.type).member_names(robot.name))
    taken: dict[str, str] = {}
    squads_seen: dict[str, str] = {}
    for spec, section in zip(squads, sections):
        if spec.name in squads_seen:
            raise FileFormatError(path, section.line_of("name"), f"squad name {spec.name!r} is "
                                  f"already used by [{squads_seen[spec.name]}]")
        squads_seen[spec.name] = section.name
        for robot in spec.robots:
            if robot not in names:
                raise FileFormatError(path, section.line_of("robots"), f"[{section.name}]: no "
                                      f"robot named {robot!r} in this scenario")
            if robot in taken:
                raise FileFormatError(path, section.line_of("robots"), f"[{section.name}]: "
                                      f"robot {robot!r} is already in [{taken[robot]}]")
            taken[robot] = section.name
        _check_radius(spec, section, path)


#: Angle between neighbours on a circle formation of n robots, rad (the half circle's arc is
#: 270 degrees: coopsim.swarm.formations.HALF_CIRCLE_ARC, which the formats layer cannot import).
_ARC = {"circle": 2 * math.pi, "half_circle": 1.5 * math.pi}


def _check_radius(spec, section, path: PathLike) -> None:
    """A ``radius`` is for a circle or half circle, and keeps neighbours ``spacing`` apart."""
    if spec.radius is None:
        return
    line = section.line_of("radius")
    if spec.formation not in _ARC:
        raise FileFormatError(path, line, f"[{section.name}]: radius is for a circle or "
                              f"half_circle formation, not {spec.formation}")
    n = len(spec.robots)
    chord = 2 * spec.radius * math.sin(_ARC[spec.formation] / (2 * n)) if n > 1 else math.inf
    if chord < spec.spacing - 1e-9:
        least = spec.spacing / (2 * math.sin(_ARC[spec.formation] / (2 * n)))
        raise FileFormatError(path, line, f"[{section.name}]: radius {spec.radius:g} m puts "
                              f"neighbours {chord:.2f} m apart, less than the spacing "
                              f"{spec.spacing:g} m (at least {least:.2f} m for {n} robots)")
