"""benchmarks/suite/peers.py: coopsim's side of the ground task is the task (robots drive to
their goals, scans of 11 beams), and a missing peer is skipped with its reason; tiny sizes,
never speed (the figures: docs/performance.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from suite import peers  # noqa: E402


def test_coopsim_drives_every_robot_toward_its_goal():
    step = peers.coopsim_ground(4)[0]
    goals = peers.layout(4)[1]
    first = step()
    for _ in range(30):
        last = step()
    gap = [np.hypot(*(s.poses[:, :2] - goals).T) for s in (first, last)]
    assert (gap[1] < gap[0] - 0.5).all()  # 3 s at up to 0.5 m/s from 2.12 m away


def test_a_missing_peer_is_skipped_with_its_reason(monkeypatch):
    monkeypatch.setenv("COOPSIM_PEERS_PYTHON", "/no/such/python")
    peers.missing.cache_clear()
    with pytest.raises(NotImplementedError, match="irsim: no interpreter '/no/such/python'"):
        peers.Ground().setup("irsim", 2)
    peers.missing.cache_clear()

