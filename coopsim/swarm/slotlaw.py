"""The slot-tracking law of a virtual structure (:mod:`coopsim.swarm.structure`): wheel speeds
taking differential-drive robots to their slots, for one structure or several in one array call,
and the gains (:class:`KeepGains`) that pace a structure and tune the law.

A robot drives to its slot at ``k_slot`` times its distance (turning on the spot while the slot
lies more than the drive's turn-in-place angle off its nose); there, it faces the structure's
heading. A robot whose slot lies behind it (more than ``BEHIND`` off its nose, within two leads)
waits, facing the heading, rather than turning back -- unless it must settle on its slot (the
structure is at the goal, or the robot is the one holding it back).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .follower import Drive

BEHIND = math.radians(100.0)  # a slot further off the nose than this is behind: wait, no U-turn


@dataclass(frozen=True)
class KeepGains:
    """How a structure paces itself and how robots track their slots.

    Attributes:
        k_slot: Speed per m of distance to the slot, 1/s (cruise speed = k_slot * lead).
        lead: How far ahead of the slowest member the slots are placed, m.
        k_heading: Turn rate per rad of heading error, 1/s.
        blend: Distance before and after a corner over which the heading turns, m.
        tolerance: Slot error of an arrived robot, m.
        yaw_tolerance: Heading error of an arrived robot, rad.
        stall: A member holding the structure back that has not moved ``stall_distance`` m for
            this long is *blocked* (an obstacle, a jam): the structure goes on without it, s.
        stall_distance: See ``stall``, m.
        report: A member away from its slot that has not moved ``stall_distance`` m for this
            long is named in :attr:`VirtualStructure.stuck` (what holds the squad up), s.
        jam: A structure short of the goal that has not moved ``stall_distance`` m for this
            long is jammed: every robot goes in file for ``file_for`` m of path, s.
        file_for: See ``jam``, m.
        join: The structure waits this long after its first member has reached its starting
            slot for the others, then goes on without those still on their way, s.
    """

    k_slot: float = 1.5
    lead: float = 0.2
    k_heading: float = 3.0
    blend: float = 0.6
    tolerance: float = 0.06
    yaw_tolerance: float = math.radians(8.0)
    stall: float = 3.0
    stall_distance: float = 0.05
    report: float = 10.0
    jam: float = 12.0
    file_for: float = 3.0
    join: float = 20.0


def control_squads(groups, time: float) -> np.ndarray:
    """Wheel speeds (m/s) of the tracking members of several structures in one array call.

    Args:
        groups: ``(structure, indices, x, y, yaw)`` per structure: its robots' slot indices and
            poses (m, rad), each group reported to its structure (:meth:`VirtualStructure.aim`)
            in the order given.
        time: When the poses were read, s.

    Returns:
        (k, 2) wheel speeds, the groups' robots one after the other, exactly as each
        structure's :meth:`~VirtualStructure.control_all` would give them.
    """
    if not groups:
        return np.zeros((0, 2))
    aims = [st.aim(idx, x, y, yaw, time) for st, idx, x, y, yaw in groups]
    x, y, yaw = (np.concatenate([np.asarray(g[c], dtype=float).reshape(-1) for g in groups])
                 for c in (2, 3, 4))
    sizes = [len(a[0]) for a in aims]
    heading = np.repeat([a[2] for a in aims], sizes)
    at_end = np.concatenate([a[3] for a in aims]).astype(bool)
    sx, sy = np.concatenate([a[0] for a in aims]), np.concatenate([a[1] for a in aims])
    first = groups[0][0]
    if all(st.gains == first.gains and st.drive == first.drive for st, *_ in groups[1:]):
        return law(x, y, yaw, sx, sy, heading, at_end, first.gains, first.drive)
    out, k = [], 0  # structures with their own gains: one law each
    for (st, *_), n in zip(groups, sizes):
        sl = slice(k, k + n)
        out.append(law(x[sl], y[sl], yaw[sl], sx[sl], sy[sl], heading[sl], at_end[sl],
                        st.gains, st.drive))
        k += n
    return np.vstack(out)


def law(x, y, yaw, sx, sy, heading, at_end, g: KeepGains, drive: Drive) -> np.ndarray:
    """(k, 2) wheel speeds (m/s) taking robots at x, y (m) facing ``yaw`` (rad) to slots
    ``sx``, ``sy`` (m); there (or ahead of the slot: waiting) they face ``heading`` (rad);
    ``at_end``: the robot settles on its slot even behind it (at the goal, or it holds the
    structure back). All arrays of k."""
    ex, ey = sx - x, sy - y
    dist = np.hypot(ex, ey)
    error = _wrap(np.arctan2(ey, ex) - yaw)
    v = np.minimum(drive.max_speed, g.k_slot * dist) * np.cos(error)
    w = g.k_heading * error
    turn = np.abs(error) > drive.turn_in_place
    v[turn] = 0.0
    # there, or ahead of its slot (wait for the others): face the way the squad goes
    face = (dist < g.tolerance * 0.5) | (at_end & (dist < g.tolerance)) | \
        ((np.abs(error) > BEHIND) & ~at_end & (dist < 2 * g.lead))
    v[face] = 0.0
    w[face] = g.k_heading * _wrap(heading[face] - yaw[face])
    return _wheels(v, w, drive)


def _wrap(angle: np.ndarray) -> np.ndarray:
    """Angles brought into [-pi, pi), rad."""
    return (angle + np.pi) % (2 * np.pi) - np.pi


def _wheels(v: np.ndarray, w: np.ndarray, drive: Drive) -> np.ndarray:
    """(k, 2) wheel speeds for body speeds ``v`` (m/s) and turn rates ``w`` (rad/s), scaled
    down together where a wheel would exceed the top speed (:func:`wheel_speeds`, in arrays)."""
    out = np.column_stack([v - w * drive.axle / 2, v + w * drive.axle / 2])
    top = np.abs(out).max(axis=1)
    over = top > drive.max_speed
    out[over] *= (drive.max_speed / top[over])[:, None]
    return out
