"""``sonar``: eleven distance sensors on the chassis edge, -90 to +90 degrees, 18 apart.

The sonar is one configuration of the range-sensing machinery (:mod:`.ranging`) the ``lidar``
uses too: 11 beams over a 180-degree field of view, cast from the chassis centre and measured
from the chassis edge. Its reading keeps the paper's 11 fixed columns (every client, scenario
and recording reads them unchanged); for other beam counts use ``lidar``.
"""

from __future__ import annotations

import numpy as np

from ...model.commands import Command
from ...model.metric_kind import MetricKind, need_robot, robot_row
from ...model.module import Column, LaserScan, Module
from ...model.params import ParamSpec
from . import kernels, ranging3d  # noqa: F401 (ranging3d: the 3D fan of kernel views)
from .common import lost, noise, rate
from .ranging import beam_angles

COUNT = 11
#: Mounting angles relative to the heading, rad: right (-90 deg) to left (+90 deg).
#: The same bits as np.radians(np.linspace(-90, 90, 11)), the angles before the lidar came.
ANGLES = beam_angles(COUNT, np.pi)


class Sonar(Module):
    """Ray distances from the chassis edge, cast against everything but the robot's own parts.

    The fixed configuration of the ranging machinery the ``lidar`` shares: 11 beams over 180°
    (18° apart), cast from the chassis centre and measured from the chassis edge.

    Reading: 11 distances, m, measured from the chassis edge along rays at −90°, −72°, …, +90°
    from the heading (index 0 = right, 5 = ahead, 10 = left); exactly ``max_range`` when
    nothing is nearer; 0 when pressed against something.
    """

    label = "sonar"
    mount = "link"  # how a described robot's sensor line mounts it
    description = "11 ray distances (m) from the chassis edge, right (-90 deg) to left (+90 deg)"
    params = (
        ParamSpec("max_range", "float", "largest distance measured, m", 2.0, 0.05, 10.0, "m"),
        noise("m", 1.0),
        lost(),
        rate(),
    )
    commands = (Command(200, "read", "sonar", kind="read",
                        doc="11 distances, m, right (-90 deg) to left (+90 deg)"),)
    fields = tuple(f"d{i}" for i in range(COUNT))
    columns = tuple(Column(f"sonar{i}", 1e-3, 2, i, stream=True) for i in range(COUNT))
    draw = {"kind": "rays", "angles": ANGLES.tolist(), "columns": [f"sonar{i}" for i in
                                                                  range(COUNT)],
            "origin": "edge", "color": [255, 110, 20]}

    # its fan's distances (the kernel contract's ``ranges`` view of its beams: the floor
    # slice's cast, or the 3D one), its noise and lost data, clipped to [0, max_range]: one
    # compiled call
    kernel_beams = tuple(ANGLES.tolist())
    kernel_views = ("ranges",)
    kernel_sense = kernels.sonar_sense
    kernel_rowwise = True

    @classmethod
    def observation_space(cls, params, n_targets):
        """Every distance within [0, max_range] m (its kernel keeps noisy ones there)."""
        return np.zeros(COUNT), np.full(COUNT, float(params["max_range"]))

    @classmethod
    def laser_scan(cls, snap, robot, params, radius):
        """From the centre: each reading plus the radius; nothing seen (max_range) is +inf."""
        values = snap.readings.get(cls.label)
        row = snap.index.get(robot)
        if values is None or row is None or row >= len(values):
            return None
        reach = float(params.get("max_range", 2.0))
        reading = np.asarray(values[row], dtype=float)
        ranges = np.where(reading >= reach - 1e-9, np.inf, reading + radius)
        return LaserScan(float(ANGLES[0]), float(ANGLES[1] - ANGLES[0]), ranges, radius,
                         reach + radius)


class MinSonar(MetricKind):
    """``metric NAME min_sonar ROBOT``: the robot's nearest sonar distance, m (a ``[MONITORS]``
    metric kind, declared here beside the module it reads)."""

    label = "min_sonar"
    description = "min_sonar ROBOT: the robot's nearest sonar distance, m"
    args = (1, 1)

    @classmethod
    def check(cls, args, robots, objects) -> None:
        need_robot(args[0], robots)
        if Sonar.label not in robots[args[0]]:
            raise ValueError(f"robot {args[0]} has no {Sonar.label}")

    @classmethod
    def build(cls, robot: str):
        label = Sonar.label
        return lambda snap: robot_row(snap, robot, lambda i: snap.readings[label][i].min())
