"""Compiled kernels release the GIL (coopsim/model/compiled.py, ``nogil``): a Python thread
runs while a kernel runs in another. And a cached kernel is keyed by its options and by the
sources it may inline (``sources_key``: tests/model/test_compile.py), so that no stale machine
code loads."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from coopsim.model import compiled

pytestmark = pytest.mark.skipif(not compiled.COMPILED, reason="nogil is numba's")


@compiled.jit()
def _span(box, work):
    """box[0] after a long loop minus box[0] before it. The loop stores into ``work``, which
    numba cannot prove apart from ``box``: the second read is a read."""
    first = box[0]
    for i in range(len(work)):
        work[i] = math.sqrt(work[i] + i)
    return box[0] - first


def _count(box: np.ndarray, stop: threading.Event) -> None:
    """A Python loop (it needs the GIL for every step) counting in box[0]."""
    while not stop.is_set():
        box[0] += 1.0


def test_a_python_thread_counts_while_a_kernel_runs():
    """While the GIL is held by a kernel, the counting thread cannot take one step: the
    kernel sees box[0] unchanged, however long it runs. Released, the counter advances once
    the kernel lasts long enough to be preempted: the work doubles until it has (bounded by
    work, not by a clock: at most ~2**27 square roots)."""
    box, stop = np.zeros(1), threading.Event()
    counter = threading.Thread(target=_count, args=(box, stop), daemon=True)
    counter.start()
    try:
        while box[0] == 0.0:  # the counter runs (condition, not time)
            threading.Event().wait(0.001)
        advanced, size = 0.0, 1 << 12
        while advanced <= 0.0 and size <= 1 << 27:
            advanced = _span(box, np.zeros(size))
            size <<= 1
    finally:
        stop.set()
        counter.join()
    assert advanced > 0.0


def test_every_kernel_is_compiled_nogil():
    from coopsim.physics.kinematic import kernels as kinematic_kernels, small as kinematic_small
    from coopsim.raycast import jitcast, jitfan, jitgrid, jitwalk

    kernels = [v for m in (kinematic_kernels, kinematic_small, jitcast, jitfan, jitgrid,
                           jitwalk) for v in vars(m).values()
               if type(v).__name__ == "CPUDispatcher"]
    assert len(kernels) > 20
    assert all(k.targetoptions.get("nogil") for k in kernels), \
        [k.__name__ for k in kernels if not k.targetoptions.get("nogil")]
    assert all(isinstance(k._cache, compiled._KeyedCache) for k in kernels)


def test_a_cached_kernel_is_keyed_by_its_options():
    """numba's own key: the signature, the CPU and the bytecode -- the same with and without
    nogil; the options are added."""
    key = _span._cache._index_key((), _span.targetctx.codegen())
    assert key[-2:] == (("nogil",), compiled.sources_key(_span.py_func))


@compiled.jit(inline=True)
def _put(out, rows, i):
    """out[rows[i]] = i, skipping a negative row (a branch: numba counts the arrays handed in
    up and down around it)."""
    if rows[i] >= 0:
        out[rows[i]] = i


@compiled.jit(counted=False)
def _fill(out, rows):
    """:func:`_put` for every row; makes no array (``counted=False``)."""
    for i in range(len(rows)):
        _put(out, rows, i)


def test_an_uncounted_kernel_is_keyed_apart_and_gives_the_same_result():
    """``counted=False`` leaves numba's reference counts out (its ``_nrt``) and is part of
    the cached kernel's key; the result is the counted twin's."""
    assert _fill.targetoptions["_nrt"] is False and _span.targetoptions["_nrt"] is True
    key = _fill._cache._index_key((), _fill.targetctx.codegen())
    assert key[-2:] == (("nogil", "uncounted"), compiled.sources_key(_fill.py_func))
    rows, out = np.array([2, -1, 0]), np.full(3, -5.0)
    counted = compiled.jit()(_fill.py_func)
    twin = np.full(3, -5.0)
    _fill(out, rows)
    counted(twin, rows)
    assert out.tolist() == twin.tolist() == [2.0, -5.0, 0.0]


def test_the_hot_flying_kernels_are_uncounted():
    """The kernels a composed flying step calls on every drone count no array (the 1,000
    Crazyflies' step spent most of its ray cast on the counts: docs/performance.md)."""
    from coopsim.physics.aerial import kernels as aerial_kernels, raykernel as aerial_raykernel
    from coopsim.plugins.modules import flying
    from coopsim.swarm import flight_kernels

    kernels = (aerial_raykernel._rays, aerial_raykernel.place, aerial_raykernel.underside,
               aerial_kernels.step_rows, aerial_kernels.check_rows, aerial_kernels.wrench_rows,
               aerial_kernels.step_checked, flying.imu_sense,
               flying.mocap_sense, flying.altimeter_sense, flight_kernels.cascade,
               flight_kernels.rotors_actuate, flight_kernels.rotors_sense)
    assert [k.__name__ for k in kernels if k.targetoptions.get("_nrt", True)] == []


def test_the_kernels_the_uncounted_ones_call_are_uncounted():
    """The big helpers that kernels call rather than inline (each compiled once, not again in
    every caller) count no array: their callers are uncounted (the copies' step, the composed
    calls), and a counted callee would count each array it is handed up and down on every
    call (a block of copies' step, a kind's noise)."""
    from coopsim.model import noise_kernels
    from coopsim.physics.kinematic import small

    kernels = (small.step_rows, noise_kernels.fill_block)
    assert [k.__name__ for k in kernels if k.targetoptions.get("_nrt", True)] == []
    assert [k.__name__ for k in kernels if k.targetoptions.get("inline") != "never"] == []
