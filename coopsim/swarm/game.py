"""Squads in a game: planning grids from what a run publishes, squad orders turned into squad
commands, and the checks a squad server makes before it passes an order on.

Both hosts use these: the in-process ``squad`` driver plans on the snapshot's ``map``
(:class:`~coopsim.model.specs.MapSpec`), a network controller on the layout ``/sim state``
answers (:func:`map_of_layout`), and the ``/squads`` server checks orders on the same grid, so
an order the server accepts is one the controllers can plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.orders import SquadOrder
from ..model.specs import FloorSpec, MapSpec, ObjectSpec, ZoneSpec
from .astar import SNAP_DISTANCE, find_path, smooth
from .behaviours import GoTo, PickUp, Sequence, Stop
from .errors import SwarmError
from .formations import Formation, shape_error
from .grid import Grid, build_grid
from .squad import Attack, Defend, Gather, Plan, Squad, SquadGoTo

#: Grid settings every planner of a game shares (the server's check and the controllers).
RESOLUTION = 0.1  # m per cell
ROBOT_RADIUS = 0.2  # m: coopsim's chassis
CLEARANCE = 0.1  # m kept from obstacles and zones
#: When a squad has arrived (:func:`arrived`): formation error (RMS, m), how far the
#: formation's anchor may be from the order's point (m), how fast a robot may still move (m/s).
ARRIVED_RMS, ARRIVED_ANCHOR, ARRIVED_SPEED = 0.1, 0.3, 0.02
#: The verbs a squad arrives at the end of (capture ends with a robot on the flag, hold at once).
ARRIVING = ("goto", "gather", "defend", "attack")


@dataclass(frozen=True)
class Capture:
    """Go to the flag at ``point`` (m, world) in ``formation``; the robot whose slot ends
    nearest to it then drives onto it and picks it up (the paper's GoTo(flag) + PickUp)."""

    point: tuple[float, float]
    formation: Formation | None = None


@dataclass(frozen=True)
class Halt:
    """Every robot stops where it is."""


def planning_grid(spec: MapSpec, resolution: float = RESOLUTION,
                  robot_radius: float = ROBOT_RADIUS, clearance: float = CLEARANCE) -> Grid:
    """The inflated grid of a map: floor edges, static obstacles and zones blocked."""
    grid = build_grid(spec.floor, spec.obstacles, [np.asarray(z.polygon) for z in spec.zones],
                      resolution, robot_radius, clearance)
    grid.prepare()
    return grid


def map_of_layout(layout: dict) -> MapSpec:
    """The MapSpec of a layout document (``/sim state``: floor, objects, zones)."""
    floor = FloorSpec(float(layout["floor"]["length"]), float(layout["floor"]["width"]))
    obstacles = tuple(
        ObjectSpec(o["name"], o["shape"], tuple(o["size"]), (o["x"], o["y"], o.get("z", 0.0)),
                   o["yaw"], o["mass"]) for o in layout.get("objects", ()) if o["mass"] == 0)
    zones = tuple(ZoneSpec(z["name"], z["kind"], tuple(tuple(v) for v in z["polygon"]),
                           tuple(z["color"])) for z in layout.get("zones", ()))
    return MapSpec(floor, obstacles, zones, int(layout.get("layout_version", 0)))


def command_of(order: SquadOrder, spacing: float = 0.6):
    """The squad command an order asks for (its formation, if named, with ``spacing`` m)."""
    formation = Formation(order.formation, spacing) if order.formation else None
    point = tuple(order.point) if order.point is not None else None
    if order.verb == "goto":
        return SquadGoTo(point[0], point[1], formation)
    if order.verb == "gather":
        return Gather(point, None, formation)
    if order.verb == "defend":
        return Defend(point, order.radius)
    if order.verb == "attack":
        return Attack(point, order.radius)
    if order.verb == "capture":
        return Capture(point, formation)
    if order.verb == "hold":
        return Halt()
    raise SwarmError(f"unknown squad verb {order.verb!r}")


def check_order(grid: Grid, order: SquadOrder, positions: np.ndarray,
                snap: float = SNAP_DISTANCE) -> None:
    """Raise SwarmError (``unreachable: ...``) when the squad at ``positions`` ((n, 2) m)
    cannot reach the order's point on ``grid`` (the test :meth:`Squad.plan` makes first: the
    point's free cell must be in the region of the squad's centroid)."""
    positions = np.asarray(positions, dtype=float).reshape(-1, 2)
    if order.point is None or not len(positions):
        return
    centre = positions.mean(axis=0)
    spread = float(np.hypot(*(positions - centre).T).max())
    start = grid.snap(centre[0], centre[1], max(snap, spread))
    reach = snap + (order.radius or 0.0) if order.verb in ("defend", "attack") else snap
    grid.snap(order.point[0], order.point[1], reach, label=int(grid.labels[start]))


def order_formation(order: SquadOrder, formation: Formation) -> Formation:
    """The formation a squad whose own is ``formation`` stands in at the end of ``order``."""
    if order.verb == "defend":
        return Formation("circle", formation.spacing, order.radius)
    if order.verb == "attack":
        return Formation("half_circle", formation.spacing, order.radius)
    if order.formation:
        return Formation(order.formation, formation.spacing)
    return formation


def arrived(order: SquadOrder, formation: Formation, positions: np.ndarray,
            speeds: np.ndarray) -> bool:
    """Whether a squad (own formation ``formation``) has arrived at the end of ``order``,
    judged from where its robots are, whoever drives them: every robot slower than
    ``ARRIVED_SPEED`` (``speeds``, (n,) m/s), the robots in the order's formation
    (:func:`order_formation`) within ``ARRIVED_RMS`` (RMS of
    :func:`~coopsim.swarm.formations.shape_error`, m) and, for an order with a point, the
    formation's anchor there within ``ARRIVED_ANCHOR`` m (rotation free: the distance of
    the robots' centroid from the point is that of the slots' centroid from the anchor).
    False for the verbs a squad does not arrive at the end of (not in ``ARRIVING``).

    Args:
        positions: (n, 2) the squad's robots, m, world frame.
    """
    positions = np.asarray(positions, dtype=float).reshape(-1, 2)
    if order.verb not in ARRIVING or not len(positions) or \
            float(np.max(speeds)) > ARRIVED_SPEED:
        return False
    offsets = order_formation(order, formation).offsets(len(positions))
    rms = float(np.sqrt(np.mean(shape_error(positions, offsets, 0.0) ** 2)))
    if rms > ARRIVED_RMS:
        return False
    if order.point is None:
        return True
    away = math.dist(positions.mean(axis=0), order.point)
    return abs(away - float(np.hypot(*offsets.mean(axis=0)))) <= ARRIVED_ANCHOR


def execute(squad: Squad, command, positions: np.ndarray) -> tuple:
    """Decompose ``command`` (a squad command, :class:`Capture` or :class:`Halt`) for the squad
    at ``positions`` and give each robot its order (see :meth:`Squad.command`).

    Raises:
        SwarmError: ``unreachable: ...``; the squad keeps its previous command.
    """
    positions = np.asarray(positions, dtype=float).reshape(-1, 2)
    if isinstance(command, Halt):
        if not len(positions):
            raise SwarmError("empty squad: a squad command needs at least 1 robot")
        plan = Plan(tuple(Sequence((Stop(),)) for _ in positions), None, positions.copy(),
                    np.arange(len(positions)), squad.heading)
        return squad.adopt(command, plan)
    if isinstance(command, Capture):
        plan = squad.plan(SquadGoTo(*command.point, command.formation), positions)
        return squad.adopt(command, _with_pickup(squad, plan, command.point))
    return squad.command(command, positions)


def _with_pickup(squad: Squad, plan: Plan, flag) -> Plan:
    """``plan`` with GoTo(flag) and PickUp appended to the order of the robot whose last point
    is nearest to the flag (a detour when the straight way there is blocked)."""
    ends = np.array([(o.commands[-1].x, o.commands[-1].y) for o in plan.orders])
    k = int(np.argmin(np.hypot(ends[:, 0] - flag[0], ends[:, 1] - flag[1])))
    way = np.array([ends[k], flag], dtype=float)
    if not squad.grid.segment_free(*way):
        path = find_path(squad.grid, ends[k], flag, squad.snap)
        way = smooth(squad.grid, path.points)
    steps = [GoTo(float(x), float(y), squad.pass_tolerance) for x, y in way[1:-1]]
    steps.append(GoTo(float(way[-1][0]), float(way[-1][1]), squad.tolerance))
    orders = list(plan.orders)
    orders[k] = Sequence(tuple(orders[k].commands) + tuple(steps) + (PickUp("flag"),))
    return Plan(tuple(orders), plan.path, plan.turns, plan.slot_of, plan.heading,
                plan.structure)
