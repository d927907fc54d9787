"""The batch's ray caster: every copy's sonar fans cast in the copy's own frame, against one
copy's walls and the robots of the same copy only (docs/learning.md, "Batched worlds").

K copies of a scenario are laid out in one world (:mod:`coopsim.env.batch`), so the generic
caster bins K times the walls and every robot of every copy into its grids each step, and a
robot's rays walk cells full of data from a world K times larger than the one it can see. But
copies are isolated and alike: what a robot of copy k sees are copy k's walls, the same as copy
0's moved by the copies' offset, and copy k's robots. :class:`CopyCaster` therefore keeps the
static shapes of one copy in its own frame (a grid of a few cells, binned once), and each step
moves each robot's ray origin into its copy's frame (pose - offset), casts against that grid with
the compiled fan kernel's own functions (:mod:`coopsim.raycast.jitfan`), and tests the few
chassis of its copy directly. Results: the generic caster's distances to rounding (the frame
differs by the offset: about 1e-12 m; tests/env/test_learning_batch.py), the same bits run to
run, and nothing from another copy can be hit at all.

Whenever its preconditions do not hold (moving segments or objects, a robot outside the copy
map, static shapes that are not K alike copies), it casts as :class:`JitRayCaster` does.
Frames and units: world frame unless said, metres.
"""

from __future__ import annotations

import numpy as np

from ..model.threads import kernel_threads
from ..raycast.jitcast import (CELL_SIZE, PARALLEL_MIN, JitRayCaster, checked_shapes,
                               contiguous, static_grids)
from ..raycast.jitfan import fan_gather


def _local(shapes: np.ndarray, centre: np.ndarray, offsets: np.ndarray, half: np.ndarray):
    """Each shape's copy (nearest offset) and whether it lies in that copy's cell (centre (S,
    2), m; ``half``: half a copy's extent, m); -1 for shapes of no copy (the big floor's edges)."""
    if not len(shapes):
        return np.zeros(0, np.int64)
    from scipy.spatial import cKDTree

    # Nearest offset by the max-norm, from a k-d tree: O(S log K) where the (S, K) distance
    # table cost O(S K) time and memory (3.4 s of a 512-copy build, 6.5 GB at 4,096 copies).
    # A shape equally near two copies lies outside both (half < half a cell), so how the
    # tree breaks ties changes nothing.
    copy = cKDTree(offsets).query(centre, p=np.inf)[1].astype(np.int64)
    inside = (np.abs(centre - offsets[copy]) <= half).all(axis=1)
    return np.where(inside, copy, -1)


class CopyCaster(JitRayCaster):
    """A :class:`JitRayCaster` that casts the fans of K isolated, alike copies in their own
    frames (see the module).

    Args:
        offsets: (K, 2) each copy's offset in the world, m. half: (2,) half a copy's extent
            (floor and walls), m: static shapes beyond it belong to no copy.
    """

    def __init__(self, offsets: np.ndarray, half, cell_size: float = CELL_SIZE) -> None:
        self.offsets = np.ascontiguousarray(offsets, dtype=np.float64)
        self.half = np.asarray(half, dtype=np.float64)
        self.copy_of = None  # (N,) each robot's copy, set by the batch once the rows are known
        self.members = None
        self._copy = None
        super().__init__(cell_size)

    def set_copies(self, members: np.ndarray) -> None:
        """(K, A) the robot rows of each copy (every robot of the world, each once)."""
        members = np.ascontiguousarray(members, dtype=np.int64)
        copy_of = np.full(members.size, -1, np.int64)
        copy_of[members.ravel()] = np.repeat(np.arange(len(members)), members.shape[1])
        self.members, self.copy_of = members, copy_of
        self._order = np.ascontiguousarray(members.ravel())
        self._shift = np.ascontiguousarray(self.offsets[np.maximum(copy_of, 0)])
        self._whole = bool((copy_of >= 0).all())

    def set_static(self, circles=None, segments=None, circle_group=None,
                   segment_group=None) -> None:
        super().set_static(circles, segments, circle_group, segment_group)
        self._copy = self._one_copy(*checked_shapes(circles, segments, circle_group,
                                                    segment_group))

    def _one_copy(self, c, s, cg, sg):
        """Copy 0's static grid set in its own frame, or None if the copies are not alike."""
        k = len(self.offsets)
        cc = _local(c, c[:, :2], self.offsets, self.half)
        sc = _local(s, (s[:, :2] + s[:, 2:]) / 2, self.offsets, self.half)
        count = np.bincount(cc[cc >= 0], minlength=k), np.bincount(sc[sc >= 0], minlength=k)
        if any(len(x) != k or (x != x[0]).any() for x in count):
            return None
        if (cc < 0).any() or (sc < 0).sum() > 4:  # beyond every copy: the big floor's 4 edges
            return None
        mine = [(c[cc == i] - [*self.offsets[i], 0.0], s[sc == i] - np.tile(self.offsets[i], 2))
                for i in (0, k - 1)]
        if not all(np.allclose(a, b, rtol=0, atol=1e-9) for a, b in zip(*mine)):
            return None  # the first and last copies differ: not a batch of alike copies
        return static_grids(contiguous(mine[0][0]), contiguous(mine[0][1]), cg[cc == 0].copy(),
                            sg[sc == 0].copy(), self.cell_size, least=1 << 12)

    def fan(self, poses, heading, fan, max_range, radius, groups, moving) -> np.ndarray:
        """:meth:`JitRayCaster.fan`, in the copies' frames when every robot is cast and the
        only moving shapes are their chassis (in row order)."""
        c, s = moving[0], moving[1]
        n = len(poses)
        if (self._copy is None or self.copy_of is None or n != len(self.copy_of) or len(s)
                or len(c) != n or not self._whole):
            return super().fan(poses, heading, fan, max_range, radius, groups, moving)
        out = np.empty((n, len(fan)))
        # each ray origin and its copy's chassis (row order: copy c's from c x width) moved
        # into the copy's frame; the chassis are not at ``poses`` when the rays start at
        # mounting points
        shift, order = self._shift, self._order
        origins = poses[:, :2] - shift
        circles = c[order] - np.column_stack((shift[order], np.zeros(n)))
        # The run's thread policy (--threads, [SETTINGS] threads): one row per robot, so
        # the same bits for any count.
        with kernel_threads(out.size, PARALLEL_MIN, 1):  # a block of robots at a time
            fan_gather(origins, contiguous(heading), fan, contiguous(max_range),
                       contiguous(radius), contiguous(groups), self._copy, out, self.copy_of,
                       np.int64(self.members.shape[1]), circles, groups[order])
        return out
