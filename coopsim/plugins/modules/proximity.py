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
from . import ranging
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
    """Up to eight IR proximity sensors: nonlinear, saturating, noisy intensities."""

    label = "proximity"
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
        columns = [p[f"angle{i}"] for i in range(SLOTS)]
        for key, group in ranging.configurations(*columns):
            angles = np.radians(np.asarray(key, dtype=float))
            dist = frame.geometry.cast_fan(rows[group], angles, p["range"][group])
            out[group] = intensity(dist, p["range"][group, None], p["knee"][group, None],
                                   p["saturation"][group, None])
        out[np.arange(SLOTS)[None, :] >= p["count"][:, None]] = 0.0
        return out

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        out = super().measure(frame, rows, p, prev, rng)
        out[np.arange(SLOTS)[None, :] >= p["count"][:, None]] = 0.0  # unused stay 0, noiseless
        return out

    @classmethod
    def clip(cls, out, p):
        return np.clip(out, 0.0, p["saturation"][:, None])


def intensity(dist, reach, knee, saturation) -> np.ndarray:
    """IR readings for distances ``dist`` m from the emitter (see the module's docstring)."""
    far = 1.0 / (reach + knee) ** 2
    near = 1.0 / knee ** 2
    value = saturation * (1.0 / (dist + knee) ** 2 - far) / (near - far)
    return np.clip(value, 0.0, saturation)
