"""``beacon``: range and bearing to a radio beacon, and the closest range so far, computed by
one compiled kernel (coopsim's ``ModuleKernel`` contract, docs/plugins.md); ``chime``: whether
the robot is within the beacon's ring, in Python (a stage of the step); ``beaconbot``: the
``single`` robot carrying both.

Frames and units: world frame; m, rad.
"""

from __future__ import annotations

import math

import numpy as np

from coopsim.model.commands import Command
from coopsim.model.compiled import jit
from coopsim.model.kernel import StateField
from coopsim.model.module import Module
from coopsim.model.params import ParamSpec
from coopsim.plugins.robots.single import MODULES, Single


@jit(inline=True)
def _wrap(a):
    """``a`` wrapped to (-pi, pi], rad."""
    while a > math.pi:
        a -= 2 * math.pi
    while a <= -math.pi:
        a += 2 * math.pi
    return a


@jit()
def beacon_sense(views, rows, params, state, normals, uniforms, prev, out):
    """The ``beacon`` reading of robots ``rows`` (coopsim's kernel contract).

    Args:
        views: (pose,): every robot's (N, 3) x, y, yaw, m, rad (``Beacon.kernel_views``).
        rows: (n,) int64 the robots carrying it; ``pose[rows[k]]`` is row k's robot.
        params: (n, 5) in ``Beacon.params`` order: x, y (m), noise (m), lost (%), rate.
        state: (closest (N,), seen (N,) bool): ``Beacon.state_fields``, then ``seen``.
        normals: (n, 2) standard normals (``noise_draws``), or (n, 0) when ``noise`` is 0.
        uniforms: (n,) uniforms in [0, 1) for lost readings, or empty when ``lost`` is 0.
        prev: (n, 3) the previous reading. out: (n, 3) range m, bearing rad, closest m.
    """
    pose = views[0]
    closest, seen = state
    for k in range(len(rows)):
        i = rows[k]
        dx, dy = params[k, 0] - pose[i, 0], params[k, 1] - pose[i, 1]
        rng, bearing = math.hypot(dx, dy), math.atan2(dy, dx) - pose[i, 2]
        if normals.shape[1]:
            rng += normals[k, 0] * params[k, 2]
            bearing += normals[k, 1] * params[k, 2]
        if len(uniforms) and uniforms[k] * 100.0 < params[k, 3]:  # lost: the last one kept
            rng, bearing = prev[k, 0], prev[k, 1]
        out[k, 0], out[k, 1] = max(rng, 0.0), _wrap(bearing)
        if not seen[i] or out[k, 0] < closest[i]:
            closest[i], seen[i] = out[k, 0], True
        out[k, 2] = closest[i]


class Beacon(Module):
    """Range (m) and bearing (rad, from the heading) to a beacon at (x, y), and the closest
    range this robot has read since the run (or the layout) started."""

    label = "beacon"
    description = "range m, bearing rad to a radio beacon; closest range so far, m"
    params = (
        ParamSpec("x", "float", "beacon's x, m, world frame", 0.0, -100.0, 100.0, "m"),
        ParamSpec("y", "float", "beacon's y, m, world frame", 0.0, -100.0, 100.0, "m"),
        ParamSpec("noise", "float", "std of Gaussian noise added to range (m) and bearing "
                  "(rad)", 0.0, 0.0, 1.0, "m"),
        ParamSpec("lost", "float", "chance a step's reading is lost, %", 0.0, 0.0, 100.0, "%"),
        ParamSpec("rate", "float", "updates per second (0: every step)", 0.0, 0.0, 1000.0,
                  "Hz"),
    )
    commands = (Command(9100, "read", "beacon", kind="read",
                        doc="range m, bearing rad, closest m"),)
    fields = ("range", "bearing", "closest")
    state_fields = (StateField("closest", default=math.inf),)

    # The kernel contract: the frame arrays it reads, the compiled reading. No sense, measure
    # or clip: coopsim's base Module runs the kernel for all three.
    kernel_views = ("pose",)
    kernel_sense = beacon_sense
    kernel_rowwise = True  # row k from row k alone: in chunks on the threads in big worlds

    @classmethod
    def noise_draws(cls, p) -> int:
        """Two normals a robot (range, bearing) when some robot's ``noise`` is non-zero."""
        return 2 if np.any(p["noise"]) else 0


class Chime(Module):
    """1 while the robot is within ``ring`` m of the origin, else 0: Python code only (no
    kernel), so the step runs it as a stage after its compiled part."""

    label = "chime"
    description = "1 within the ring around the origin, else 0"
    params = (ParamSpec("ring", "float", "the ring's radius, m", 1.0, 0.0, 100.0, "m"),)
    commands = (Command(9200, "read", "chime", kind="read", doc="1 inside the ring, else 0"),)
    fields = ("inside",)

    @classmethod
    def sense(cls, frame, rows, p, prev):
        pose = frame.pose[rows]
        inside = np.hypot(pose[:, 0], pose[:, 1]) <= p["ring"]
        return inside.astype(float)[:, None]


class BeaconBot(Single):
    """``single``'s robot carrying a beacon receiver and a chime."""

    label = "beaconbot"
    description = "single's 0.40 m robot plus the beacon receiver and the chime"
    modules = MODULES + ("beacon", "chime")  # single's build lays out the type's modules
