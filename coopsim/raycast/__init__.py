"""Batched 2D ray casting against circles and line segments: the sensing phase's rays.

The public face is small: make a caster, give it the static shapes once, cast a fan of rays
from every robot (or plain rays) with the moving shapes of this step::

    from coopsim.raycast import cast_fan, make_caster

    caster = make_caster()
    caster.set_static(circles, segments)          # (C, 3) [x, y, r], (S, 4) [x1, y1, x2, y2], m
    dist = cast_fan(caster, poses, radius, angles, max_range, groups,
                    moving_circles, moving_circle_group, moving_segments, moving_segment_group)

World frame, metres, radians. Inside, one file per part, no cycle:

- ``jitgrid.py``: the caster's grids (shapes binned in CSR) and exact hit functions.
- ``jitwalk.py``: one ray's walk through a grid (DDA), one fan ray's direction.
- ``jitfan.py``: a robot's fan against the shapes around it (the sonar's kernel).
- ``jitcast.py``: :class:`JitRayCaster` (the kernels driven from Python), :func:`make_caster`,
  :func:`cast_fan`; the input checks.

Every kernel is made with :func:`coopsim.model.compiled.jit` and compiled once
(:mod:`coopsim.model.compiled`).
"""

from __future__ import annotations

from .jitcast import (CELL_SIZE, JitRayCaster, contiguous, fan_directions, make_caster,
                      sonar_distances)

#: Every robot's fan of rays, less its chassis radius: :func:`~.jitcast.sonar_distances`.
cast_fan = sonar_distances

__all__ = ["CELL_SIZE", "JitRayCaster", "cast_fan", "contiguous", "fan_directions",
           "make_caster", "sonar_distances"]
