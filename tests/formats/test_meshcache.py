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


def _sphere_msh(path: Path, n: int) -> int:
    """A MuJoCo MSH sphere (shared vertices, 4 n^2 triangles) at ``path``: its face count."""
    theta, phi = np.meshgrid(np.linspace(0, np.pi, n + 1), np.linspace(0, 2 * np.pi, 2 * n + 1),
                             indexing="ij")
    grid = 0.1 * np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi),
                           np.cos(theta)], axis=-1).reshape(-1, 3)
    idx = np.arange(len(grid)).reshape(n + 1, 2 * n + 1)
    a, b, c, d = idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]
    faces = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3),
                            np.stack([a, c, d], -1).reshape(-1, 3)])
    path.write_bytes(np.array([len(grid), 0, 0, len(faces)], "<i4").tobytes()
                     + grid.astype("<f4").tobytes() + faces.astype("<i4").tobytes())
    return len(faces)


def test_a_big_msh_mesh_is_decimated_once_and_a_bad_one_is_not_given(tmp_path, monkeypatch):
    """An MSH over the engine's budget is given to MuJoCo decimated, the decimation served
    from the cache to a later load; one under the budget is left to MuJoCo (None); one whose
    face names a vertex it does not have is not converted (its check refuses it)."""
    from coopsim.description import meshes

    monkeypatch.setenv("COOPSIM_MESH_CACHE", str(tmp_path / "cache"))
    assert _sphere_msh(tmp_path / "ball.msh", 80) > collada.ENGINE_FACES
    first = meshes.msh_as_binary_stl(str(tmp_path / "ball.msh"))
    assert 0 < len(collada.stl_triangles(first)) <= collada.ENGINE_FACES

    def decimate(*_):
        raise AssertionError("decimated again")
    monkeypatch.setattr(collada, "decimated", decimate)
    assert meshes.msh_as_binary_stl(str(tmp_path / "ball.msh")) == first

    _sphere_msh(tmp_path / "small.msh", 20)
    assert meshes.msh_as_binary_stl(str(tmp_path / "small.msh")) is None
    data = bytearray((tmp_path / "ball.msh").read_bytes())
    data[-4:] = np.array([1 << 30], "<i4").tobytes()  # a face's corner out of range
    (tmp_path / "bad.msh").write_bytes(bytes(data))
    assert meshes.msh_as_binary_stl(str(tmp_path / "bad.msh")) is None
    with pytest.raises(FileFormatError, match="vertex it does not have"):
        meshes.mesh_info(str(tmp_path / "bad.msh"))
