"""``light``: an ambient-light sensor (the Kilobot's phototransistor, read by a 10-bit ADC).

The light sources are the world's **targets** (``[TARGETS]``, docs/files.md): each is a lamp
standing at the target's x, y, ``height`` m above the sensor, as ARGoS's light entities stand
above its arenas. A robot's sensor, ``x`` m ahead of its chassis centre (the Kilobot's sits on
the battery behind the wheels' axis: ``x`` -0.0155 on that type), reads

    value = ambient + sum over the lamps it sees of  gain / (d^2 + height^2),

with ``d`` the distance on the floor to the lamp, m: the inverse-square law of a point source
(``gain`` is the reading of one lamp 1 m away), plus the ``ambient`` level of the room. A lamp
is seen when the straight line to it meets no wall, object or other robot (one ray per
(robot, lamp) pair on the geometry every range sensor uses): shadows are cast in the plane, as
if walls were taller than the lamps. Gaussian ``noise`` (counts) is added, ``lost`` keeps the
previous reading, and the value is kept in [0, ``saturation``] (1023: the Kilobot's
``get_ambientlight()`` range). Sources farther than ``range`` m are ignored (their light is
below a count at the defaults).
"""

from __future__ import annotations

import numpy as np

from ...model.commands import Command
from ...model.module import Module
from ...model.params import ParamSpec
from .common import lost, noise, rate


class Light(Module):
    """Ambient light: the targets as lamps, inverse-square falloff, shadowed by walls.

    The ``light`` module is the Kilobot's ambient-light sensor (any robot type may carry it).
    The light sources are the world's **targets** (``[TARGET]``): each is a lamp ``height`` m
    above the sensor at the target's x, y, as ARGoS's light entities hang above its arenas. A
    sensor at ``x`` m ahead of the chassis centre reads

        light = ambient + Σ over the lamps it sees of gain / (d² + height²)

    with ``d`` the distance on the floor to a lamp (m): a point source's inverse-square law,
    where ``gain`` is what one lamp reads 1 m away, plus the room's ``ambient`` level. A lamp
    farther than ``range`` is not summed. A lamp is hidden when the straight line to it meets a
    wall, an object or another robot first (one ray per robot and lamp on the geometry every
    range sensor uses; shadows are cast in the plane, as if walls stood taller than the lamps).
    Gaussian ``noise`` (counts) is added, ``lost`` keeps the previous reading, and the value
    stays in [0, ``saturation``] (1023, the ADC's full scale). The defaults (gain 10, height
    0.1 m) give about 100 counts 30 cm from a lamp, 500 at 10 cm and saturate within a few
    centimetres. One sensor cannot tell where the light comes from, only whether it grows:
    tests/plugins/test_light.py drives a Kilobot to a lamp 50 cm away by run and tumble (run 1
    cm; when the light fell meanwhile, turn on the spot), the textbook phototaxis.
    """

    label = "light"
    mount = "x"  # how a described robot's sensor line mounts it
    description = ("ambient light (0..saturation counts): the targets as lamps, inverse-square "
                   "falloff, shadowed by walls, objects and robots")
    params = (
        ParamSpec("gain", "float", "reading of one lamp 1 m away, counts", 10.0, 0.0, 1e6),
        ParamSpec("height", "float", "height of the lamps above the sensor, m", 0.1, 0.001,
                  100.0, "m"),
        ParamSpec("ambient", "float", "reading with no lamp in sight, counts", 0.0, 0.0, 1e6),
        ParamSpec("saturation", "float", "largest reading (the ADC's full scale), counts",
                  1023.0, 1.0, 1e6),
        ParamSpec("x", "float", "where the sensor is, ahead of the chassis centre, m", 0.0, -5.0,
                  5.0, "m"),
        ParamSpec("range", "float", "lamps farther than this are not summed, m", 10.0, 0.01,
                  1000.0, "m"),
        noise("counts", 1e5),
        lost(),
        rate(),
    )
    commands = (Command(2500, "read", "light", kind="read",
                        doc="the light reading, counts (0..saturation)"),)
    fields = ("light",)

    @classmethod
    def sense(cls, frame, rows, p, prev):
        out = np.zeros((len(rows), 1))
        lamps = frame.targets
        if not len(rows):
            return out
        out[:, 0] = p["ambient"]
        if not len(lamps):
            return out
        pose = frame.pose[rows]
        at = pose[:, :2] + p["x"][:, None] * np.column_stack((np.cos(pose[:, 2]),
                                                              np.sin(pose[:, 2])))
        delta = lamps[None, :, :] - at[:, None, :]  # (robots, lamps, 2)
        d = np.hypot(delta[..., 0], delta[..., 1])
        cam, lamp = np.nonzero((d <= p["range"][:, None]) & (d > 1e-9))
        if len(cam):
            dist = d[cam, lamp]
            hit = frame.geometry.cast(at[cam], delta[cam, lamp] / dist[:, None], dist,
                                      ray_group=frame.group[rows][cam])
            seen = hit >= dist - 1e-6
            cam, dist = cam[seen], dist[seen]
            h = p["height"][cam]
            np.add.at(out[:, 0], cam, p["gain"][cam] / (dist ** 2 + h ** 2))
        under = d <= 1e-9  # standing right under a lamp: nothing in between
        if under.any():
            r, _ = np.nonzero(under)
            np.add.at(out[:, 0], r, p["gain"][r] / p["height"][r] ** 2)
        return cls.clip(out, p)

    @classmethod
    def clip(cls, out, p):
        return np.clip(out, 0.0, p["saturation"][:, None])
