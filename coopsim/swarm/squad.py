"""Squads: one command for a group of robots, broken into one command per robot.

How a squad command is decomposed (the paper's server-side squad behaviours):

1. One A* path for the whole squad, from its centroid to the goal, smoothed into turn points.
2. Formation slots placed along it: at the start (where the squad gathers, the slots given to the
   robots by a minimum-total-distance assignment), at each turn (the formation turned to bisect
   the corner) and at the goal. Each robot keeps its slot all the way.
3. Per robot, a :class:`~coopsim.swarm.behaviours.Sequence` of GoTos through its slots. A slot
   in a blocked cell along the way is skipped; a gather or final slot there moves to the nearest
   reachable free cell that keeps the spacing. Every leg is checked for line of sight (all legs
   of all robots in one vectorised call) and only a blocked leg gets its own (short) A*.

So a command costs one long search, not one per robot. :meth:`Squad.command` does the
decomposition, remembers it and hands each robot its order; :meth:`Squad.step` drives. If the goal
is unreachable it raises :class:`SwarmError` and the squad keeps its previous command.

Attack re-planning: a new :class:`Attack` on a target that moved re-uses the previous squad path
(:func:`~coopsim.swarm.astar.replan`), restarts it from the squad's current centroid (the part
already travelled is dropped) and keeps each robot's slot, so nobody swaps places mid-way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence as Seq

import numpy as np

from . import slotfit
from .arbitrator import Decision, RobotController
from .astar import SNAP_DISTANCE, Path, find_path, replan, smooth
from .behaviours import GoTo, Hold, Sequence
from .errors import SwarmError
from .formations import Formation, assign
from .grid import Grid
from .structure import KeepGains, Track, VirtualStructure


# --- squad commands ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Gather:
    """Gather in ``formation`` at ``point`` (m, world; None: the centroid) facing ``heading``
    (rad; None: the squad's last heading)."""

    point: tuple[float, float] | None = None
    heading: float | None = None
    formation: Formation | None = None


@dataclass(frozen=True)
class SquadGoTo:
    """Move the squad, in ``formation``, so that its formation is centred on (x, y), m, facing
    ``heading`` (rad; None: the direction of the path's last leg) on arrival."""

    x: float
    y: float
    formation: Formation | None = None
    heading: float | None = None


@dataclass(frozen=True)
class Defend:
    """Surround ``position`` (m, world) on a circle of ``radius`` m (None: the paper's n * d)."""

    position: tuple[float, float]
    radius: float | None = None


@dataclass(frozen=True)
class Attack:
    """Close on ``target`` (m, world) in the 270 degree half circle (radius None: n * d)."""

    target: tuple[float, float]
    radius: float | None = None


@dataclass(frozen=True, eq=False)
class Plan:
    """A decomposed squad command.

    Attributes:
        orders: One command per robot, robot order.
        path: The squad's A* path (None for a gather).
        turns: (m, 2) turn points of the smoothed squad path, m, world.
        slot_of: Travel-formation slot of each robot.
        heading: Formation heading at the end, rad.
        structure: The moving formation the robots keep (a GoTo with formation keeping), or
            None.
    """

    orders: tuple
    path: Path | None
    turns: np.ndarray
    slot_of: np.ndarray
    heading: float
    structure: VirtualStructure | None = None


def _rotate(offsets: np.ndarray, headings: np.ndarray) -> np.ndarray:
    """(n, 2) formation-frame offsets turned by each of m headings (rad) -> (n, m, 2)."""
    c, s = np.cos(headings)[None, :], np.sin(headings)[None, :]
    ox, oy = offsets[:, 0:1], offsets[:, 1:2]
    return np.stack([ox * c - oy * s, ox * s + oy * c], axis=2)


def _headings(turns: np.ndarray, default: float) -> np.ndarray:
    """Formation heading at each turn point, rad: along the first segment at the start, along the
    last at the end, bisecting the corner in between; ``default`` for a path of no length."""
    seg = np.diff(turns, axis=0)
    lengths = np.hypot(seg[:, 0], seg[:, 1])
    seg, lengths = seg[lengths > 1e-9], lengths[lengths > 1e-9]
    if len(seg) == 0:
        return np.full(len(turns), default)
    unit = seg / lengths[:, None]
    mids = unit[:-1] + unit[1:]
    flat = np.hypot(mids[:, 0], mids[:, 1]) < 1e-9  # a U-turn: no bisector, take the new way
    mids[flat] = unit[1:][flat]
    dirs = np.vstack([unit[:1], mids, unit[-1:]])
    out = np.arctan2(dirs[:, 1], dirs[:, 0])
    return out if len(out) == len(turns) else np.full(len(turns), out[-1])


def _dedupe(points: np.ndarray) -> np.ndarray:
    """Drop points that repeat the previous one."""
    keep = np.ones(len(points), dtype=bool)
    keep[1:] = np.hypot(*np.diff(points, axis=0).T) > 1e-9
    return points[keep]


def _closest_segment(turns: np.ndarray, p: np.ndarray) -> int:
    """Index j of the segment turns[j] -> turns[j + 1] nearest to point p (0 if one point)."""
    if len(turns) < 2:
        return 0
    a, e = turns[:-1], np.diff(turns, axis=0)
    t = np.clip(((p - a) * e).sum(axis=1) / np.maximum((e * e).sum(axis=1), 1e-300), 0, 1)
    return int(np.argmin(np.hypot(*(a + t[:, None] * e - p).T)))


class Squad:
    """A group of robots commanded as one (see the module docstring).

    Args:
        robots: Objects with the robot API (gps, compass, sonar, bumper, motors).
        grid: The occupancy grid the squad plans on.
        formation: Travel formation (and gather formation unless a command names another).
        controllers: One :class:`RobotController` per robot; None makes plain ones (no
            reflexes): pass your own to add reflexes.
        snap: How far a start or goal inside an obstacle may move to a free cell, m.
        tolerance: Reach tolerance of each robot's final GoTo, m.
        pass_tolerance: Reach tolerance of the GoTos on the way, m.
        replan_radius: An Attack whose target moved less than this (m) re-uses the last path.
        keep: Travel a GoTo as one shape (:mod:`coopsim.swarm.structure`): the robots gather
            in their slots, then keep them along the path and arrive in formation; False
            sends each robot through its slots at the turns on its own.
        gains: The formation keeping's pace and tracking gains.
    """

    def __init__(self, robots: Seq, grid: Grid, formation: Formation = Formation(),
                 controllers: Seq[RobotController] | None = None, snap: float = SNAP_DISTANCE,
                 tolerance: float = 0.1, pass_tolerance: float = 0.25,
                 replan_radius: float = 3.0, keep: bool = True,
                 gains: KeepGains = KeepGains()) -> None:
        self.robots = list(robots)
        self.grid, self.formation, self.snap = grid, formation, snap
        self.controllers = list(controllers) if controllers is not None else [
            RobotController(r) for r in self.robots]
        if len(self.controllers) != len(self.robots):
            raise SwarmError(f"{len(self.robots)} robots but {len(self.controllers)} controllers")
        self.tolerance, self.pass_tolerance = tolerance, pass_tolerance
        self.replan_radius = replan_radius
        self.keep, self.gains = keep, gains
        self.structure: VirtualStructure | None = None  # the formation of the current GoTo
        self.current = None  # the last squad command carried out
        self.last_plan: Plan | None = None
        self.heading = 0.0  # formation heading at the end of the last command, rad

    # --- commands ------------------------------------------------------------------------
    def positions(self) -> np.ndarray:
        """(n, 2) robot positions from one gps read each, m, world frame."""
        return np.array([r.gps.read()[:2] for r in self.robots], dtype=float).reshape(-1, 2)

    def command(self, cmd, positions: np.ndarray | None = None) -> tuple:
        """Decompose ``cmd`` into one command per robot, make it the squad's command and give
        each robot its order.

        Args:
            cmd: A :class:`Gather`, :class:`SquadGoTo`, :class:`Defend` or :class:`Attack`.
            positions: (n, 2) robot positions, m; None reads every robot's gps.

        Returns:
            The robots' orders, robot order.

        Raises:
            SwarmError: the command cannot be carried out (``unreachable: ...``); the squad then
                keeps its previous command and the robots theirs.
        """
        return self.adopt(cmd, self.plan(cmd, positions))

    def adopt(self, cmd, plan: Plan) -> tuple:
        """Make ``cmd``, decomposed into ``plan`` (by :meth:`plan`, possibly amended), the
        squad's command and give each robot its order; returns the orders."""
        self.current, self.last_plan, self.heading = cmd, plan, plan.heading
        self.structure = plan.structure
        for controller, order in zip(self.controllers, plan.orders):
            controller.give(order)
            # Defenders go back to their post when pushed off it; other commands end idle.
            end = order.commands[-1]
            controller.squad_behaviours = [Hold(end.x, end.y, 2 * self.tolerance)] \
                if isinstance(cmd, Defend) else []
        return plan.orders

    def gather(self, point=None, formation: Formation | None = None,
               heading: float | None = None) -> tuple:
        """Gather in ``formation`` at ``point`` (None: the centroid); see :meth:`command`."""
        return self.command(Gather(None if point is None else tuple(point), heading, formation))

    def goto(self, x: float, y: float, formation: Formation | None = None) -> tuple:
        """Move the squad in formation to (x, y), m; see :meth:`command`."""
        return self.command(SquadGoTo(x, y, formation))

    def defend(self, position, radius: float | None = None) -> tuple:
        """Circle ``position`` at ``radius`` m; see :meth:`command`."""
        return self.command(Defend(tuple(position), radius))

    def attack(self, target, radius: float | None = None) -> tuple:
        """Half-circle ``target``, re-planning if it moved; see :meth:`command`."""
        return self.command(Attack(tuple(target), radius))

    def arrived(self) -> bool:
        """True when, at the last step, no robot had a command left to carry out."""
        return all(c.finished for c in self.controllers)

    def step(self) -> list[Decision]:
        """One control step of every robot (read sensors, decide, set wheel speeds)."""
        return [c.step() for c in self.controllers]

    # --- decomposition -------------------------------------------------------------------
    def plan(self, cmd, positions: np.ndarray | None = None) -> Plan:
        """Decompose ``cmd`` without changing the squad or the robots (see :meth:`command`)."""
        pos = self.positions() if positions is None else np.asarray(positions, float)
        pos = pos.reshape(-1, 2)
        if len(pos) != len(self.robots):
            raise SwarmError(f"{len(pos)} positions for {len(self.robots)} robots")
        if len(pos) == 0:
            raise SwarmError("empty squad: a squad command needs at least 1 robot")
        if isinstance(cmd, Gather):
            return self._plan_gather(pos, cmd)
        if isinstance(cmd, SquadGoTo):
            return self._plan_route(pos, (cmd.x, cmd.y), cmd.formation or self.formation,
                                    keep=self.keep, heading=cmd.heading)
        if isinstance(cmd, Defend):
            final = Formation("circle", self.formation.spacing, cmd.radius)
            return self._plan_route(pos, cmd.position, self.formation, final)
        if isinstance(cmd, Attack):
            final = Formation("half_circle", self.formation.spacing, cmd.radius)
            return self._plan_route(pos, cmd.target, self.formation, final, self._previous(cmd))
        raise SwarmError(f"not a squad command: {cmd!r}")

    def _previous(self, cmd: Attack) -> Plan | None:
        """The last plan, when it was an attack on a target that moved a little."""
        last = self.current
        if isinstance(last, Attack) and self.last_plan is not None and \
                self.last_plan.path is not None and last.radius == cmd.radius and \
                math.dist(last.target, cmd.target) <= self.replan_radius:
            return self.last_plan
        return None

    def _plan_gather(self, pos: np.ndarray, cmd: Gather) -> Plan:
        formation = cmd.formation or self.formation
        anchor = pos.mean(axis=0) if cmd.point is None else np.asarray(cmd.point, float)
        heading = self.heading if cmd.heading is None else cmd.heading
        spread = float(np.hypot(*(pos - pos.mean(axis=0)).T).max())
        start = self.grid.snap(*pos.mean(axis=0), max(self.snap, spread))
        label = int(self.grid.labels[start])
        slots = self._fit(formation.slots(len(pos), anchor, heading), formation, label)
        slot_of = assign(pos, slots)
        anchors = np.vstack([np.full((1, 2), np.nan), anchor[None, :]])
        chains = [(np.vstack([p, slots[k]]), anchors) for p, k in zip(pos, slot_of)]
        return Plan(self._orders(self._connect(chains)), None, anchor[None, :], slot_of,
                    float(heading))

    def _plan_route(self, pos: np.ndarray, goal, formation: Formation,
                    final: Formation | None = None, previous: Plan | None = None,
                    keep: bool = False, heading: float | None = None) -> Plan:
        centroid = pos.mean(axis=0)
        spread = float(np.hypot(*(pos - centroid).T).max())
        # The goal may be the defended object itself, blocked: let it snap out to the ring.
        goal_snap = self.snap + ((final.radius or 0.0) if final is not None else 0.0)
        if previous is not None:
            path = replan(self.grid, previous.path, goal, snap=goal_snap)
            turns = _dedupe(smooth(self.grid, path.points))
            j = _closest_segment(turns, centroid)
            turns = np.vstack([centroid, turns[j + 1:]])
        else:
            start = self.grid.snap(*centroid, max(self.snap, spread))
            path = find_path(self.grid, self.grid.points([start])[0]
                         if not self.grid.is_free(*centroid) else centroid, goal, goal_snap)
            turns = _dedupe(smooth(self.grid, path.points))
        label = int(self.grid.labels[path.cells[0]])
        head = _headings(turns, self.heading)
        offsets = formation.offsets(len(pos))
        ways = turns[None, :, :] + _rotate(offsets, head)  # (slot, turn, xy)
        if previous is None:
            ways[:, 0] = self._fit(ways[:, 0], formation, label)
            slot_of = assign(pos, ways[:, 0], squared=keep)  # keep: all gather at once
            first = 0
        else:
            slot_of, first = previous.slot_of, 1  # no gathering again on the way
        if keep:
            return self._plan_keep(pos, path, turns, ways[:, 0], slot_of, offsets, head,
                                   heading, label)
        middle = ways[slot_of, first:-1]
        if final is None:
            ways[:, -1] = self._fit(ways[:, -1], formation, label)
            ends = ways[slot_of, -1]
        else:
            ring = self._fit(final.slots(len(pos), goal, head[-1]), final, label)
            before = middle[:, -1] if middle.shape[1] else pos
            ends = ring[assign(before, ring)]
        chains = self._chains(pos, middle, turns[first:-1], ends, turns[-1], label)
        return Plan(self._orders(self._connect(chains)), path, turns, slot_of, float(head[-1]))

    def _plan_keep(self, pos, path, turns, starts, slot_of, offsets, head, heading,
                   label) -> Plan:
        """A GoTo travelled as one shape: each robot gathers in its slot at the path's start
        (legs around obstacles as any plan's), then tracks it on a :class:`VirtualStructure`
        along the smoothed path, turning to ``heading`` at the goal."""
        final = float(head[-1] if heading is None else heading)
        structure = VirtualStructure(
            turns, offsets, float(head[0]), final, gains=self.gains,
            free=lambda pts: self.grid.free_at(pts, label),
            clear=self.grid.segment_free, route=self._route)
        c, s = math.cos(final), math.sin(final)
        ends = turns[-1] + offsets @ np.array([[c, s], [-s, c]])
        chains = [(np.vstack([pos[k], starts[slot_of[k]]]), np.full((2, 2), np.nan))
                  for k in range(len(pos))]
        orders = []
        for k, chain in enumerate(self._connect(chains)):
            gather = [GoTo(float(x), float(y), self.pass_tolerance) for x, y in chain[1:]]
            end = ends[slot_of[k]]
            orders.append(Sequence((*gather, Track(structure, int(slot_of[k]), float(end[0]),
                                                   float(end[1]), self.tolerance))))
        return Plan(tuple(orders), path, turns, slot_of, final, structure)

    def _chains(self, pos, middle, centre, ends, last, label) -> list[tuple]:
        """Each robot's points (itself, its slots on the way, its end slot) and their anchors on
        the squad path (NaN for the robot itself; the squad path's end for the end slot).

        A slot on the way that falls in a blocked cell is pulled in towards its turn point on
        the squad path (free, being on the path) to the outermost free point among 3/4, 1/2,
        1/4 and 0 of its offset: the formation narrows where the way does, and each leg stays
        short, so a leg that is still blocked needs only a short search.

        Args:
            pos: (n, 2) robot positions; middle: (n, m, 2) slots on the way, robot order;
            centre: (m, 2) their turn points; ends: (n, 2) end slots; last: the squad path's
            end. All m, world.
        """
        n, m = middle.shape[:2]
        if m:
            fractions = np.array([1.0, 0.75, 0.5, 0.25, 0.0])
            offset = middle - centre[None, :, :]
            tries = centre[None, :, None, :] + fractions[None, None, :, None] * offset[:, :, None]
            ok = self.grid.free_at(tries.reshape(-1, 2), label).reshape(n, m, len(fractions))
            ok[:, :, -1] = True  # the turn point itself
            pick = np.argmax(ok, axis=2)
            middle = np.take_along_axis(tries, pick[:, :, None, None], axis=2)[:, :, 0]
        anchors = np.vstack([np.full((1, 2), np.nan), centre, last[None, :]])
        return [(np.vstack([pos[k], middle[k], ends[k]]), anchors) for k in range(n)]

    def _fit(self, slots: np.ndarray, formation: Formation, label: int) -> np.ndarray:
        """Slots in blocked cells (or another region) moved to free ones of region ``label``
        (:func:`coopsim.swarm.slotfit.fit`); raises SwarmError ``unreachable: ...``."""
        return slotfit.fit(self.grid, slots, formation.spacing, label)

    def _connect(self, chains: list[tuple]) -> list[np.ndarray]:
        """Check every leg of every chain at once; re-route each blocked leg.

        A blocked leg a -> b between two slots first tries going through their anchors on the
        squad path (a -> A -> B -> b: in to the path, along it, out again; all candidate legs are
        checked in one more vectorised call), and only then gets its own A*.

        Args:
            chains: Per robot, (points (k, 2), anchors (k, 2)), m, world.

        Raises:
            SwarmError: ``unreachable: ...`` when a robot cannot reach the next point.
        """
        pts = [c[0] for c in chains]
        clear = self.grid.segments_free(np.vstack([p[:-1] for p in pts]),
                                        np.vstack([p[1:] for p in pts]))
        if clear.all():
            return pts
        legs = []  # (robot, leg, via points)
        k = 0
        for robot, (p, anchors) in enumerate(chains):
            for leg in np.nonzero(~clear[k:k + len(p) - 1])[0]:
                via = _dedupe(np.vstack([p[leg], anchors[leg], anchors[leg + 1], p[leg + 1]]))
                legs.append((robot, int(leg), via[~np.isnan(via).any(axis=1)]))
            k += len(p) - 1
        ok = self._vias_clear([v for _, _, v in legs])
        repairs: dict[tuple[int, int], np.ndarray] = {}
        for (robot, leg, via), good in zip(legs, ok):
            a, b = pts[robot][leg], pts[robot][leg + 1]
            repairs[robot, leg] = via if good else self._detour(robot, a, b)
        out = []
        for robot, p in enumerate(pts):
            seq = [p[:1]]
            for leg in range(len(p) - 1):
                seq.append(repairs[robot, leg][1:] if (robot, leg) in repairs else p[leg + 1:leg + 2])
            out.append(np.vstack(seq))
        return out

    def _vias_clear(self, vias: list[np.ndarray]) -> np.ndarray:
        """(len(vias),) bool: which polylines have all their segments clear."""
        if not vias:
            return np.zeros(0, dtype=bool)
        a = np.vstack([v[:-1] for v in vias])
        b = np.vstack([v[1:] for v in vias])
        clear = self.grid.segments_free(a, b).astype(float)
        owner = np.repeat(np.arange(len(vias)), [len(v) - 1 for v in vias])
        return np.bincount(owner, weights=1.0 - clear, minlength=len(vias)) == 0

    def _route(self, a, b) -> np.ndarray:
        """(k, 2) points of a smoothed A* path from a to b, m (a structure's way round to an
        end slot); raises SwarmError when there is none."""
        return smooth(self.grid, find_path(self.grid, a, b, self.snap).points)

    def _detour(self, robot: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        try:
            path = find_path(self.grid, a, b, self.snap)
        except SwarmError as exc:
            raise SwarmError(f"unreachable: robot {robot} cannot get from ({a[0]:.2f}, "
                             f"{a[1]:.2f}) to ({b[0]:.2f}, {b[1]:.2f}) m: {exc}") from None
        return smooth(self.grid, path.points)

    def _orders(self, chains: list[np.ndarray]) -> tuple:
        """A Sequence of GoTos per robot, through each chain after its first point."""
        orders = []
        for chain in chains:
            steps = [GoTo(float(x), float(y), self.pass_tolerance) for x, y in chain[1:-1]]
            steps.append(GoTo(float(chain[-1][0]), float(chain[-1][1]), self.tolerance))
            orders.append(Sequence(tuple(steps)))
        return tuple(orders)

