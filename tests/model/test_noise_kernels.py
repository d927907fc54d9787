"""coopsim.model.noise_kernels: a step's noise from one key, counter-based, standard normals and
uniforms in [0, 1)."""

from __future__ import annotations

import math

import numpy as np

from coopsim.model import noise_kernels as nk



def test_a_normal_is_a_function_of_the_key_and_its_index_alone():
    whole = nk.normals(99, 2000)
    assert np.array_equal(nk.normals(99, 500, 1500), whole[1500:])
    assert not np.array_equal(nk.normals(100, 2000), whole)


def test_the_normals_are_standard_and_the_uniforms_in_the_unit_interval():
    x = nk.normals(2024, 400_000)
    # bounds about 6 standard errors wide: a fixed key, so the check is deterministic
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1.0) < 0.007
    for z in (1.0, 2.0, 3.0, 4.0):  # the tails, the tail beyond R = 3.654 included
        expected = math.erfc(z / math.sqrt(2.0))
        assert abs((np.abs(x) > z).mean() - expected) < 6 * math.sqrt(expected / len(x)) + 1e-5
    # the ziggurat's strips: the share below each of a few points, against the normal's cdf
    for q in (-2.5, -0.5, 0.0, 0.7, 1.9):
        expected = 0.5 * math.erfc(-q / math.sqrt(2.0))
        assert abs((x < q).mean() - expected) < 0.004
    u = nk.uniforms(2024, 100_000)
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.006
