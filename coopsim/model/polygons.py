"""Filling simple polygons with triangles: shared by the viewer's zones and Foxglove's scene.

Pure geometry on (x, y) pairs in metres, in whatever frame the caller uses; no drawing here.
"""

from __future__ import annotations

import numpy as np


def ear_indices(vertices) -> list[int]:
    """Vertex indices, three per triangle, that fill a simple polygon (either winding, convex
    or not): ears cut off one by one, O(k^2) for k vertices (zones have tens).

    Args:
        vertices: (k, 2) the polygon's corners in order, k >= 3.

    Returns:
        3 * (k - 2) indices into ``vertices``.
    """
    xy = np.asarray(vertices, dtype=float)
    x, y = xy[:, 0], xy[:, 1]
    turn = 1.0 if np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y) > 0 else -1.0
    left, out = list(range(len(xy))), []

    def area2(a: int, b: int, c: int) -> float:  # > 0 when a, b, c turn the polygon's way
        return turn * ((x[b] - x[a]) * (y[c] - y[a]) - (y[b] - y[a]) * (x[c] - x[a]))

    while len(left) > 3:
        n = len(left)
        for k in range(n):
            a, b, c = left[k - 1], left[k], left[(k + 1) % n]
            others = [i for i in left if i not in (a, b, c)]
            if area2(a, b, c) > 1e-12 and not any(
                    area2(a, b, i) >= 0 and area2(b, c, i) >= 0 and area2(c, a, i) >= 0
                    for i in others):
                out += [a, b, c]
                left.pop(k)
                break
        else:  # numerically degenerate: a fan of the rest instead of looping for ever
            out += [v for j in range(1, len(left) - 1) for v in (left[0], left[j], left[j + 1])]
            return out
    return out + left
