"""``proximity``: infrared proximity sensors on the chassis edge (the e-puck's, the Thymio's).

A real IR proximity sensor measures the light of its own emitter reflected by an obstacle: the
reading is not a distance but an intensity that rises steeply as the obstacle nears, saturates
at contact, falls to the ambient level beyond a few centimetres and is noisy. Here sensor ``i``
sits on the chassis edge at ``angle<i>`` degrees from the heading and looks outwards; with ``d``
the distance from the edge to the first thing its beam meets (the range-sensing machinery of
:mod:`.ranging`, the sonar's cast),

    value = saturation * (g(d) - g(range)) / (g(0) - g(range)),  g(d) = 1 / (d + knee)^2,

0 at ``range`` and beyond, ``saturation`` at contact; ``knee`` (m) sets how soon it saturates
(an inverse-square law softened near the emitter). Gaussian ``noise`` (in reading units) is
added and the value kept in [0, saturation]. A robot uses its first ``count`` sensors; the
others read 0.
"""

from __future__ import annotations

import numpy as np

from ...model.commands import Command
from ...model.module import Module
from ...model.params import ParamSpec
from . import ranging, ranging3d
from .common import lost, noise, rate

SLOTS = 8
#: The e-puck's eight sensors, degrees from the heading (+ = left): IR0 front right round the
#: back to IR7 front left (docs/robots.md).
EPUCK = (-17.0, -49.0, -90.0, -150.0, 150.0, 90.0, 49.0, 17.0)


def _angles() -> tuple[ParamSpec, ...]:
    return tuple(ParamSpec(f"angle{i}", "float", f"direction of sensor {i} from the heading, "
                           "degrees (+ = left)", EPUCK[i], -180.0, 180.0, "deg")
                 for i in range(SLOTS))


class Proximity(Module):
    """Up to eight IR proximity sensors: nonlinear, saturating, noisy intensities.

    Sensor *i* sits on the chassis edge at ``angle<i>`` and looks outwards. The reflected
    intensity of an obstacle ``d`` m from the edge is
    ``saturation · (g(d) − g(range)) / (g(0) − g(range))`` with ``g(d) = 1 / (d + knee)²``: an
    inverse-square law softened near the emitter, 0 at ``range`` and beyond, ``saturation`` at
    contact. ``noise`` is in reading units; values stay within 0..``saturation``; ``lost``
    repeats the previous reading. A robot uses its first ``count`` sensors; the others read 0.
    """

    label = "proximity"
    mount = "angle"  # how a described robot's sensor line mounts it
    description = ("IR proximity: 8 intensities, 0 (nothing within range) to saturation "
                   "(touching), rising steeply as an obstacle nears")
    params = (
        ParamSpec("count", "int", "sensors in use (the first count; the rest read 0)", SLOTS,
                  1, SLOTS),
        ParamSpec("range", "float", "distance from the edge beyond which a sensor reads 0, m",
                  0.07, 0.005, 2.0, "m"),
        ParamSpec("knee", "float", "softening of the inverse-square law near the emitter, m",
                  0.01, 0.0005, 1.0, "m"),
        ParamSpec("saturation", "float", "reading at contact", 4095.0, 1.0, 1e6),
        noise("", 1e5),
        lost(),
        rate(),
    ) + _angles()
    commands = (Command(2200, "read", "proximity", kind="read",
                        doc="8 intensities, sensor 0 to 7: 0 nothing within range .. "
                            "saturation touching"),)
    fields = tuple(f"ir{i}" for i in range(SLOTS))

    @classmethod
    def sense(cls, frame, rows, p, prev):
        out = np.zeros((len(rows), SLOTS))
        groups, unused = cls._layout(p)
        for angles, group in groups:
            sub = rows if group is None else rows[group]  # None: one layout, every row
            reach, knee, saturation = ((p["range"], p["knee"], p["saturation"]) if group is None
                                       else (p["range"][group], p["knee"][group],
                                             p["saturation"][group]))
            dist = (ranging3d.fan(frame, sub, angles, reach) if ranging3d.active(frame)
                    else frame.geometry.cast_fan(sub, angles, reach))
            value = intensity(dist, reach[:, None], knee[:, None], saturation[:, None])
            if group is None:
                out = value
            else:
                out[group] = value
        if unused is not None:
            out[unused] = 0.0
        return out

    @classmethod
    def noise_draws(cls, p) -> int:
        """A normal per sensor slot when some robot's ``noise`` is non-zero (the base
        ``measure`` then reads the plan's block, ``frame.normals``; its lost data the plan's
        uniforms)."""
        zero = "noise" not in p or "noise" in getattr(p, "zero", ()) or not p["noise"].any()
        return 0 if zero else SLOTS

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        out = super().measure(frame, rows, p, prev, rng)
        unused = cls._layout(p)[1]
        if unused is not None:
            out[unused] = 0.0  # unused stay 0, noiseless
        return out

    _layouts: tuple = ((), None)  # (the parameter arrays they were made from, the layouts)

    @classmethod
    def _layout(cls, p) -> tuple[list, np.ndarray | None]:
        """([(beam angles rad, rows of ``p`` sharing them, or None for all)], the (n, 8) mask
        of the sensors not in use, or None): grouped again only when the parameter arrays
        change (new arrays with every parameter change; a rate's due robots: every step)."""
        columns = (p["count"], *(p[f"angle{i}"] for i in range(SLOTS)))
        last, layouts = cls._layouts
        if len(last) == len(columns) and all(a is b for a, b in zip(last, columns)):
            return layouts
        groups = ranging.configurations(*columns[1:])
        groups = [(np.radians(np.asarray(key, dtype=float)),
                   None if len(groups) == 1 else group) for key, group in groups]
        unused = np.arange(SLOTS)[None, :] >= p["count"][:, None]
        layouts = (groups, unused if unused.any() else None)
        cls._layouts = (columns, layouts)  # holding the arrays: their ids are not reused
        return layouts

    @classmethod
    def clip(cls, out, p):
        return np.clip(out, 0.0, p["saturation"][:, None])


def intensity(dist, reach, knee, saturation) -> np.ndarray:
    """IR readings for distances ``dist`` m from the emitter (see the module's docstring)."""
    far = 1.0 / (reach + knee) ** 2
    near = 1.0 / knee ** 2
    value = saturation * (1.0 / (dist + knee) ** 2 - far) / (near - far)
    return np.clip(value, 0.0, saturation)
