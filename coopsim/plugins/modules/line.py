"""``line``: two infrared floor sensors at the front that see the no-go zones of the scenario.

The swarm-gaming robots respected water and the arena's border with a front infrared sensor that
saw the border line on the floor. Here each zone (``[ZONE_n]``) is drawn on the floor: its outline
is a line ``width`` m wide, its inside is the zone's floor (water...). A sensor reads 1.0 when its
point lies on the line or inside the zone, else 0.0.
"""

from __future__ import annotations

import numpy as np

from ...model.commands import Command
from ...model.module import Module
from ...model.params import ParamSpec
from ...model.specs import ZONE_KINDS
from .common import rate


class Line(Module):
    """Front-left and front-right floor sensors, and the kind of the zone they see.

    Each ``[ZONE_n]`` of a scenario (docs/files.md) lies on the floor: its inside is the zone's
    floor (water, say), its outline a line ``width`` m wide. The ``line`` module's two sensors
    sit ``ahead`` m in front of the robot's centre, ``spread`` m to either side; a sensor reads
    1.0 on the outline or inside the zone. Zones do not collide: a robot that ignores them
    drives through the water. The swarm library's ``AvoidLines`` reflex turns 90 degrees away
    from the side that saw a line (the paper's respect-border behaviour), and its path planner
    keeps out of every zone.

    Reading: left, right: 1.0 where that front floor sensor sees a no-go zone (its outline, a
    line ``width`` m wide, or its inside), else 0.0; the kind of the zone seen: 0 none, 1
    water, 2 border, 3 nogo (the lower code when both see one).
    """

    label = "line"
    description = ("left, right: 1.0 where that front floor sensor sees a zone (its outline or "
                   "inside), else 0.0; kind: 0 none, 1 water, 2 border, 3 nogo")
    params = (
        ParamSpec("ahead", "float", "distance of the sensors ahead of the robot's centre, m",
                  0.25, 0.0, 2.0, "m"),
        ParamSpec("spread", "float", "distance of each sensor left and right of the robot's "
                  "axis, m", 0.08, 0.0, 1.0, "m"),
        ParamSpec("width", "float", "width of a zone's outline on the floor, m", 0.05, 0.0,
                  1.0, "m"),
        rate(),
    )
    commands = (Command(920, "read", "line", kind="read",
                        doc="left, right (1.0 on a zone's outline or inside it, else 0.0), "
                            "kind of the zone seen (0 none, 1 water, 2 border, 3 nogo)"),)
    fields = ("left", "right", "kind")
    _cache: tuple = (None, None)  # (the MapSpec, its edge arrays): zones change with the layout

    @classmethod
    def sense(cls, frame, rows, p, prev):
        out = np.zeros((len(rows), 3))
        edges = cls._edges(frame.extra.get("map"))
        if edges is None or not len(rows):
            return out
        pose = frame.pose[rows]
        c, s = np.cos(pose[:, 2]), np.sin(pose[:, 2])
        pts = []
        for side in (1.0, -1.0):  # left, then right
            fx, fy = p["ahead"], side * p["spread"]
            pts.append(np.column_stack((pose[:, 0] + c * fx - s * fy, pose[:, 1] + s * fx + c * fy)))
        seen, kind = _see(np.vstack(pts), edges, np.tile(p["width"] / 2, 2))
        n = len(rows)
        out[:, 0], out[:, 1] = seen[:n], seen[n:]
        left, right = kind[:n], kind[n:]
        out[:, 2] = np.where((left > 0) & (right > 0), np.minimum(left, right),
                             np.maximum(left, right))  # the lower code when both see one
        return out

    @classmethod
    def _edges(cls, spec):
        """(a (E, 2), b (E, 2), zone of each edge (E,), kind code of each zone (Z,)) of the
        map's zones, or None without zones; computed once per map."""
        if spec is None or not spec.zones:
            return None
        if cls._cache[0] is not spec:
            a, zone = [], []
            for k, z in enumerate(spec.zones):
                a.append(np.asarray(z.polygon, dtype=float))
                zone += [k] * len(z.polygon)
            a = np.vstack(a)
            b = np.vstack([np.roll(np.asarray(z.polygon, dtype=float), -1, axis=0)
                           for z in spec.zones])
            kinds = np.array([ZONE_KINDS.index(z.kind) + 1 for z in spec.zones], dtype=float)
            cls._cache = (spec, (a, b, np.array(zone), kinds))
        return cls._cache[1]


def _see(pts, edges, half_width):
    """(seen (k,), kind code (k,)) of floor points (k, 2): on an outline (within ``half_width``
    (k,) m of an edge) or inside a zone (even-odd rule per zone); the lowest kind code seen."""
    a, b, zone, kinds = edges
    px, py = pts[:, 0:1], pts[:, 1:2]
    e = b - a
    t = np.clip(((px - a[:, 0]) * e[:, 0] + (py - a[:, 1]) * e[:, 1])
                / np.maximum((e * e).sum(axis=1), 1e-300), 0.0, 1.0)
    dist = np.hypot(px - a[:, 0] - t * e[:, 0], py - a[:, 1] - t * e[:, 1])  # (k, E)
    on = dist <= half_width[:, None]
    crosses = (a[:, 1] > py) != (b[:, 1] > py)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_at = a[:, 0] + (py - a[:, 1]) * e[:, 0] / e[:, 1]
    hit = (crosses & (px < x_at)).astype(np.int64)
    n_zones = len(kinds)
    counts = np.zeros((len(pts), n_zones), dtype=np.int64)
    near = np.zeros((len(pts), n_zones), dtype=bool)
    for k in range(n_zones):
        mine = zone == k
        counts[:, k] = hit[:, mine].sum(axis=1)
        near[:, k] = on[:, mine].any(axis=1)
    sees = (counts % 2 == 1) | near  # (k, Z)
    code = np.where(sees, kinds[None, :], np.inf).min(axis=1)
    return sees.any(axis=1).astype(float), np.where(np.isfinite(code), code, 0.0)
