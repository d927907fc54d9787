"""The high-level commander's plans: take-off, land and go_to as rest-to-rest moves, and
uploaded poly4d trajectories, each a function of sim time giving the reference the cascade
tracks (position m, velocity m/s, acceleration m/s^2, yaw rad, yaw rate rad/s; world frame).

Smooth moves follow the septic rest-to-rest polynomial s(u) = 35u^4 - 84u^5 + 70u^6 - 20u^7
(zero velocity, acceleration and jerk at both ends, as the firmware's planner asks of its
go_to); ``linear`` go_to moves at constant speed. A poly4d piece is four polynomials of degree
7 in the piece's time (x, y, z, yaw) and a duration, 33 little-endian floats (132 bytes) in
trajectory memory, as cflib's ``Poly4D.pack`` writes them.
"""

from __future__ import annotations

import math
import struct

import numpy as np

PIECE_BYTES = 132  #: one poly4d piece in trajectory memory
_S = np.array([0, 0, 0, 0, 35, -84, 70, -20], dtype=float)  # s(u), coefficients of u^0..u^7


def _poly(c: np.ndarray, t: float) -> tuple[float, float, float]:
    """Value, first and second derivative of the polynomial ``c`` (low order first) at t."""
    powers = t ** np.arange(8)
    d1 = np.arange(1, 8) * c[1:]
    d2 = np.arange(2, 8) * np.arange(1, 7) * c[2:]
    return float(c @ powers), float(d1 @ powers[:7]), float(d2 @ powers[:6])


def wrap(a: float) -> float:
    """An angle in [-pi, pi)."""
    return (a + math.pi) % (2 * math.pi) - math.pi


class Plan:
    """A reference that started at sim time ``t0`` and lasts ``duration`` s (then holds its
    end). ``landing``: the motors stop when it ends (a land)."""

    def __init__(self, t0: float, duration: float, landing: bool = False) -> None:
        self.t0, self.duration, self.landing = t0, duration, landing

    def done(self, t: float) -> bool:
        return t >= self.t0 + self.duration

    def at(self, t: float) -> np.ndarray:  # (11,) as coopsim.swarm.flight.control's ref
        raise NotImplementedError


class Move(Plan):
    """From ``p0``, ``yaw0`` to ``p1``, ``yaw1`` in ``duration`` s, smooth or linear."""

    def __init__(self, t0, duration, p0, yaw0, p1, yaw1, linear=False, landing=False) -> None:
        super().__init__(t0, duration, landing)
        self.p0, self.p1 = np.asarray(p0, float), np.asarray(p1, float)
        self.yaw0 = float(yaw0)
        self.dyaw = wrap(float(yaw1) - self.yaw0)  # the short way round
        self.linear = linear

    def at(self, t: float) -> np.ndarray:
        d = self.duration
        u = min(max((t - self.t0) / d, 0.0), 1.0) if d > 0 else 1.0
        if self.linear:
            s, ds, dds = u, (1.0 / d if 0.0 < u < 1.0 else 0.0), 0.0
        else:
            s, ds, dds = _poly(_S, u)
            ds, dds = ds / d, dds / (d * d)
        delta = self.p1 - self.p0
        ref = np.zeros(11)
        ref[0:3] = self.p0 + s * delta
        ref[3:6] = ds * delta
        ref[6:9] = dds * delta
        ref[9] = wrap(self.yaw0 + s * self.dyaw)
        ref[10] = ds * self.dyaw
        return ref


class Trajectory(Plan):
    """Uploaded poly4d pieces flown from ``t0``: time stretched by ``scale`` (> 1 slower),
    optionally reversed, shifted by ``offset`` (m) and turned by ``turn`` (rad, about z
    through the trajectory's start) for a relative start."""

    def __init__(self, t0, pieces: np.ndarray, durations: np.ndarray, scale: float,
                 reverse: bool, offset=(0.0, 0.0, 0.0), turn: float = 0.0) -> None:
        super().__init__(t0, float(durations.sum()) * scale)
        self.pieces, self.durations = pieces, durations
        self.starts = np.concatenate(([0.0], np.cumsum(durations)[:-1]))
        self.scale, self.reverse = scale, reverse
        self.offset, self.turn = np.asarray(offset, float), float(turn)

    def raw(self, tau: float) -> np.ndarray:
        """(4, 3) value, d/dtau, d2/dtau2 of x, y, z, yaw at trajectory time ``tau``."""
        total = float(self.durations.sum())
        tau = min(max(tau, 0.0), total)
        k = int(np.searchsorted(self.starts, tau, side="right") - 1)
        k = min(max(k, 0), len(self.durations) - 1)
        local = min(tau - self.starts[k], self.durations[k])
        return np.array([_poly(self.pieces[k, axis], local) for axis in range(4)])

    def at(self, t: float) -> np.ndarray:
        total = float(self.durations.sum())
        tau = min(max((t - self.t0) / self.scale, 0.0), total)
        moving = 0.0 <= (t - self.t0) / self.scale < total  # before and after: held still
        sign = 1.0
        if self.reverse:
            tau, sign = total - tau, -1.0
        v = self.raw(tau)
        c, s = math.cos(self.turn), math.sin(self.turn)
        rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        ref = np.zeros(11)
        ref[0:3] = rot @ v[:3, 0] + self.offset
        if moving:
            ref[3:6] = rot @ v[:3, 1] * (sign / self.scale)
            ref[6:9] = rot @ v[:3, 2] / (self.scale * self.scale)
            ref[10] = v[3, 1] * sign / self.scale
        ref[9] = wrap(v[3, 0] + self.turn)
        return ref


def read_pieces(memory: bytes, offset: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(count, 4, 8) coefficients and (count,) durations of poly4d pieces in ``memory``.

    Raises:
        ValueError: the pieces run past the memory, a number is not finite, or a duration is
            not positive.
    """
    end = offset + count * PIECE_BYTES
    if count < 1 or offset < 0 or end > len(memory):
        raise ValueError(f"{count} pieces at offset {offset} do not fit the "
                         f"{len(memory)}-byte trajectory memory")
    floats = np.array(struct.unpack(f"<{33 * count}f", bytes(memory[offset:end])),
                      dtype=float).reshape(count, 33)
    if not np.isfinite(floats).all():
        raise ValueError("a trajectory coefficient is not finite")
    durations = floats[:, 32]
    if (durations <= 0).any() or durations.sum() > 3600.0:
        raise ValueError("a piece's duration is not in (0, 3600] s")
    return floats[:, :32].reshape(count, 4, 8), durations
