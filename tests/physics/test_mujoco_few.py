"""The mujoco engine's few-body paths: the planar state rows and the flyers' world
wrenches of a few robots are worked out on floats one by one, of more as arrays; both give the
same bits, and both the rotation matrix's product."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.physics.mujoco import drive as md  # noqa: E402
from coopsim.physics.mujoco import state as ms  # noqa: E402

N = ms.FEW + 5  # more than FEW: the arrays' path


def _full(rng) -> np.ndarray:
    """(N, 13) full states of free bodies, unit quaternions."""
    qadr, dadr = np.arange(N) * 7, np.arange(N) * 6
    full = ms.RobotStates(qadr, dadr, np.ones(N, bool), np.zeros(N)).full(
        rng.normal(size=7 * N), rng.normal(size=6 * N) * 3)
    full[:, 3:7] /= np.linalg.norm(full[:, 3:7], axis=1, keepdims=True)
    return full


def test_a_few_rows_planar_states_are_the_arrays_bits_and_the_turned_rate():
    rng = np.random.default_rng(55)
    full = _full(rng)
    many = ms.RobotStates(np.arange(N) * 7, np.arange(N) * 6, np.ones(N, bool), np.zeros(N))
    few = ms.RobotStates(np.arange(3) * 7, np.arange(3) * 6, np.ones(3, bool), np.zeros(3))
    arrays = many.planar(full)
    floats = np.vstack([few.planar(full[k:k + 3]) for k in range(0, N - N % 3, 3)])
    assert arrays[:len(floats)].tobytes() == floats.tobytes()
    rate = np.einsum("nj,nj->n", ms.rotations(full[:, 3:7])[:, 2, :], full[:, 10:13])
    np.testing.assert_allclose(arrays[:, 5], rate, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(arrays[:, 2], ms.yaw_of(full[:, 3:7]))


def _wrenches(count: int, qpos: np.ndarray, wrench: np.ndarray) -> np.ndarray:
    """xfrc_applied after wrench_forces with the first ``count`` robots flying."""
    data = SimpleNamespace(qpos=qpos.copy(), xfrc_applied=np.zeros((N + 1, 6)))
    rows = SimpleNamespace(flyers=np.arange(count), qadr=np.arange(N) * 7,
                           ids=np.arange(1, N + 1), wrench=wrench)
    md.wrench_forces(data, rows)
    return data.xfrc_applied


def test_a_few_flyers_wrenches_are_the_arrays_bits_and_the_turned_wrench():
    rng = np.random.default_rng(7)
    qpos, wrench = rng.normal(size=7 * N), rng.normal(size=(N, 6)) * 5
    arrays, floats = _wrenches(N, qpos, wrench), _wrenches(ms.FEW, qpos, wrench)
    assert arrays[:ms.FEW + 1].tobytes() == floats[:ms.FEW + 1].tobytes()
    assert not floats[ms.FEW + 1:].any()
    quat = qpos.reshape(N, 7)[:, 3:7]
    rot = ms.rotations(quat / np.linalg.norm(quat, axis=1, keepdims=True))
    turned = np.hstack([np.einsum("nij,nj->ni", rot, wrench[:, :3]),
                        np.einsum("nij,nj->ni", rot, wrench[:, 3:])])
    np.testing.assert_allclose(arrays[1:], turned, rtol=0, atol=1e-12)


def test_a_few_free_bodies_poses_are_the_arrays_bits():
    from coopsim.physics.mujoco.bodies import BodyTable

    rng = np.random.default_rng(3)
    bodies = [SimpleNamespace(kind="free", qadr=7 * k, bottom=0.0, qpos=np.zeros(7))
              for k in range(N)]
    qpos = rng.normal(size=7 * N)
    many, few = BodyTable(bodies), BodyTable(bodies[:ms.FEW])
    arrays, floats = many.poses(qpos), few.poses(qpos)
    assert arrays[:ms.FEW].tobytes() == floats.tobytes()
    np.testing.assert_array_equal(arrays[:, 2], ms.yaw_of(qpos.reshape(N, 7)[:, 3:7]))
