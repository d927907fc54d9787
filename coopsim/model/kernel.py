"""What a module kind keeps between steps and the noise it draws: its state schema.

A module class may declare the per-robot state it keeps from one step to the next (an IMU's last
velocity and biases, the rotors' speeds)::

    state_fields = (StateField("v", (3,)), StateField("t"), StateField("bias", (6,)))

and the simulation keeps one :class:`KindState` per kind for it: a float64 array per field of
shape ``(N, *shape)`` indexed by the frame's robot row (like ``frame.pose``), and ``seen``,
False for a robot whose state was never written. A module reads and writes them in place
through ``frame.state(label)`` (and sets ``seen[rows] = True``). The tables persist across
steps, are laid out again by robot name only when the layout changes (a new robot gets the
fields' defaults, ``seen`` False) and start afresh on a reset and a ``restore_layout``
(:mod:`coopsim.sim.states`). This replaces the ``ByName`` boards on ``frame.extra``, which keep
working for modules written before.

A kind may also declare how many standard normal draws it needs per robot row and measured step
(``noise_draws(p)``, :class:`~coopsim.model.module.Module`): the sensing plan then draws the
noise of every kind in one generator call a step and hands each its block
(``frame.normals(label)``, ``frame.uniforms(label)`` for lost data), see
:mod:`coopsim.sim.sensing`. Frames and units as in :mod:`coopsim.model.module`. Nothing here
imports pymunk, zmq or the simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StateField:
    """One per-robot quantity a module kind keeps between steps.

    Attributes:
        name: The field's name (a key of :attr:`KindState.arrays`).
        shape: The shape of one robot's value (``()``: a scalar, ``(3,)``: a vector).
        default: A robot's value before it is first written (a scalar, or anything that
            broadcasts to ``shape``), in the field's own units.
    """

    name: str
    shape: tuple[int, ...] = ()
    default: float | tuple = 0.0


class KindState:
    """The per-robot state of one module kind, for every robot of the frame (rows as
    ``frame.pose``'s): written in place by the module's ``sense``/``measure``/``actuate``.

    Attributes:
        fields: The kind's :class:`StateField` declarations.
        arrays: Field name -> float64 array (N, *shape).
        seen: (N,) bool: False for a robot whose state was never written (new since the last
            layout, or put back after it diverged); the module sets it True when it writes.
    """

    __slots__ = ("fields", "arrays", "seen")

    def __init__(self, fields: tuple[StateField, ...], n: int) -> None:
        self.fields = tuple(fields)
        self.arrays = {f.name: fresh(f, n) for f in self.fields}
        self.seen = np.zeros(n, dtype=bool)

    def __len__(self) -> int:
        return len(self.seen)

    def reset_rows(self, rows) -> None:
        """Robots ``rows`` start over from the defaults, as if never seen."""
        for f in self.fields:
            self.arrays[f.name][rows] = f.default
        self.seen[rows] = False

    def taken(self, keep: np.ndarray) -> "KindState":
        """A new table whose row i is this table's row ``keep[i]`` (-1: a new robot, with the
        defaults and ``seen`` False): the layout change's remap."""
        out = KindState(self.fields, len(keep))
        have = keep >= 0
        if have.any():
            for name, arr in self.arrays.items():
                out.arrays[name][have] = arr[keep[have]]
            out.seen[have] = self.seen[keep[have]]
        return out


def fresh(field: StateField, n: int) -> np.ndarray:
    """(n, *shape) float64 filled with ``field``'s default."""
    out = np.empty((n, *field.shape))
    out[...] = field.default
    return out


def normals(frame, label: str, rows: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """(len(rows), k) standard normals for module ``label``: the plan's block for this step
    (``frame.normals(label)``) when it drew one of that shape, else ``k`` fresh draws a row from
    ``rng`` (a frame built outside the sensing plan: a test's, a batched copy's)."""
    block = frame.normals(label) if hasattr(frame, "normals") else None
    if block is not None and block.shape == (len(rows), k):
        return block
    return rng.standard_normal((len(rows), k))


def uniforms(frame, label: str, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(len(rows),) uniform draws in [0, 1) for the lost data of module ``label``: the plan's
    block (``frame.uniforms(label)``) when it drew one, else fresh draws from ``rng``."""
    block = frame.uniforms(label) if hasattr(frame, "uniforms") else None
    if block is not None and len(block) == len(rows):
        return block
    return rng.random(len(rows))
