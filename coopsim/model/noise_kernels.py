"""A step's sensor noise from one 64-bit key: counter-based, so any normal of the draw is a pure
function of (key, its index) and a compiled pass draws its own block inside its call.

The sensing plan takes one key a step from the run's generator
(:func:`coopsim.sim.sensing.draw_noise`: ``rng.bit_generator.random_raw()``), so the same
scenario and seed give the same bits at any thread count, and a restored or reseeded generator
still sets the noise. Normal ``k`` of a step starts from SplitMix64's output ``k`` of the key
(Steele, Lea and Flood 2014: ``mix(key + (k + 1) gamma)``) and is shaped by the ziggurat of
Marsaglia and Tsang (2000; 256 strips, 52-bit magnitudes, numpy's constants); the ~1 % a first
try refuses (a wedge or the tail) draw on from a stream of their own keyed by that first output.
Uniform ``k`` (lost data) is output ``k`` of a second stream (the key mixed once more), its top
53 bits over 2^53, in [0, 1).

The compiled kernels (:func:`fill_normals`, :func:`fill_uniforms`, and :func:`fill_block`, which
the composed calls call for each kind's block) are the one implementation. Only IEEE operations and libm's ``exp`` and
``log1p`` (the rare refusals) make a value.
"""

from __future__ import annotations

import math

import numpy as np

from .compiled import jit, warmer

_U = np.uint64
GAMMA, MIX1, MIX2 = _U(0x9E3779B97F4A7C15), _U(0xBF58476D1CE4E5B9), _U(0x94D049BB133111EB)
SECOND = _U(0xD1B54A32D192ED03)  # the uniforms' stream: mix(key ^ SECOND)
S30, S27, S31, S11, S8, S9 = _U(30), _U(27), _U(31), _U(11), _U(8), _U(9)
MAG, LOW8 = _U((1 << 52) - 1), _U(255)
R = 3.6541528853610088  # the tail's start: numpy's ziggurat_nor_r
INV_R = 1.0 / R
AREA = 0.00492867323399  # each strip's area (numpy's ziggurat_nor_v... with the tail)
M52 = float(1 << 52)
TO_UNIT = 1.0 / float(1 << 53)


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ki (256,) uint64, wi (256,), fi (256,)): Marsaglia and Tsang's kn, wn, fn for 256
    strips over 52-bit magnitudes (their construction, in Python floats)."""
    ki, wi, fi = np.zeros(256, np.uint64), np.zeros(256), np.zeros(256)
    dn = tn = R
    q = AREA / math.exp(-0.5 * dn * dn)
    ki[0], ki[1] = int(dn / q * M52), 0
    wi[0], wi[255] = q / M52, dn / M52
    fi[0], fi[255] = 1.0, math.exp(-0.5 * dn * dn)
    for i in range(254, 0, -1):
        dn = math.sqrt(-2.0 * math.log(AREA / dn + math.exp(-0.5 * dn * dn)))
        ki[i + 1] = int(dn / tn * M52)
        tn = dn
        fi[i], wi[i] = math.exp(-0.5 * dn * dn), dn / M52
    return ki, wi, fi


KI, WI, FI = _tables()


@jit(inline=True)
def mix(z):
    """SplitMix64's output function of the uint64 ``z``."""
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return z ^ (z >> S31)


@jit(inline=True)
def _unit(z):
    """[0, 1) from the top 53 bits of the uint64 ``z``."""
    return float(z >> S11) * TO_UNIT


@jit(inline=True)
def _refused(z, first):
    """The ziggurat from the uint64 ``z`` once its first try was refused (``first``:
    Marsaglia and Tsang's loop, drawing on from the stream keyed by ``first``)."""
    c = _U(0)
    while True:
        idx = int(z & LOW8)
        rabs = (z >> S9) & MAG
        neg = (z >> S8) & _U(1)
        x = float(rabs) * WI[idx]
        if rabs < KI[idx]:
            return -x if neg else x
        if idx == 0:  # the tail beyond R
            while True:
                c += _U(1)
                xx = -INV_R * math.log1p(-_unit(mix(first + c * GAMMA)))
                c += _U(1)
                yy = -math.log1p(-_unit(mix(first + c * GAMMA)))
                if yy + yy > xx * xx:
                    return -(R + xx) if neg else R + xx
        c += _U(1)
        u = _unit(mix(first + c * GAMMA))
        if (FI[idx - 1] - FI[idx]) * u + FI[idx] < math.exp(-0.5 * x * x):
            return -x if neg else x
        c += _U(1)
        z = mix(first + c * GAMMA)


@jit(inline=True)
def normal(key, k):
    """Standard normal ``k`` (int) of the draw keyed by the uint64 ``key``."""
    z = mix(key + _U(k + 1) * GAMMA)
    idx = int(z & LOW8)
    rabs = (z >> S9) & MAG
    if rabs < KI[idx]:
        x = float(rabs) * WI[idx]
        return -x if (z >> S8) & _U(1) else x
    return _refused(z, z)


@jit()
def fill_normals(key, start, out):
    """``out`` (m,) = normals ``start`` .. ``start + m - 1`` of the draw keyed by ``key``."""
    for i in range(len(out)):
        out[i] = normal(key, start + i)


@jit(inline=True)
def uniform(key, k):
    """Uniform ``k`` (int) in [0, 1) of the draw keyed by the uint64 ``key``."""
    return _unit(mix(mix(key ^ SECOND) + _U(k + 1) * GAMMA))


@jit()
def fill_uniforms(key, out):
    """``out`` (m,) = uniforms 0 .. m - 1 in [0, 1) of the draw keyed by ``key``."""
    for i in range(len(out)):
        out[i] = uniform(key, i)


@jit(counted=False)
def fill_block(key, starts, z, u):
    """One kind's block of a step's draw keyed by ``key``: ``z`` (n, k) = normals
    ``starts[0]`` .. (row by row), ``u`` (n,) = uniforms ``starts[1]`` ..; a negative start
    leaves its array as it is (the kind draws none). Called, not inlined: a composed call draws
    for several kinds, and each inlined copy was compiled again (uncounted: it makes no array,
    so a call from the uncounted composed calls costs no reference counts)."""
    if starts[0] >= 0:
        k = z.shape[1]
        for i in range(z.shape[0]):
            for j in range(k):
                z[i, j] = normal(key, starts[0] + i * k + j)
    if starts[1] >= 0:
        for i in range(len(u)):
            u[i] = uniform(key, starts[1] + i)


def _load() -> None:
    """Compile (or load from numba's cache) the kernels."""
    fill_normals(_U(1), 0, np.empty(4))
    fill_uniforms(_U(1), np.empty(4))


WARM = warmer(_load)


def normals(key: int, m: int, start: int = 0) -> np.ndarray:
    """(m,) the step's normals ``start`` to ``start + m`` keyed by ``key``."""
    out = np.empty(m)
    fill_normals(_U(key), start, out)
    return out


def uniforms(key: int, m: int) -> np.ndarray:
    """(m,) the step's uniforms in [0, 1) keyed by ``key``."""
    out = np.empty(m)
    fill_uniforms(_U(key), out)
    return out
