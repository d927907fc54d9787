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

Two paths give the same bits: the compiled kernels (:func:`fill_normals`,
:func:`fill_uniforms`, and :func:`normal` inlined in a fused pass) and the numpy twins
(:func:`normals_numpy`, :func:`uniforms_numpy`) that serve until the kernels are loaded and
without numba. Only IEEE operations and libm's ``exp`` and ``log1p`` (the rare refusals) make a
value.
"""

from __future__ import annotations

import math

import numpy as np

from .compiled import jit, numba, warmer

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


@jit()
def fill_uniforms(key, out):
    """``out`` (m,) = uniforms 0 .. m - 1 in [0, 1) of the draw keyed by ``key``."""
    second = mix(key ^ SECOND)
    for i in range(len(out)):
        out[i] = _unit(mix(second + _U(i + 1) * GAMMA))


# ---------------------------------------------------------------------- the numpy twins


def _mix_numpy(z: np.ndarray) -> np.ndarray:
    """:func:`mix` over a uint64 array (numpy's uint64 arrays wrap as the kernel's do)."""
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return z ^ (z >> S31)


def normals_numpy(key: int, start: int, m: int) -> np.ndarray:
    """(m,) :func:`fill_normals`' bits in numpy (the refused few in Python)."""
    k = np.arange(start + 1, start + m + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = _mix_numpy(_U(key) + k * GAMMA)
    idx = (z & LOW8).astype(np.intp)
    rabs = (z >> S9) & MAG
    out = rabs.astype(float) * WI[idx]
    out[((z >> S8) & _U(1)).astype(bool)] *= -1.0
    for i in np.flatnonzero(rabs >= KI[idx]).tolist():
        out[i] = _refused_python(int(z[i]))
    return out


def uniforms_numpy(key: int, m: int) -> np.ndarray:
    """(m,) :func:`fill_uniforms`' bits in numpy."""
    with np.errstate(over="ignore"):
        second = _mix_numpy(np.array([_U(key) ^ SECOND]))[0]
        z = _mix_numpy(second + np.arange(1, m + 1, dtype=np.uint64) * GAMMA)
    return (z >> S11).astype(float) * TO_UNIT


_MASK = (1 << 64) - 1


def _mix_int(z: int) -> int:
    """:func:`mix` on a Python int."""
    z = ((z ^ (z >> 30)) * int(MIX1)) & _MASK
    z = ((z ^ (z >> 27)) * int(MIX2)) & _MASK
    return z ^ (z >> 31)


def _refused_python(first: int) -> float:
    """:func:`_refused` on Python ints (libm's ``exp`` and ``log1p``, as the kernel's)."""
    z, c, g = first, 0, int(GAMMA)
    draw = lambda c: float(_mix_int((first + c * g) & _MASK) >> 11) * TO_UNIT  # noqa: E731
    while True:
        idx, rabs, neg = z & 255, (z >> 9) & int(MAG), (z >> 8) & 1
        x = float(rabs) * float(WI[idx])
        if rabs < int(KI[idx]):
            return -x if neg else x
        if idx == 0:
            while True:
                xx = -INV_R * math.log1p(-draw(c + 1))
                yy = -math.log1p(-draw(c + 2))
                c += 2
                if yy + yy > xx * xx:
                    return -(R + xx) if neg else R + xx
        c += 1
        if (float(FI[idx - 1]) - float(FI[idx])) * draw(c) + float(FI[idx]) \
                < math.exp(-0.5 * x * x):
            return -x if neg else x
        c += 1
        z = _mix_int((first + c * g) & _MASK)


def _load() -> None:
    """Compile (or load from numba's cache) the kernels."""
    fill_normals(_U(1), 0, np.empty(4))
    fill_uniforms(_U(1), np.empty(4))


WARM = warmer(_load) if numba is not None else None


def normals(key: int, m: int) -> np.ndarray:
    """(m,) the step's normals keyed by ``key``: compiled once loaded, numpy before."""
    if WARM is not None and WARM.ready:
        out = np.empty(m)
        fill_normals(_U(key), 0, out)
        return out
    return normals_numpy(key, 0, m)


def uniforms(key: int, m: int) -> np.ndarray:
    """(m,) the step's uniforms in [0, 1) keyed by ``key``."""
    if WARM is not None and WARM.ready:
        out = np.empty(m)
        fill_uniforms(_U(key), out)
        return out
    return uniforms_numpy(key, m)
