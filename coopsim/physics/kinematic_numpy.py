"""numpy path of the ``kinematic`` engine, for when numba is not importable.

The functions of :mod:`coopsim.physics.kinematic_kernels`, with the same signatures and, robot by
robot, the same floating-point operations in the same order: pushes are summed with
``np.bincount`` over (robot, neighbour) pairs sorted as the kernels visit them, and a robot's
static shapes are taken one at a time (the k-th shape of every robot's cell at once). Every pass
covers every robot (the kernels skip those that would come out unchanged). Results match the
kernels' bit for bit in practice; only half turns over ``SMALL`` rad take libm's sin and cos,
which numpy may round differently by an ulp. About 10 times slower: it builds the candidate
pair arrays the kernels do without.

Frames and units: world frame, metres, radians, seconds.
"""

from __future__ import annotations

import numpy as np

from .kinematic_kernels import (BOX, DIFFERENTIAL, EPS, GAP, INV, NONE, NX, NY, SMALL, TWO_PI,
                                X0, Y0)


def _wrap(a: np.ndarray) -> np.ndarray:
    """Angles (rad) brought into [-pi, pi] (unchanged when already there)."""
    out = (a > np.pi) | (a < -np.pi)
    return np.where(out, a - TWO_PI * np.floor((a + np.pi) / TWO_PI), a)


def _half_turn(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sin(x) / x and cos(x) (kernels._half_turn)."""
    small = np.abs(x) < SMALL
    x2 = x * x
    series = (1.0 - x2 / 6.0 * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0 * (1.0 - x2 / 72.0))),
              1.0 - x2 / 2.0 * (1.0 - x2 / 12.0 * (1.0 - x2 / 30.0 * (1.0 - x2 / 56.0))))
    return (np.where(small, series[0], np.sin(x) / np.where(small, 1.0, x)),
            np.where(small, series[1], np.cos(x)))


def top_speed(cmd, mode) -> float:
    """See :func:`coopsim.physics.kinematic_kernels.top_speed`."""
    return float((np.abs(cmd[:, 0]) + np.abs(cmd[:, 1]))[mode != NONE].max(initial=0.0))


def move(pos, yaw, cmd, mode, h, heading) -> None:
    """See :func:`coopsim.physics.kinematic_kernels.move`."""
    moving = np.flatnonzero(mode != NONE)
    diff = mode[moving] == DIFFERENTIAL
    turn, c, s = cmd[moving, 2] * h, heading[moving, 0], heading[moving, 1]
    half = 0.5 * turn
    sinc, ch = _half_turn(half)
    sh = sinc * half
    chord = cmd[moving, 0] * h * sinc
    dx = np.where(diff, chord * (c * ch - s * sh), cmd[moving, 0] * h)
    dy = np.where(diff, chord * (s * ch + c * sh), cmd[moving, 1] * h)
    pos[moving, 0] += dx
    pos[moving, 1] += dy
    ct, st = ch * ch - sh * sh, 2.0 * sh * ch
    t = turn != 0.0
    rows = moving[t]
    yaw[rows] = _wrap(yaw[rows] + turn[t])
    heading[rows, 0], heading[rows, 1] = c[t] * ct[t] - s[t] * st[t], s[t] * ct[t] + c[t] * st[t]


def finish(pos, start, yaw, cmd, mode, dt, state) -> None:
    """See :func:`coopsim.physics.kinematic_kernels.finish`."""
    state[:, :2], state[:, 2] = pos, yaw
    state[:, 3:5] = (pos - start) / dt
    state[:, 5] = np.where(mode != NONE, cmd[:, 2], 0.0)


def bounds(pos):
    """(xmin, ymin, xmax, ymax) of the robots' centres, m."""
    lo, hi = pos.min(axis=0), pos.max(axis=0)
    return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])


def _cells(x, y, geom):
    """Columns and rows of the cells holding the points, clamped to the grid (kernels._cell)."""
    fx, fy = (x - geom[X0]) * geom[INV], (y - geom[Y0]) * geom[INV]
    fx, fy = np.where(fx > 0.0, fx, 0.0), np.where(fy > 0.0, fy, 0.0)
    fx = np.where(fx < geom[NX] - 1.0, fx, geom[NX] - 1.0)
    fy = np.where(fy < geom[NY] - 1.0, fy, geom[NY] - 1.0)
    return fx.astype(np.int64), fy.astype(np.int64)


