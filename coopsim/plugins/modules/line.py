"""``line``: two infrared floor sensors at the front that see the no-go zones of the scenario.

The swarm-gaming robots respected water and the arena's border with a front infrared sensor that
saw the border line on the floor. Here each zone (``[ZONE_n]``) is drawn on the floor: its outline
is a line ``width`` m wide, its inside is the zone's floor (water...). A sensor reads 1.0 when its
point lies on the line or inside the zone, else 0.0.
"""

from __future__ import annotations

import math

from ...model.commands import Command
from ...model.compiled import jit
from ...model.module import Module
from ...model.params import ParamSpec
from .common import rate
from .kernels import _clip


@jit()
def line_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``line``: per robot ``rows[k]`` (``views``: its ``pose``, the ``zones`` view) the left
    and right sensors' readings (1.0 where the point ``ahead`` m in front of the centre,
    ``spread`` m to that side, lies within ``width`` / 2 m of a zone's outline or inside the
    zone, else 0.0) and the kind code of the zone seen (the lowest code a sensor sees; where
    both see one, the lower of the two; 0 none). params: ahead, spread, width (m), rate."""
    pose, zones = views
    for k in range(len(rows)):
        x, y, yaw = pose[rows[k], 0], pose[rows[k], 1], pose[rows[k], 2]
        c, s = math.cos(yaw), math.sin(yaw)
        fx, fy, half = params[k, 0], params[k, 1], params[k, 2] / 2
        out[k, 0], left = _see(x + c * fx - s * fy, y + s * fx + c * fy, zones, half)
        out[k, 1], right = _see(x + c * fx - s * -fy, y + s * fx + c * -fy, zones, half)
        out[k, 2] = min(left, right) if left > 0 and right > 0 else max(left, right)


@jit(inline=True)
def _see(px, py, zones, half):
    """(1.0 where floor point (``px``, ``py``) m lies within ``half`` m of an edge of a zone's
    outline or inside the zone (even-odd rule per zone), else 0.0; the lowest kind code of
    the zones it is in or on, 0 none) against the ``zones`` view (a, b, zone, kind)."""
    a, b, zone, kinds = zones
    best, near, hits = math.inf, False, 0
    for j in range(len(zone)):  # each zone's edges a run, in file order
        ax, ay = a[j, 0], a[j, 1]
        ex, ey = b[j, 0] - ax, b[j, 1] - ay
        t = _clip(((px - ax) * ex + (py - ay) * ey) / max(ex * ex + ey * ey, 1e-300), 0.0, 1.0)
        near = near or math.hypot(px - ax - t * ex, py - ay - t * ey) <= half
        if (ay > py) != (b[j, 1] > py) and px < ax + (py - ay) * ex / ey:
            hits += 1
        if j + 1 == len(zone) or zone[j + 1] != zone[j]:  # the zone's last edge
            if (near or hits % 2 == 1) and kinds[zone[j]] < best:
                best = kinds[zone[j]]
            near, hits = False, 0
    return (0.0, 0.0) if best == math.inf else (1.0, best)


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

    # each sensor's point against every zone's outline and inside (the ``zones`` view):
    # one compiled call
    kernel_views = ("pose", "zones")
    kernel_sense = line_sense
    kernel_rowwise = True
