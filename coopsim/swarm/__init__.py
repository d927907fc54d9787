"""Squad coordination for coopsim robots: formations, grid A*, subsumption, squads.

Imports only numpy, scipy and the standard library (plus :mod:`coopsim.model.specs` and
:mod:`coopsim.model.errors`), and acts on robots only through the robot API (``gps``, ``compass``,
``sonar``, ``bumper``, ``motors``), so the same code drives robots in-process or over the network.

Example (a network controller driving three robots of a running scenario)::

    from coopsim.client import Client
    from coopsim.files import load_world
    from coopsim.swarm import AvoidCollision, Formation, RobotController, Squad, build_grid

    world = load_world("worlds/arena.world")
    grid = build_grid(world.floor, world.objects, resolution=0.1, clearance=0.1)
    with Client() as c:
        robots = [c.robot(n) for n in ("robot1", "robot2", "robot3")]
        squad = Squad(robots, grid, Formation("wedge", spacing=0.7),
                      controllers=[RobotController(r, reflexes=[AvoidCollision()])
                                   for r in robots])
        squad.goto(2.5, -3.0)          # raises SwarmError("unreachable: ...") if it cannot
        squad.step()
        while not squad.arrived():
            squad.step()               # one sensor read and one motor command per robot

Layout: :mod:`.formations` (slots, assignment), :mod:`.grid` (occupancy grid), :mod:`.astar`
(paths, smoothing, re-planning), :mod:`.follower` (wheel speeds), :mod:`.behaviours` and
:mod:`.arbitrator` (the subsumption stack), :mod:`.squad` (squad commands).
"""

from .arbitrator import Arbitrator, Decision, RobotController
from .astar import Path, find_path, replan, search, smooth
from .behaviours import (AvoidCollision, AvoidLines, Drop, GoTo, Hold, Idle, PickUp, RespectBorders,
                         RobotState, Rotate, Sequence, Stop)
from .errors import SwarmError
from .follower import Drive, PathFollower, steer, wheel_speeds
from .formations import (FORMATIONS, Formation, assign, block, circle, column, half_circle,
                         inverse_wedge, line, wedge)
from .grid import Grid, build_grid
from .squad import Attack, Defend, Gather, Plan, Squad, SquadGoTo

__all__ = [
    "Arbitrator", "Attack", "AvoidCollision", "AvoidLines", "Decision", "Defend", "Drive", "Drop",
    "FORMATIONS", "Formation", "Gather", "GoTo", "Grid", "Hold", "Idle", "Path", "PathFollower",
    "PickUp", "Plan", "RespectBorders", "RobotController", "RobotState", "Rotate", "Sequence",
    "Squad", "SquadGoTo", "Stop", "SwarmError", "assign", "block", "build_grid", "find_path",
    "circle",
    "column", "half_circle", "inverse_wedge", "line", "replan", "search", "smooth", "steer",
    "wedge", "wheel_speeds",
]