def robot_grid(pos, radius, geom) -> tuple:
    """The robots binned in ``geom``'s cells, and the candidate pairs (i, j), j != i, of robot
    i's 3 x 3 cells, in the order the kernel visits them (i, then cell, then j ascending)."""
    n, nx, ny = len(pos), int(geom[NX]), int(geom[NY])
    cx, cy = _cells(pos[:, 0], pos[:, 1], geom)
    cell = cx * ny + cy
    start = np.concatenate(([0], np.cumsum(np.bincount(cell, minlength=nx * ny))))
    order = np.argsort(cell, kind="stable")
    owners, others, idx = [], [], np.arange(n)
    for ox in (-1, 0, 1):
        for oy in (-1, 0, 1):
            gx, gy = cx + ox, cy + oy
            ok = (gx >= 0) & (gx < nx) & (gy >= 0) & (gy < ny)
            c = np.where(ok, gx * ny + gy, 0)
            lo, count = start[c], np.where(ok, start[c + 1] - start[c], 0)
            owner = np.repeat(idx, count)
            rank = np.arange(len(owner)) - np.repeat(np.cumsum(count) - count, count)
            owners.append(owner)
            others.append(order[np.repeat(lo, count) + rank])
    owner, other = np.concatenate(owners), np.concatenate(others)
    by_owner = np.argsort(owner, kind="stable")
    owner, other = owner[by_owner], other[by_owner]
    keep = other != owner
    return cell, start, order, geom, owner[keep], other[keep]


def _touch(contact, rows, nx, ny, heading) -> None:
    """Front (column 0) or rear contact of ``rows``, by the contact direction (nx, ny)."""
    ahead = nx * heading[rows, 0] + ny * heading[rows, 1] >= 0.0
    contact[rows[ahead], 0] = 1.0
    contact[rows[~ahead], 1] = 1.0


def _pairs(pos, radius, heading, grid, contact, moved):
    """Every robot's push from its overlapping neighbours (kernels._pairs), (N,) x and y."""
    n, i, j = len(pos), grid[4], grid[5]
    dx, dy = pos[j, 0] - pos[i, 0], pos[j, 1] - pos[i, 1]
    rr = radius[i] + radius[j]
    d2, reach = dx * dx + dy * dy, rr + GAP
    near = d2 < reach * reach
    i, j, dx, dy, rr = i[near], j[near], dx[near], dy[near], rr[near]
    d = np.sqrt(d2[near])
    apart = d > 0.0
    safe = np.where(apart, d, 1.0)
    ux = np.where(apart, dx / safe, np.where(i < j, 1.0, -1.0))
    uy = np.where(apart, dy / safe, 0.0)
    _touch(contact, i, ux, uy, heading)
    overlap = rr - d
    push = overlap > EPS
    i, overlap, ux, uy = i[push], overlap[push], ux[push], uy[push]
    moved[i] = True
    return (np.bincount(i, -(0.5 * overlap * ux), n), np.bincount(i, -(0.5 * overlap * uy), n))


def _shape(x, y, r, shapes, s, kinds):
    """Outward normals and depths of robot circles against static shapes ``s`` (kernels)."""
    dx, dy = x - shapes[s, 0], y - shapes[s, 1]
    d = np.sqrt(dx * dx + dy * dy)
    safe = np.where(d > 0.0, d, 1.0)
    cnx, cny = np.where(d > 0.0, dx / safe, 1.0), np.where(d > 0.0, dy / safe, 0.0)
    cdepth = np.where(d > 0.0, r + shapes[s, 2] - d, r + shapes[s, 2])
    c, sn, hl, hw = shapes[s, 2], shapes[s, 3], shapes[s, 4], shapes[s, 5]
    lx, ly = c * dx + sn * dy, c * dy - sn * dx
    ex = lx - np.minimum(np.maximum(lx, -hl), hl)
    ey = ly - np.minimum(np.maximum(ly, -hw), hw)
    inside = (ex == 0.0) & (ey == 0.0)
    fx, fy = hl - np.abs(lx), hw - np.abs(ly)
    across = fx <= fy
    e = np.sqrt(ex * ex + ey * ey)
    e_safe = np.where(inside, 1.0, e)
    bnx = np.where(inside, np.where(across, np.where(lx >= 0.0, 1.0, -1.0), 0.0), ex / e_safe)
    bny = np.where(inside, np.where(across, 0.0, np.where(ly >= 0.0, 1.0, -1.0)), ey / e_safe)
    bdepth = np.where(inside, np.where(across, fx + r, fy + r), r - e)
    box = kinds[s] == BOX
    return (np.where(box, c * bnx - sn * bny, cnx), np.where(box, sn * bnx + c * bny, cny),
            np.where(box, bdepth, cdepth))


