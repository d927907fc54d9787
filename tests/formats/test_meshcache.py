"""The converted-mesh cache (coopsim.description.meshcache; docs/robots.md, *Robots loaded
as shipped*): a COLLADA file's triangles are kept by content in the cache folder and
served from it to a later read that would parse the file again; a damaged entry is read
again from the file and rewritten; ``COOPSIM_MESH_CACHE=off`` writes nothing; a file's
bounds still apply to a cached entry."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from coopsim.description import collada
from coopsim.model.errors import FileFormatError

DATA = Path(__file__).resolve().parent.parent / "data" / "descriptions"


@pytest.fixture()
def cube(tmp_path, monkeypatch):
    monkeypatch.setenv("COOPSIM_MESH_CACHE", str(tmp_path / "cache"))
    shutil.copy(DATA / "cube.dae", tmp_path / "cube.dae")
    collada._cached.cache_clear()  # this process's own cache: each read below is a first
    yield tmp_path / "cube.dae"
    collada._cached.cache_clear()


def test_a_collada_mesh_is_cached_by_content_and_served_from_the_cache(cube, monkeypatch):
    first = collada.dae_triangles(str(cube))
    (entry,) = (cube.parent / "cache").glob("*.npy")
    assert np.array_equal(np.load(entry), first) and first.shape == (12, 3, 3)
    collada._cached.cache_clear()

    def parse(*_):
        raise AssertionError("parsed again")
    monkeypatch.setattr(collada, "_read_indexed", parse)
    again = collada.dae_triangles(str(cube))
    assert np.array_equal(again, first) and not again.flags.writeable
    with pytest.raises(FileFormatError, match="mesh has over 10 triangles"):
        collada.dae_triangles(str(cube), limit=10)  # the bound holds for a cached entry


def test_a_damaged_entry_is_read_again_and_rewritten(cube):
    first = collada.dae_triangles(str(cube))
    (entry,) = (cube.parent / "cache").glob("*.npy")
    entry.write_bytes(entry.read_bytes()[:100])  # cut short
    collada._cached.cache_clear()
    assert np.array_equal(collada.dae_triangles(str(cube)), first)
    assert np.array_equal(np.load(entry), first)
    np.save(entry, np.full((12, 3, 3), np.nan, dtype=np.float32))  # well formed, not finite
    collada._cached.cache_clear()
    assert np.array_equal(collada.dae_triangles(str(cube)), first)


def test_the_cache_turned_off_writes_nothing(cube, monkeypatch):
    monkeypatch.setenv("COOPSIM_MESH_CACHE", "off")
    assert collada.dae_triangles(str(cube)).shape == (12, 3, 3)
    assert not (cube.parent / "cache").exists()
