"""A multirotor of any layout from a description file: its rotors' positions, thrust axes and
spins make an allocation matrix, and the mixer flies any frame the ``rotors`` module commands
(docs/robots.md "A wheeled base and a quadrotor").

The ``rotors`` module keeps its four-rotor interface (speeds, thrust and rates, thrust and
attitude) on a *virtual X frame* of the airframe's mean arm: what it computes is the wrench it
wants (collective thrust along body z, torques about x, y, z). For a described airframe the
engine hands that wrench to :func:`remix`: the real rotors' thrusts are the least-squares
solution ``f = pinv(A4) w`` (A4: the allocation matrix's thrust-z and three torque rows),
each clipped to [0, kf max_speed^2], and the body gets ``A f`` -- all six components, so a
tilted rotor's sideways force is felt. An X frame's mixer gives back what the module asked
for; a + frame, the Iris' 59/123-degree arms, hexa and octo frames and tilted rotors fly the
same commands.

Where the rotors are (:func:`rotor_geometry`): a ``rotors LINK...`` key names links of the
file (each rotor at its link's origin; its thrust along its joint's axis when the link hangs
on a revolute or continuous joint, else along the link's z axis; made to point up); a file
without rotor links (hector, hextilt, borinot) is given them with ``rotor X Y Z AX AY AZ
cw|ccw`` lines (the hub in the root link's frame, m, and the thrust axis). Spins: the
``spin`` key's, in the rotors' order; else alternating around the centre, the first rotor
clockwise of the front (the smallest angle at or below 0 from the x axis) turning cw -- an
X, +, hexa or octo frame's usual pattern.

Frames and units: the description's root link frame (x forward, z up); m, N, N m, rad/s.
"""

from __future__ import annotations

import math

import numpy as np

SPIN_SIGN = {"cw": 1.0, "ccw": -1.0}  # a cw propeller's drag turns the body ccw (+z)


def default_spins(positions: np.ndarray) -> tuple[str, ...]:
    """Alternating spins around the centre (module doc)."""
    angle = np.arctan2(positions[:, 1], positions[:, 0])
    start = np.where(angle <= 1e-9, angle, angle - 2 * math.pi)  # the first one at or below 0
    order = np.argsort(-start, kind="stable")  # clockwise from the front
    out = [""] * len(positions)
    for k, i in enumerate(order):
        out[int(i)] = "cw" if k % 2 == 0 else "ccw"
    return tuple(out)


def allocation(positions, axes, spins, ratio: float) -> np.ndarray:
    """(6, N) the body wrench (force x, y, z N; torque x, y, z N m, about the root's origin)
    of 1 N of thrust from each rotor; ``ratio`` = km / kf (m)."""
    p = np.asarray(positions, float)
    a = np.asarray(axes, float)
    sign = np.array([SPIN_SIGN[s] for s in spins])
    torque = np.cross(p, a) + ratio * sign[:, None] * a
    return np.vstack((a.T, torque.T))


def controllable(matrix: np.ndarray) -> bool:
    """Whether thrust along z and the three torques are independent (rank 4)."""
    return bool(np.linalg.matrix_rank(matrix[2:6], tol=1e-9 * max(1.0, np.abs(matrix).max()))
                == 4)


class Mixer:
    """One airframe's mixer (module doc).

    Attributes:
        matrix: (6, N) the allocation matrix.
        top: Largest thrust of one rotor, N.
    """

    def __init__(self, matrix: np.ndarray, top: float) -> None:
        self.matrix = np.asarray(matrix, float)
        self.top = float(top)
        self.inverse = np.linalg.pinv(self.matrix[2:6])  # (N, 4)

    def thrusts(self, force: np.ndarray, torque: np.ndarray) -> np.ndarray:
        """(N,) each rotor's thrust (N) for the wanted body force z and torque."""
        wanted = np.array([force[2], torque[0], torque[1], torque[2]], dtype=float)
        return np.clip(self.inverse @ wanted, 0.0, self.top)

    def remix(self, force, torque) -> tuple[np.ndarray, np.ndarray]:
        """The wrench the real rotors give for the wanted one (body frame)."""
        out = self.matrix @ self.thrusts(np.asarray(force, float), np.asarray(torque, float))
        return out[:3], out[3:]


def remix_rows(mixers: dict, bodies: list, wrench: np.ndarray, rows) -> None:
    """Put the wanted body wrenches of ``rows`` ((n, 6) ``wrench``, in place) through the
    mixers of the bodies that have one (``mixers``: id(body) -> :class:`Mixer`)."""
    for k in np.asarray(rows).reshape(-1):
        mixer = mixers.get(id(bodies[int(k)]))
        if mixer is not None:
            wrench[k, :3], wrench[k, 3:] = mixer.remix(wrench[k, :3], wrench[k, 3:])
