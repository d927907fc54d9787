"""Batched 2D ray casting against circles and line segments: the sensing phase's rays.

The public face is small: make a caster, give it the static shapes once, cast a fan of rays
from every robot (or plain rays) with the moving shapes of this step::

    from coopsim.raycast import cast_fan, make_caster

    caster = make_caster()                        # compiled if numba imports, else numpy
    caster.set_static(circles, segments)          # (C, 3) [x, y, r], (S, 4) [x1, y1, x2, y2], m
    dist = cast_fan(caster, poses, radius, angles, max_range, groups,
                    moving_circles, moving_circle_group, moving_segments, moving_segment_group)

Both casters give the same distances, bit for bit (same float64 formulas, same ray directions).
World frame, metres, radians. Inside, one file per part, no cycle:

- ``numpycast.py``: :class:`RayCaster`, numpy, a uniform grid of (ray, shape) candidate pairs;
  the input checks every caster shares.
- ``jitgrid.py``: the compiled caster's grids (shapes binned in CSR) and exact hit functions.
- ``jitwalk.py``: one ray's walk through a grid (DDA), one fan ray's direction.
- ``jitfan.py``: a robot's fan against the shapes around it (the sonar's kernel).
- ``jitcast.py``: :class:`JitRayCaster` (the kernels driven from Python), :func:`make_caster`,
  :func:`cast_fan`.
- ``auto.py``: :class:`AutoCaster` (numpy until the compiled kernels have loaded in the
  background, :func:`start_warmup`), what a run uses.

Every kernel is made with :func:`coopsim.model.compiled.jit` (numba optional).
"""

from __future__ import annotations

from .auto import AutoCaster, ready, start_warmup, wait_ready, warmup_seconds
from .jitcast import (CELL_SIZE, JitRayCaster, contiguous, fan_directions, make_caster,
                      sonar_distances)
from .numpycast import RayCaster

#: Every robot's fan of rays, less its chassis radius: :func:`~.jitcast.sonar_distances`.
cast_fan = sonar_distances

__all__ = ["AutoCaster", "CELL_SIZE", "JitRayCaster", "RayCaster", "cast_fan", "contiguous",
           "fan_directions", "make_caster", "ready", "sonar_distances", "start_warmup",
           "wait_ready", "warmup_seconds"]