def _statics(x, y, radius, heading, static, contact, moved) -> None:
    """Robots at (x, y) pushed out of their cell's static shapes, in place (kernels)."""
    shapes, kinds, sgeom, sstart, sentries = static
    cx, cy = _cells(x, y, sgeom)
    c = cx * int(sgeom[NY]) + cy
    lo, count = sstart[c], sstart[c + 1] - sstart[c]
    rows, k = np.flatnonzero(count > 0), 0
    while len(rows):
        s = sentries[lo[rows] + k]
        nx, ny, depth = _shape(x[rows], y[rows], radius[rows], shapes, s, kinds)
        t = depth >= -GAP
        _touch(contact, rows[t], -nx[t], -ny[t], heading)
        p = depth > EPS
        x[rows[p]] += depth[p] * nx[p]
        y[rows[p]] += depth[p] * ny[p]
        moved[rows[p]] = True
        k += 1
        rows = rows[count[rows] > k]


def _floor(x, y, radius, half, heading, contact, moved):
    """Robots clamped onto the floor; touching an edge is a contact (kernels.floor_clamp)."""
    lo_x, hi_x, lo_y, hi_y = radius - half[0], half[0] - radius, radius - half[1], half[1] - radius
    for near, nx, ny in ((x - lo_x <= GAP, -1.0, 0.0), (hi_x - x <= GAP, 1.0, 0.0),
                         (y - lo_y <= GAP, 0.0, -1.0), (hi_y - y <= GAP, 0.0, 1.0)):
        _touch(contact, np.flatnonzero(near), nx, ny, heading)
    cx, cy = np.minimum(np.maximum(x, lo_x), hi_x), np.minimum(np.maximum(y, lo_y), hi_y)
    moved |= (cx != x) | (cy != y)
    return cx, cy


def resolve_pass(pos, rows, new, moved, radius, heading, grid, static, half, contact) -> int:
    """See :func:`coopsim.physics.kinematic_kernels.resolve_pass`. Computes every robot (a
    robot :func:`activate` leaves out would come out as it went in) and keeps ``rows``."""
    hit = np.zeros(len(pos), bool)
    ax, ay = _pairs(pos, radius, heading, grid, contact, hit)
    x, y = pos[:, 0] + ax, pos[:, 1] + ay
    _statics(x, y, radius, heading, static, contact, hit)
    x, y = _floor(x, y, radius, half, heading, contact, hit)
    new[:len(rows), 0], new[:len(rows), 1] = x[rows], y[rows]
    moved[:len(rows)] = hit[rows]
    return int(hit[rows].sum())


def first_pass(pos, new, moved, radius, heading, grid, static, half, contact) -> int:
    """See :func:`coopsim.physics.kinematic_kernels.first_pass`."""
    return resolve_pass(pos, np.arange(len(pos)), new, moved, radius, heading, grid, static,
                        half, contact)


def activate(rows, moved, old, pos, radius, grid, flag):
    """Every robot when any moved (see kernels.activate: the same positions come out)."""
    return np.arange(len(flag)) if moved[:len(rows)].any() else np.zeros(0, np.int64)


def scatter(pos, rows, new) -> None:
    """Swaps pos[rows[k]] and new[k] (kernels.scatter)."""
    before = pos[rows]
    pos[rows] = new[:len(rows)]
    new[:len(rows)] = before
