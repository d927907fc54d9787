"""coopsim.model.noise_kernels: a step's noise from one key, counter-based, the compiled kernels
and the numpy twins bit for bit, standard normals and uniforms in [0, 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopsim.model import compiled
from coopsim.model import noise_kernels as nk

KEYS = (0, 1, 12345, 2**64 - 1, 0xDEADBEEFCAFEBABE)


@pytest.mark.skipif(not compiled.COMPILED, reason="the kernels need numba")
@pytest.mark.parametrize("key", KEYS)
def test_the_kernels_and_the_numpy_twins_give_the_same_bits(key):
    out = np.empty(50_000)  # ~600 refused first tries and ~13 tail draws a key
    nk.fill_normals(np.uint64(key), 7, out)
    twin = nk.normals_numpy(key, 7, len(out))
    assert np.array_equal(out.view(np.uint64), twin.view(np.uint64))
    uniform = np.empty(1000)
    nk.fill_uniforms(np.uint64(key), uniform)
    assert np.array_equal(uniform, nk.uniforms_numpy(key, 1000))


def test_a_normal_is_a_function_of_the_key_and_its_index_alone():
    whole = nk.normals_numpy(99, 0, 2000)
    assert np.array_equal(nk.normals_numpy(99, 1500, 500), whole[1500:])
    assert not np.array_equal(nk.normals_numpy(100, 0, 2000), whole)


def test_the_normals_are_standard_and_the_uniforms_in_the_unit_interval():
    x = nk.normals_numpy(2024, 0, 400_000)
    # bounds about 6 standard errors wide: a fixed key, so the check is deterministic
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1.0) < 0.007
    for z in (1.0, 2.0, 3.0, 4.0):  # the tails, the tail beyond R = 3.654 included
        expected = math.erfc(z / math.sqrt(2.0))
        assert abs((np.abs(x) > z).mean() - expected) < 6 * math.sqrt(expected / len(x)) + 1e-5
    # the ziggurat's strips: the share below each of a few points, against the normal's cdf
    for q in (-2.5, -0.5, 0.0, 0.7, 1.9):
        expected = 0.5 * math.erfc(-q / math.sqrt(2.0))
        assert abs((x < q).mean() - expected) < 0.004
    u = nk.uniforms_numpy(2024, 100_000)
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.006
