"""Where a squad's slots stand when the way is narrower than its formation.

A virtual structure (:mod:`coopsim.swarm.structure`) asks :func:`fit` each time it has moved a
little: given its slots (offsets turned to the structure's heading) about its point on the path,
which of them stand in free cells, and what to do with those that do not:

1. *Slide* the whole shape sideways (across the path) by up to its half width, in steps of a
   quarter spacing, to where the most slots stand free, the shape kept whole: a planned path
   hugs the obstacles it goes round, so a formation centred on it has half its slots in them
   while there is room on the other side. The slide in use is kept while no other frees more
   slots (no dithering), and none is used at the goal (the squad arrives centred on it).
2. *Pull in* a slot still blocked towards the shape's centre (3/4, 1/2, 1/4 of its offset),
   keeping 0.9 spacing from the slots already placed.
3. Put a slot that still does not fit *in file*, on the path behind the shape's rearmost
   slot, one spacing apart, in the order its robots stand along the path (the one furthest on
   first): nobody has to overtake anybody to take their place in the file. A structure that
   has not moved for a while (a jam: robots in each other's way) puts every slot in file for
   a stretch of path, then re-forms.
"""

from __future__ import annotations

import math

import numpy as np

PULL_IN = (1.0, 0.75, 0.5, 0.25, 0.0)  # fractions of a slot's offset tried where it is blocked
SLIDE_STEP = 0.25  # of the spacing: the slides tried are multiples of this


def slides(offsets: np.ndarray, spacing: float) -> np.ndarray:
    """The sideways shifts tried, m (structure frame, +left), the smallest first: multiples
    of a quarter spacing up to the shape's half width."""
    width = float(np.ptp(offsets[:, 1])) if len(offsets) else 0.0
    count = int(math.floor(0.5 * width / (SLIDE_STEP * spacing) + 1e-9))
    steps = np.arange(1, count + 1) * SLIDE_STEP * spacing
    return np.concatenate([[0.0], np.ravel(np.column_stack([steps, -steps]))])


def fit(offsets: np.ndarray, centre: np.ndarray, heading: float, free, spacing: float,
        slide: float, at_goal: bool, along: np.ndarray, in_file: bool = False):
    """Fractions, places in file and the slide of a structure's slots (module docstring).

    Args:
        offsets: (n, 2) slot offsets (forward, left), m, structure frame.
        centre: The structure's point on the path, m, world. heading: Its heading, rad.
        free: ``free(points (m, 2)) -> (m,) bool``: where a slot may stand.
        spacing: The formation's smallest slot spacing, m.
        slide: The sideways shift in use, m.
        at_goal: The structure is at the path's end: no slide.
        along: (n,) how far along the path each slot's robot stands, m (NaN: unknown).
        in_file: Put every slot in file (a jam is being broken: the structure's ``jam``).

    Returns:
        (fractions (n,), behind (n,) m, slide m): each slot's offset is scaled by its fraction
        (0: in file) and shifted by the slide; one in file stands ``behind`` m back on the path.
    """
    n = len(offsets)
    c, s = math.cos(heading), math.sin(heading)
    rot = np.array([[c, s], [-s, c]])
    world = offsets @ rot
    side = np.array([-s, c])  # the structure's left, world frame
    options = np.array([0.0]) if at_goal else slides(offsets, spacing)
    shifted = centre[None, None, :] + options[:, None, None] * side + world[None, :, :]
    counts = np.asarray(free(shifted.reshape(-1, 2)), dtype=bool).reshape(len(options), n).sum(1)
    best = int(np.argmax(counts))  # the smallest of the best slides
    now = np.nonzero(np.isclose(options, slide))[0]
    if best != 0 and len(now) and counts[now[0]] >= counts[best]:
        best = int(now[0])  # keep the slide in use while no other frees more slots
    slide = float(options[best])
    anchor = centre + slide * side
    tries = anchor[None, None, :] + np.array(PULL_IN)[None, :, None] * world[:, None, :]
    ok = np.asarray(free(tries.reshape(-1, 2)), dtype=bool).reshape(n, -1)
    fractions, behind = np.ones(n), np.zeros(n)
    placed = [tries[i, 0] for i in range(n) if ok[i, 0]]
    left_out = []
    for i in np.nonzero(~ok[:, 0])[0] if not in_file else ():
        for k in range(1, len(PULL_IN) - 1):
            p = tries[i, k]
            if ok[i, k] and all(math.dist(p, q) >= 0.9 * spacing for q in placed):
                fractions[i] = PULL_IN[k]
                placed.append(p)
                break
        else:
            left_out.append(int(i))
    if in_file:
        left_out = list(range(n))
    rear = float(-offsets[:, 0].min()) if n else 0.0
    key = np.nan_to_num(np.asarray(along, dtype=float), nan=-np.inf)
    for rank, i in enumerate(sorted(left_out, key=lambda i: (-key[i], i)), start=1):
        fractions[i] = 0.0
        behind[i] = rear + rank * spacing
    return fractions, behind, slide
