"""The sensing phase's noise: how many normals and uniforms each module kind draws a step, and
drawing them for a step from the run's generator in one block (counter-based, so the same
seed gives the same noise however the readings are computed: plain, fused or in copies).

Split out of :mod:`.sensing` (which re-exports these names) at its seam: nothing here reads
the world.
"""

from __future__ import annotations

import numpy as np

from ..model import noise_kernels
from ..model.capabilities import reading_fields
from ..model.module import Module

_BASE_MEASURE = Module.measure.__func__  # modules that keep it: see noise_plan
_BASE_DRAWS = Module.noise_draws.__func__  # modules that declare none: see noise_plan


def noise_plan(module, values, n_targets: int) -> tuple[int, bool]:
    """(normals per measured robot, whether it takes a uniform for lost data) of a module kind
    with parameter arrays ``values``: its own ``noise_draws`` where it declares one, else its
    reading's width when it keeps the base ``measure`` and some ``noise`` is non-zero; a
    uniform when its ``lost`` is non-zero somewhere and it declares draws or keeps the base
    ``measure``. A module that overrides ``measure`` and declares nothing draws from the run's
    generator itself (the slow path) and gets no block."""
    declared = getattr(module.noise_draws, "__func__", None) is not _BASE_DRAWS
    base = getattr(module.measure, "__func__", None) is _BASE_MEASURE
    if declared:
        k = int(module.noise_draws(values))
    elif base and "noise" in values and "noise" not in values.zero:
        k = len(reading_fields(module, n_targets))
    else:
        k = 0
    lossy = (declared or base) and "lost" in values and "lost" not in values.zero
    return k, lossy


def draw_noise(plan: list[tuple], due: list[tuple], rng: np.random.Generator,
               layout: tuple | None = None, key: int | None = None) -> dict:
    """Every kind's noise for this step from one 64-bit key taken from ``rng`` (one
    ``random_raw``; :mod:`coopsim.model.noise_kernels` makes the normals and the lost-data
    uniforms of it, counter-based), in the plan's kind order, split into read-only per-kind
    blocks: label -> ((rows, k) normals or None, (rows,) uniforms or None). No key is taken
    when nobody needs noise (a noiseless run draws nothing, as before). ``layout``:
    :func:`noise_layout` of ``plan`` and ``due``, when the caller kept it (a plan without
    rates: the same every step); ``key``: this step's, when taken before (:func:`noise_key`)."""
    n_normal, n_uniform, parts = noise_layout(plan, due) if layout is None else layout
    if not parts:
        return {}
    if key is None:
        key = noise_key(rng)
    normal = noise_kernels.normals(key, n_normal) if n_normal else None
    uniform = noise_kernels.uniforms(key, n_uniform) if n_uniform else None
    for arr in (normal, uniform):
        if arr is not None:
            arr.setflags(False)  # write=False
    return {label: (normal[i:i + a].reshape(n, k) if a else None,
                    uniform[j:j + b] if b else None)
            for label, n, k, i, a, j, b in parts}


def draw_some(key: int, layout: tuple, labels) -> dict:
    """The blocks of kinds ``labels`` only of the draw :func:`draw_noise` makes of ``key`` and
    ``layout`` (counter-based: the same bits as its slices, the others not computed)."""
    out = {}
    for label, n, k, i, a, j, b in layout[2]:
        if label in labels:
            z = noise_kernels.normals(key, a, i).reshape(n, k) if a else None
            u = noise_kernels.uniforms(key, j + b)[j:] if b else None
            for arr in (z, u):
                if arr is not None:
                    arr.setflags(False)  # write=False
            out[label] = (z, u)
    return out


def noise_key(rng: np.random.Generator) -> int:
    """This step's noise key: the next 64 bits of the run's generator."""
    return int(rng.bit_generator.random_raw())


def noise_layout(plan: list[tuple], due: list[tuple]) -> tuple[int, int, tuple]:
    """(normals, uniforms, parts) of one step's draw: each part (label, rows, k, start and
    count of its normals, start and count of its uniforms) of a kind that needs noise."""
    parts, i, j = [], 0, 0
    for entry, (rows, _, _) in zip(plan, due):
        a, b = len(rows) * entry[7], len(rows) if entry[8] else 0
        if a or b:
            parts.append((entry[0], len(rows), entry[7], i, a, j, b))
            i, j = i + a, j + b
    return i, j, tuple(parts)
