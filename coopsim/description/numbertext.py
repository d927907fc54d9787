"""Decimal number texts parsed to the bits of numpy's ``np.fromstring(text, float32, sep=" ")``
(the parse pycollada uses) in about half its CPU: a COLLADA file's positions
(:mod:`coopsim.description.daereader`). Where a text holds anything outside the fast path,
:func:`decimals` returns None and numpy parses it.

Units: none (numbers as written).
"""

from __future__ import annotations

import numpy as np

_POW10 = np.array([10.0 ** k for k in range(23)])  # each exactly a double
_NUMBER = b"0123456789.+-eE \t\n\r"


def decimals(raw: bytes) -> np.ndarray | None:
    """``np.fromstring(raw, dtype=np.float32, sep=" ")`` to the bit, in about half its CPU,
    or None (then numpy parses it): the text's dots (and exponent letters) taken out, its
    numbers parsed as integers (numpy's integer parse is six times its decimal one), each
    scaled by its power of ten in one IEEE operation (``m * 10**k`` or ``m / 10**-k`` with
    ``m < 2**53`` and ``|k| <= 22``: both exact, so the quotient or product is the
    correctly rounded decimal, as ``strtod``'s) and rounded to float32 as numpy rounds
    ``strtod``'s double. None for anything else: a character other than digits, ``.+-eE``
    and spaces, a token of two dots or exponents, a sign inside a mantissa, a mantissa of
    2**53 or more, an exponent past 22. Of the package's 1,717 arrays of numbers 1,658 are
    parsed here, every one bit-identical (tests/formats/test_daereader.py); B1-Z1's
    positions: 0.13 s of CPU against 0.19."""
    if raw.translate(None, _NUMBER):
        return None
    b = np.frombuffer(raw, dtype=np.uint8)
    edge = np.diff((b > 32).view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts, ends = np.flatnonzero(edge == 1), np.flatnonzero(edge == -1)
    t = len(starts)
    exps = np.flatnonzero((b | 32) == 101)  # e or E
    mark = np.full(t, -1, dtype=np.int64)  # each token's exponent letter
    if len(exps):
        etok = np.searchsorted(starts, exps, side="right") - 1
        if t == 0 or exps[-1] + 1 >= len(b) or (b[exps + 1] <= 32).any() or \
                (np.diff(etok) == 0).any():
            return None
        mark[etok] = exps
    stop = np.where(mark >= 0, mark, ends)  # each mantissa's end
    dots = np.flatnonzero(b == 46)
    if len(dots) == t and ((dots >= starts) & (dots < stop)).all():
        dtok = slice(None)  # a dot a token, in its mantissa
    else:
        dtok = np.searchsorted(starts, dots, side="right") - 1
        if (np.diff(dtok) == 0).any() or (dots >= stop[dtok]).any():
            return None
    signs = np.flatnonzero((b == 45) | (b == 43))
    before = b[signs - 1]
    if not ((before <= 32) | ((before | 32) == 101) | (signs == 0)).all():
        return None  # a sign only at a token's start or after its exponent letter
    return _scaled(raw, b, t, starts, stop, dots, dtok, mark)


def _scaled(raw: bytes, b: np.ndarray, t: int, starts, stop, dots, dtok, mark):
    """:func:`decimals`' integers and their scaling (its checks passed)."""
    text = raw.replace(b".", b"")
    exponents = (mark >= 0).any()
    if exponents:
        text = text.replace(b"e", b" ").replace(b"E", b" ")
    try:
        ints = np.fromstring(text, dtype=np.int64, sep=" ")
    except ValueError:
        return None
    has = mark >= 0
    if t == 0 or len(ints) != t + int(has.sum()):
        return None
    if exponents:
        place = np.arange(t) + np.cumsum(has) - has  # a mantissa's place among the integers
        mant = ints[place]
        exp = np.where(has, ints[np.minimum(place + 1, len(ints) - 1)], 0)
    else:
        mant, exp = ints, 0
    frac = np.zeros(t, dtype=np.int64)
    frac[dtok] = stop[dtok] - dots - 1
    m, k = np.abs(mant), exp - frac
    if (m >= 1 << 53).any() or (np.abs(k) > 22).any():
        return None
    m = m.astype(np.float64)
    v = np.where(k >= 0, m * _POW10[np.clip(k, 0, 22)], m / _POW10[np.clip(-k, 0, 22)])
    return np.where(b[starts] == 45, -v, v).astype(np.float32)
