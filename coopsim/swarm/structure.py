"""Formation keeping: a squad travels as one rigid shape (a virtual structure) along its path.

The structure is a pose moving along the squad's planned path (A*, smoothed): a point on the
path at arc length ``s`` and a heading that turns with the path, the formation's slots fixed in
its frame. Its progress is set by its members, not by a clock, so it works the same under any
time source and repeats bit for bit in lockstep:

* each robot's report (:meth:`VirtualStructure.control`) says where along the path the robot
  stands as seen from its slot (its projection); the structure stands where its *slowest*
  member is (the least projection, never going back), and every robot steers to its slot
  ``lead`` metres further on. The slowest member's slot is then ``lead`` ahead of it and it
  drives at ``k_slot * lead``; the others are at most that far from theirs, and one that got
  ahead waits (it stops and faces the structure's heading rather than turning back). So the
  squad moves at the pace of its slowest member and its shape holds;
* the heading turns with the path: within ``blend`` metres of a corner it goes linearly from the
  incoming to the outgoing direction, so at a corner the outer robots (which have further to
  go) hold the structure back while the inner ones wait for them;
* where a slot falls in a blocked cell (a narrow passage, an obstacle beside the path), that
  robot's slot is pulled in towards the path (3/4, 1/2, 1/4 of its offset, or the path itself):
  the formation narrows (a *break*, counted) and widens again once there is room (a
  *re-formation*, counted); the robots' reflexes (sonar, bumpers) come first in any case.

At the end of the path the structure takes the ordered heading (the robots go to their slots of
the shape turned so), and the squad has *arrived* when every robot is within ``tolerance`` of its
slot at the goal and faces the ordered heading within ``yaw_tolerance``; the robots then stand
still.
"""

from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np

from .errors import SwarmError
from .follower import Drive, wrap
from .narrowing import fit
from .slotlaw import KeepGains, law

PULL_EVERY = 0.05  # m: the slots are narrowed again each time the structure moved this far
# A slot nearer than this is not checked for an obstacle in between: the robot and its slot
# both stand in free cells (0.3 m from any obstacle), so anything between them is further apart
NEAR = 0.45  # m

#: What the structure keeps of a robot's report: position (m), heading (rad), time (s).
Pose = namedtuple("Pose", "x y yaw time")


@dataclass
class KeepStats:
    """What the structure saw: breaks (slots pulled in) and re-formations; members left
    behind (blocked) and rejoined."""

    breaks: int = 0
    reforms: int = 0
    narrowed: set = field(default_factory=set)  # slots pulled in now
    left: int = 0
    rejoined: int = 0
    jams: int = 0


