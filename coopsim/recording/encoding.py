"""The encoder of a recording's step frames (``/frames`` messages): quantized columns, first or
second differences step to step, each column packed in the smallest integer type that holds it.

docs/recording-format.md section 4 is the byte-level contract; :mod:`coopsim.recording.format`
holds the format's constants, columns and the decoder (a reader needs no encoder).
"""

from __future__ import annotations

import math
from typing import Sequence

import msgpack
import numpy as np

from ..model.module import Column
from .format import _DTYPES, _WIDTHS, BODY_COLUMNS, OBJECT_3D_COLUMNS, THREE_D_COLUMNS, _scale

_LIMITS = np.array([2 ** 7, 2 ** 15, 2 ** 31])


def _pack(q: np.ndarray) -> list:
    """[widths, bytes] of (C, F, n) ints: column by column, each column's (F, n) values in the
    smallest little-endian integer type that holds them (widths: one digit per column, its
    size in bytes). Column by column compresses better, and a jump in one column (a sonar ray
    that meets a wall) does not widen the others."""
    flat = q.reshape(len(q), -1)
    if flat.shape[1] == 0:
        return ["1" * len(q), b""]
    peaks = np.maximum(flat.max(axis=1), -flat.min(axis=1))
    kinds = np.searchsorted(_LIMITS, peaks, side="right").tolist()
    parts = [flat[c].astype(_DTYPES[k]).tobytes() for c, k in enumerate(kinds)]
    return ["".join(_WIDTHS[k] for k in kinds), b"".join(parts)]


class _Track:
    """Quantizer and difference state of one group of columns (robots or bodies)."""

    def __init__(self, columns: Sequence[Column]) -> None:
        self.scale = np.array([_scale(c.unit) for c in columns])[:, None, None]
        self.first = np.flatnonzero([c.order == 1 for c in columns])
        self.wide = False  # int64 arithmetic (values too large for int32 were seen)
        self.prev: np.ndarray | None = None  # last quantized values, (C, n)
        self.diff: np.ndarray | None = None  # last first difference, (C, n)

    def shape_changed(self, n: int) -> bool:
        """True when there is no state yet or it is for another number of bodies than ``n``."""
        return self.prev is None or self.prev.shape[1] != n

    def encode(self, values: np.ndarray, key: bool) -> list:
        """Quantize (C, F, n) values of F consecutive steps -- column-major, so every operation
        runs over contiguous memory -- and pack them: the first step absolute when ``key``,
        the others as differences."""
        scaled = values * self.scale
        peak = max(float(scaled.max()), -float(scaled.min())) if scaled.size else 0.0
        if not math.isfinite(peak):  # never expected; keeps the int cast defined
            scaled = np.nan_to_num(scaled, posinf=0.0, neginf=0.0)
        # int32 halves the memory traffic; second differences of values under 2**29 fit in it
        self.wide = self.wide or not peak < 2 ** 29
        q = np.rint(scaled, out=scaled).astype(np.int64 if self.wide else np.int32)
        if key:
            self.prev, self.diff = q[:, 0], np.zeros_like(q[:, 0])
        d1 = np.empty_like(q)  # first differences, step to step
        np.subtract(q[:, 0], self.prev, out=d1[:, 0])
        np.subtract(q[:, 1:], q[:, :-1], out=d1[:, 1:])
        out = d1.copy()  # second differences, then first ones put back where the order is 1
        out[:, 0] -= self.diff
        out[:, 1:] -= d1[:, :-1]
        out[self.first] = d1[self.first]
        if key:
            out[:, 0] = q[:, 0]
        self.prev, self.diff = q[:, -1], d1[:, -1]
        return _pack(out)


class FrameEncoder:
    """Encodes blocks of recorded steps into ``/frames`` messages, keeping the difference state.

    Args:
        robot_columns: Columns recorded per robot (see :func:`robot_columns`).
        body_columns: Columns recorded per object and part (default :data:`BODY_COLUMNS`).
    """

    def __init__(self, robot_columns: Sequence[Column],
                 body_columns: Sequence[Column] = BODY_COLUMNS) -> None:
        self.robot_columns = tuple(robot_columns)
        self.body_columns = tuple(body_columns)
        self._robots = _Track(self.robot_columns)
        self._bodies = _Track(self.body_columns)
        self._three = _Track(THREE_D_COLUMNS)
        self._objects3d = _Track(OBJECT_3D_COLUMNS)
        self._was_3d = False  # the last block had 3D values (a change starts a keyframe)
        self._had_objects3d = False  # the same for the objects' 3D values

    def encode(self, index: int, steps: Sequence[int], times: Sequence[float],
               positions: Sequence[int], layout: int, robots: np.ndarray, bodies: np.ndarray,
               key: bool, rules: Sequence[Mapping] | None = None, dt: float = 0.0,
               modules: Sequence[Mapping] | None = None,
               three_d: np.ndarray | None = None,
               objects_3d: np.ndarray | None = None,
               feedback: Sequence[Mapping] | None = None) -> bytes:
        """One message for F consecutive steps of one layout.

        Args:
            index: Recording-wide index of the first step.
            steps, times: The sim's step numbers and times (s).
            positions: Recording times, ns.
            layout: Ordinal of the layout in force.
            robots: (C, F, N) robot values, SI, column-major (one (F, N) array per column);
                bodies: (3, F, B) object and bar poses.
            key: Make the first step a keyframe (also done when the numbers of bodies changed).
            rules: Per step, the rules' fields (omitted when no step has any).
            dt: The physics step of these steps, s (a dt change starts a new block).
            modules: Per step, module label -> what it recorded (omitted when nothing).
            three_d: (9, F, N) robot values of :data:`THREE_D_COLUMNS` in a 3D world, SI;
                None in a 2D world (the block is then what format 3 wrote).
            objects_3d: (5, F, M) object values of :data:`OBJECT_3D_COLUMNS` in a 3D world;
                None in a 2D world (the block is then what format 4 wrote).
            feedback: Per step, squad -> its feedback row (format 7; omitted when no step has
                any: the block is then what format 6 wrote).
        """
        key = bool(key or self._robots.shape_changed(robots.shape[2])
                   or self._bodies.shape_changed(bodies.shape[2])
                   or (three_d is not None) != self._was_3d
                   or (objects_3d is not None) != self._had_objects3d
                   or (objects_3d is not None
                       and self._objects3d.shape_changed(objects_3d.shape[2])))
        self._was_3d = three_d is not None
        self._had_objects3d = objects_3d is not None
        block = {"i": index, "k": key, "L": layout, "s": list(steps), "t": list(times),
                 "p": list(positions), "r": self._robots.encode(robots, key),
                 "b": self._bodies.encode(bodies, key), "d": float(dt)}
        if rules and any(rules):
            block["R"] = [dict(r) for r in rules]
        if modules and any(modules):
            block["X"] = [dict(m) for m in modules]
        if feedback and any(feedback):
            block["F"] = [dict(m) for m in feedback]
        if three_d is not None:
            block["3"] = self._three.encode(three_d, key)
        if objects_3d is not None:
            block["O"] = self._objects3d.encode(objects_3d, key)
        return msgpack.packb(block, use_bin_type=True)


# -- decoding -------------------------------------------------------------------------------------