class VirtualStructure:
    """One squad's formation moving along one path (see the module docstring).

    Args:
        path: (k, 2) points of the squad path, m, world frame (k >= 1).
        offsets: (n, 2) each slot's (forward, left) offset in the structure's frame, m, in the
            order of the slot indices.
        heading: Heading of the structure at the start, rad (None: along the first segment).
        final_heading: Heading ordered at the goal, rad (None: along the last segment).
        drive: The robots' drive (limits and the turn-in-place angle).
        gains: :class:`KeepGains`.
        free: Optional ``free(points (m, 2)) -> (m,) bool`` of the planning grid: where slots
            may stand.
        clear: Optional ``clear(a, b) -> bool`` of the planning grid: whether a robot at ``a``
            may drive straight to ``b``; when it may not reach its slot so, it follows the
            path itself (in file behind the others) until it may.
        route: Optional ``route(a, b) -> (k, 2) points`` (m; raises SwarmError when there is
            no way): at the goal a robot whose end slot is not in sight goes there by it.
    """

    def __init__(self, path, offsets, heading: float | None = None,
                 final_heading: float | None = None, drive: Drive = Drive(),
                 gains: KeepGains = KeepGains(), free=None, clear=None, route=None) -> None:
        path = np.asarray(path, dtype=float).reshape(-1, 2)
        keep = np.ones(len(path), dtype=bool)
        keep[1:] = np.hypot(*np.diff(path, axis=0).T) > 1e-9
        self.path = path[keep]
        self.offsets = np.asarray(offsets, dtype=float).reshape(-1, 2)
        seg = np.diff(self.path, axis=0)
        self._lengths = np.hypot(seg[:, 0], seg[:, 1])
        self._cum = np.concatenate([[0.0], np.cumsum(self._lengths)])
        self._dirs = np.arctan2(seg[:, 1], seg[:, 0]) if len(seg) else np.zeros(0)
        self.length = float(self._cum[-1])
        self.drive, self.gains, self.free, self.clear = drive, gains, free, clear
        self.route = route
        first = float(self._dirs[0]) if len(self._dirs) else float(heading or 0.0)
        self.start_heading = first if heading is None else float(heading)
        last = float(self._dirs[-1]) if len(self._dirs) else self.start_heading
        self.final_heading = last if final_heading is None else float(final_heading)
        self._knots = self._heading_knots()
        self.s = 0.0  # where the slowest member is, m along the path
        self.progress = np.full(len(self.offsets), np.nan)  # each robot's projection, m
        self.states: dict[int, object] = {}
        self.stats = KeepStats()
        self.fractions = np.ones(len(self.offsets))
        self.behind = np.zeros(len(self.offsets))  # m behind the rear, on the path (in file)
        self.slide = 0.0  # m the shape is shifted to its left, off the path (narrowing.py)
        self.file_until = -1.0  # arc length up to which every robot goes in file (a jam), m
        self._mark: tuple[float, float] | None = None  # (time, s) the structure last moved
        self._joined: float | None = None  # when the first member began tracking, s
        self.spacing = _spacing(self.offsets)
        self.arrived = False
        self.moved: dict[int, tuple[float, float, float]] = {}  # robot -> (time, x, y) it last
        # moved stall_distance from
        self.blocked: set[int] = set()  # members the structure goes on without
        self.along: dict[int, float] = {}  # a left-behind member's own place on the path, m
        self.routes: dict[int, list] = {}  # robot -> [points to its end slot, next point]
        self.stuck: dict[int, str] = {}  # robot -> why it holds the squad up (see report)
        self._pulled_at = -math.inf  # the target the slots were last narrowed for, m
        self._samples = None  # the path sampled for the last projection (_project_formed)

    # -- the structure's pose -------------------------------------------------------------------
    @property
    def target(self) -> float:
        """Arc length of the slots the robots steer to, m."""
        return min(self.length, self.s + self.gains.lead)

    def pose(self, s: float) -> tuple[np.ndarray, float]:
        """(point, heading) of the structure at arc length ``s``."""
        return self._point(s), self.heading_at(s)

    def slots(self, s: float | None = None, pulled: bool = True) -> np.ndarray:
        """(n, 2) slot positions at arc length ``s`` (default: the target), m; ``pulled``: as
        narrowed where blocked."""
        centre, heading = self.pose(self.target if s is None else s)
        c, si = math.cos(heading), math.sin(heading)
        off = self._narrowed() if pulled else self.offsets
        return centre + off @ np.array([[c, si], [-si, c]])

    def _narrowed(self, idx=None) -> np.ndarray:
        """The offsets (forward, left) of slots ``idx`` (None: all) as narrowed and slid now,
        m, structure frame."""
        idx = slice(None) if idx is None else idx
        off = self.offsets[idx] * self.fractions[idx, None]
        off[:, 1] += self.slide
        return off

    def heading_at(self, s):
        """The structure's heading at arc length ``s`` (a number or an array): the path's
        direction, turned linearly over ``blend`` m (or more) either side of each corner; at
        the end of the path, the ordered heading (rad, wrapped)."""
        if isinstance(s, (float, int)):  # one arc length: no arrays to build
            if s >= self.length - 1e-9:
                return wrap(self.final_heading)
            return wrap(float(np.interp(s, *self._knots)))
        h = np.interp(s, *self._knots)
        h = np.where(np.asarray(s) >= self.length - 1e-9, self.final_heading, h)
        return wrap(float(h)) if np.ndim(h) == 0 else (h + np.pi) % (2 * np.pi) - np.pi

    def _heading_knots(self) -> tuple[np.ndarray, np.ndarray]:
        """(arc lengths, unwrapped headings) between which the heading is interpolated. A
        corner's turn is spread over at least ``blend`` m either side, and more for a wide
        formation (its inner slots must not move backwards: turn * reach <= travel)."""
        dirs = list(self._dirs) or [self.start_heading]
        for k in range(1, len(dirs)):  # unwrapped: each turn the short way round
            dirs[k] = dirs[k - 1] + wrap(dirs[k] - dirs[k - 1])
        if self.length == 0.0 or len(dirs) == 1:
            return np.array([0.0, max(self.length, 1.0)]), np.array([dirs[0], dirs[0]])
        reach = float(np.hypot(*self.offsets.T).max()) if len(self.offsets) else 0.0
        corners = list(self._cum[1:-1])
        bounds = [0.0] + [(a + c) / 2 for a, c in zip(corners[:-1], corners[1:])] + [self.length]
        xs, hs = [0.0], [dirs[0]]
        for j, corner in enumerate(corners):
            half = max(self.gains.blend, 0.6 * abs(dirs[j + 1] - dirs[j]) * reach)
            lo = max(bounds[j], corner - half, xs[-1])
            hi = min(bounds[j + 1], corner + half)
            xs += [lo, max(hi, lo + 1e-9)]
            hs += [dirs[j], dirs[j + 1]]
        xs.append(max(self.length, xs[-1] + 1e-9))
        hs.append(dirs[-1])
        return np.array(xs), np.array(hs)

    # -- reports and progress -------------------------------------------------------------------
    def report(self, index: int, state) -> None:
        """Note robot ``index``'s state and move the structure to its slowest member."""
        self.report_all([index], [state.x], [state.y], [state.yaw], state.time)

    def report_all(self, indices, x, y, yaw, time: float) -> None:
        """Note the poses of robots ``indices`` (x, y m; yaw rad; at ``time`` s) and move the
        structure to its slowest member (members left behind aside)."""
        idx = np.asarray(indices, dtype=int)
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        for k, i in enumerate(idx.tolist()):
            self.states[i] = Pose(float(x[k]), float(y[k]), float(yaw[k]), time)
        self.progress[idx] = self._project(idx, x, y)
        if self._all_in(time):  # every member tracks its slot now (or is left behind)
            for i in idx.tolist():
                self._watch(i, self.states[i])
            if self.blocked:
                pace = [p for i, p in enumerate(self.progress) if i not in self.blocked]
                slowest = float(min(pace, default=self.s))
            else:
                slowest = float(self.progress.min()) if len(self.progress) else self.s
            self.s = max(self.s, min(self.length, slowest))
            self._watch_jam(time)
            if abs(self.target - self._pulled_at) >= PULL_EVERY or \
                    (self.target >= self.length > self._pulled_at):  # at the goal: no slide
                self._pull_in()
                self._pulled_at = self.target
            self._check_arrival()

    def _all_in(self, time: float) -> bool:
        """Whether the structure may move: every member tracks its slot, or ``join`` s have
        passed since the first did -- those not there yet (a member that cannot reach its
        starting slot) are then left behind, named in :attr:`stuck`, and rejoin when they
        have caught up."""
        missing = np.nonzero(np.isnan(self.progress))[0].tolist()
        if not missing:
            return True
        if self._joined is None:
            self._joined = time
        if time - self._joined < self.gains.join or len(missing) == len(self.progress):
            return False
        for i in missing:
            if i not in self.blocked:
                self.blocked.add(i)
                self.stats.left += 1
            self.stuck[i] = (f"has not reached its starting slot (the others were there "
                             f"from t = {self._joined:.1f} s)")
        return True

    def _watch_jam(self, time: float) -> None:
        """Break a jam: short of the goal and not moved ``stall_distance`` m for ``jam`` s,
        every robot goes in file for the next ``file_for`` m (then the shape re-forms)."""
        g = self.gains
        if self._mark is None or self.s - self._mark[1] >= g.stall_distance:
            self._mark = (time, self.s)
        elif time - self._mark[0] >= g.jam and self.target < self.length:
            self.file_until = self.s + g.file_for
            self.stats.jams += 1
            self._mark = (time, self.s)
            self._pulled_at = -math.inf  # now

    def _watch(self, index: int, state) -> None:
        """Leave robot ``index`` behind when it has held the structure back without moving for
        ``stall`` s (blocked); take it back once it has caught up with the structure."""
        g = self.gains
        t, x, y = self.moved.get(index, (state.time, state.x, state.y))
        if math.hypot(state.x - x, state.y - y) >= g.stall_distance or index not in self.moved:
            t, x, y = state.time, state.x, state.y
            self.moved[index] = (t, x, y)
        holding = self.progress[index] < self.s + 0.5 * g.lead
        if index in self.blocked:
            if self.progress[index] >= self.s - 0.5 * g.lead or self.target >= self.length:
                self.blocked.discard(index)  # caught up (or the squad is at the goal)
                self.along.pop(index, None)
                self.moved[index] = (state.time, state.x, state.y)
                self.stats.rejoined += 1
        elif holding and state.time - t >= g.stall and self.target < self.length and \
                len(self.blocked) + 1 < len(self.offsets):
            self.blocked.add(index)
            self.stats.left += 1

    def _project(self, idx: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """(k,) arc lengths at which robots ``idx`` (at x, y, m) stand in their slots, searched
        every 5 cm from 0.5 m behind the structure (or a robot left behind) to 2 m ahead, m."""
        if self.length == 0.0:
            return np.zeros(len(idx))
        if not self.blocked and not self.behind[idx].any():
            return self._project_formed(idx, x, y)
        last = self.progress[idx]
        if self.blocked:
            left = np.array([i in self.blocked for i in idx.tolist()], dtype=bool) & \
                ~np.isnan(last)
            start = np.where(left, np.minimum(self.s, np.nan_to_num(last)), self.s)
        else:  # nobody left behind (the common case): every search starts at the structure
            start = np.full(len(idx), self.s)
        lo = np.maximum(0.0, start - 0.5 - self.behind[idx])
        s = np.arange(float(lo.min()), min(self.length, self.s + 2.0) + 1e-9, 0.05)
        px = np.interp(s, self._cum, self.path[:, 0])
        py = np.interp(s, self._cum, self.path[:, 1])
        h = np.interp(s, *self._knots)  # the path's heading: a robot's progress, not the end's
        c, si = np.cos(h), np.sin(h)
        off = self._narrowed(idx)  # the slots as narrowed now
        in_file = self.behind[idx] > 0.0  # in file: where on the path, plus the distance behind
        off[in_file] = 0.0
        sx = px[None, :] + off[:, :1] * c[None, :] - off[:, 1:] * si[None, :]
        sy = py[None, :] + off[:, :1] * si[None, :] + off[:, 1:] * c[None, :]
        d = np.hypot(sx - x[:, None], sy - y[:, None])
        d[s[None, :] < lo[:, None] - 1e-9] = np.inf
        return s[np.argmin(d, axis=1)] + np.where(in_file, self.behind[idx], 0.0)

    def _project_formed(self, idx: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """:meth:`_project` when nobody is left behind or in file (the common case): every
        search starts 0.5 m behind the structure, the path sampled once for all (and kept
        while the structure stands), m."""
        lo = max(0.0, self.s - 0.5)
        key = (lo, min(self.length, self.s + 2.0))
        if self._samples is None or self._samples[0] != key:
            s = np.arange(lo, key[1] + 1e-9, 0.05)
            h = np.interp(s, *self._knots)  # the path's heading, as in _project
            self._samples = (key, s, np.interp(s, self._cum, self.path[:, 0]),
                             np.interp(s, self._cum, self.path[:, 1]), np.cos(h), np.sin(h))
        _, s, px, py, c, si = self._samples
        off = self._narrowed(idx)
        sx = px[None, :] + off[:, :1] * c[None, :] - off[:, 1:] * si[None, :]
        sy = py[None, :] + off[:, :1] * si[None, :] + off[:, 1:] * c[None, :]
        d = np.hypot(sx - x[:, None], sy - y[:, None])
        return s[np.argmin(d, axis=1)]

    def _pull_in(self) -> None:
        """Slide the shape, narrow the slots that still fall in blocked cells, put those that
        do not fit in file behind (:func:`coopsim.swarm.narrowing.fit`); count breaks and
        re-formations."""
        if self.free is None or not len(self.offsets):
            return
        centre, heading = self.pose(self.target)
        along = self.progress - self.behind  # where each robot itself is along the path
        at_goal = self.target >= self.length
        jammed = self.s < self.file_until and not at_goal
        self.fractions, self.behind, self.slide = fit(
            self.offsets, centre, heading, self.free, self.spacing, self.slide, at_goal, along,
            jammed)
        narrowed = set(np.nonzero(self.fractions < 1.0)[0].tolist())
        self.stats.breaks += len(narrowed - self.stats.narrowed)
        self.stats.reforms += len(self.stats.narrowed - narrowed)
        self.stats.narrowed = narrowed

    def _check_arrival(self) -> None:
        g = self.gains
        if self.target < self.length or self.arrived or len(self.states) < len(self.offsets):
            return  # not at the goal, or a member has not even started
        slots = self.slots()
        self.arrived = all(
            math.hypot(st.x - slots[i, 0], st.y - slots[i, 1]) <= g.tolerance
            and abs(wrap(self.final_heading - st.yaw)) <= g.yaw_tolerance
            for i, st in self.states.items())

    def errors(self) -> np.ndarray:
        """(n,) each robot's distance from its slot in the formation fitted where the squad
        is (the mean of the members' projections, full offsets), m: the shape's error,
        without the lead."""
        if np.isnan(self.progress).any():
            return np.full(len(self.offsets), np.nan)
        slots = self.slots(float(np.mean(self.progress)), pulled=False)
        return np.array([math.hypot(st.x - slots[i, 0], st.y - slots[i, 1])
                         for i, st in sorted(self.states.items())])

    # -- the robots ------------------------------------------------------------------------------
    def control(self, index: int, state) -> tuple[float, float]:
        """Wheel speeds (m/s) taking robot ``index`` (at ``state``) to its slot."""
        left, right = self.control_all([index], [state.x], [state.y], [state.yaw], state.time)[0]
        return float(left), float(right)

    def control_all(self, indices, x, y, yaw, time: float) -> np.ndarray:
        """(k, 2) wheel speeds (m/s) taking robots ``indices`` (at x, y m, facing yaw rad, at
        ``time`` s) to their slots, in one report (:meth:`report_all`)."""
        sx, sy, heading, at_end = self.aim(indices, x, y, yaw, time)
        x, y, yaw = (np.asarray(v, dtype=float).reshape(-1) for v in (x, y, yaw))
        return law(x, y, yaw, sx, sy, np.full(len(sx), heading), at_end,
                    self.gains, self.drive)

    def aim(self, indices, x, y, yaw, time: float) -> tuple[np.ndarray, np.ndarray, float,
                                                             np.ndarray]:
        """Report robots ``indices`` (:meth:`report_all`) and say where each steers: (slot x,
        slot y (m), the heading to face there (rad), (k,) whether each goes to its slot even
        if it lies behind it: the structure is at the goal, or the robot is the one holding
        it back). A slot behind an obstacle is replaced by a point on the path ``lead`` m
        ahead (in file); at the goal, by the robot's own way round."""
        g = self.gains
        self.report_all(indices, x, y, yaw, time)
        idx = np.asarray(indices, dtype=int)
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        target = self.target
        heading = self.heading_at(target)
        sx, sy = self._slots_of(idx, target, heading)
        at_end = target >= self.length
        self._note_stuck(idx, x, y, sx, sy, time)
        for k in np.nonzero(np.hypot(sx - x, sy - y) >= NEAR)[0] if self.clear else ():
            if not self.clear((x[k], y[k]), (sx[k], sy[k])):
                # an obstacle between the robot and its slot: at the goal, round it (its own
                # way); on the way, along the path, in file (a robot left behind: from where
                # it itself is on the path, never from its slot's place, which may lie ahead
                # of it: aiming behind itself, it would back away all the way to the start)
                i = int(idx[k])
                if at_end and self.route is not None:
                    sx[k], sy[k] = self._routed(i, x[k], y[k], sx[k], sy[k])
                    continue
                ahead = self._along(i, x[k], y[k]) + g.lead
                if i not in self.blocked:  # no further than its own place (in file: behind)
                    ahead = min(ahead, target - self.behind[i])
                sx[k], sy[k] = self._point(min(self.length, ahead))
            else:
                self.along.pop(int(idx[k]), None)
        # the member holding the structure back never waits for it (its slot may lie just
        # behind it where the path bends; waiting there, everybody would wait for ever)
        settle = np.full(len(idx), at_end) | (self.progress[idx] <= self.s + 1e-9)
        return sx, sy, self.final_heading if at_end else heading, settle

    def _along(self, index: int, x: float, y: float) -> float:
        """Where a robot at (x, y) out of sight of its slot itself is on the path, m: the
        nearest path point from 0.5 m behind where it was last (so a jostle cannot send it
        back) to 2 m ahead of the structure."""
        last = self.along.get(index, self.progress[index] - self.behind[index])
        lo = max(0.0, min(self.s, last) - 0.5)
        s = np.arange(lo, min(self.length, self.s + 2.0) + 1e-9, 0.05)
        d = np.hypot(np.interp(s, self._cum, self.path[:, 0]) - x,
                     np.interp(s, self._cum, self.path[:, 1]) - y)
        self.along[index] = max(last, float(s[np.argmin(d)]) if len(s) else last)
        return self.along[index]

    def _routed(self, index: int, x: float, y: float, sx: float, sy: float):
        """The next point of robot ``index``'s own way (``route``) to its end slot (sx, sy),
        m; where it is if there is none (:attr:`stuck` says why)."""
        way = self.routes.get(index)
        if way is None or math.dist(way[0][-1], (sx, sy)) > 0.05:
            try:
                way = self.routes[index] = [np.asarray(self.route((x, y), (sx, sy))), 1]
            except SwarmError as exc:
                self.stuck[index] = (f"no way from ({x:.2f}, {y:.2f}) to its slot "
                                     f"({sx:.2f}, {sy:.2f}) m: {exc}")
                return x, y
        points, j = way
        while j < len(points) - 1 and math.dist(points[j], (x, y)) < 0.25:
            j += 1
        way[1] = min(j, len(points) - 1)
        return float(points[way[1]][0]), float(points[way[1]][1])

    def _note_stuck(self, idx, x, y, sx, sy, time: float) -> None:
        """Name in :attr:`stuck` each robot away from its slot that has not moved for
        ``report`` s (the squad waits for it), with where it is and how far off; forget it
        once it moves or the squad has arrived."""
        g = self.gains
        for k, i in enumerate(idx.tolist()):
            t = self.moved.get(i, (time,))[0]
            off = math.hypot(sx[k] - x[k], sy[k] - y[k])
            if self.arrived or time - t < g.report or off <= g.tolerance:
                self.stuck.pop(i, None)
            elif not self.stuck.get(i, "").startswith("no way"):
                left = " (left behind)" if i in self.blocked else ""
                self.stuck[i] = (f"has not moved since t = {t:.1f} s, at ({x[k]:.1f}, "
                                 f"{y[k]:.1f}) m, {off:.1f} m from its slot{left}")

    def _slots_of(self, idx: np.ndarray, s: float,
                  h: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """x, y (m) of the slots of robots ``idx`` at arc length ``s`` (where the structure's
        heading is ``h`` rad, None: :meth:`heading_at`), as narrowed (in file: on the path
        behind)."""
        px, py = self._point(s)
        h = self.heading_at(s) if h is None else h
        c, si = math.cos(h), math.sin(h)
        off = self._narrowed(idx)
        sx = px + off[:, 0] * c - off[:, 1] * si
        sy = py + off[:, 0] * si + off[:, 1] * c
        behind = self.behind[idx]
        if not behind.any():
            return sx, sy
        in_file = np.nonzero(behind > 0.0)[0]
        if len(in_file):
            back = np.maximum(0.0, s - self.behind[idx[in_file]])
            sx[in_file] = np.interp(back, self._cum, self.path[:, 0])
            sy[in_file] = np.interp(back, self._cum, self.path[:, 1])
        return sx, sy

    # -- the path -------------------------------------------------------------------------------
    def _point(self, s: float) -> np.ndarray:
        if self.length == 0.0:
            return self.path[-1].copy()
        j = min(max(int(np.searchsorted(self._cum, s, side="right")) - 1, 0),
                len(self._lengths) - 1)
        t = min(max((s - self._cum[j]) / self._lengths[j], 0.0), 1.0)
        return self.path[j] + t * (self.path[j + 1] - self.path[j])


def _spacing(offsets: np.ndarray) -> float:
    """The smallest distance between two slots, m (1 m for a squad of one)."""
    if len(offsets) < 2:
        return 1.0
    d = np.hypot(offsets[:, None, 0] - offsets[None, :, 0], offsets[:, None, 1] - offsets[None, :, 1])
    d[np.diag_indices(len(offsets))] = np.inf
    return float(d.min())


@dataclass(frozen=True, eq=False)
class Track:
    """A robot's command: keep slot ``index`` of ``structure`` until the squad has arrived.
    ``x``, ``y``: the slot at the goal (where the robot ends), m, world frame."""

    structure: VirtualStructure
    index: int
    x: float = 0.0
    y: float = 0.0
    tolerance: float = 0.1
