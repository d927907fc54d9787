"""Squad coordination for coopsim robots: formations, grid A*, subsumption, squads.

Imports only numpy, scipy and the standard library (plus :mod:`coopsim.specs` and
:mod:`coopsim.errors`), and acts on robots only through the robot API (``gps``, ``compass``,
``sonar``, ``bumper``, ``motors``), so the same code drives robots in-process or over the network.

Example (in a network controller)::

    from coopsim.client import Client
    from coopsim.files import load_scenario
    from coopsim.swarm import Squad, Formation, build_grid

    spec = load_scenario("scenarios/ctf.scenario")
    grid = build_grid(spec.world.floor, spec.world.objects, clearance=0.1)
    with Client() as c:
        squad = Squad([c.robot(n) for n in ("robot1", "robot2", "robot3")], grid,
                      Formation("wedge", spacing=0.7))
        squad.goto(4.0, 8.0)
        while not squad.arrived(): squad.step()
"""

from .arbitrator import Arbitrator, Decision, RobotController
from .astar import Path, find_path, replan, search, smooth
from .behaviours import (AvoidCollision, Drop, GoTo, Hold, Idle, PickUp, RespectBorders,
                         RobotState, Rotate, Sequence, Stop)
from .errors import SwarmError
from .follower import Drive, PathFollower, steer, wheel_speeds
from .formations import (FORMATIONS, Formation, assign, block, circle, column, half_circle,
                         inverse_wedge, line, wedge)
from .grid import Grid, build_grid
from .squad import Attack, Defend, Gather, Plan, Squad, SquadGoTo

__all__ = [
    "Arbitrator", "Attack", "AvoidCollision", "Decision", "Defend", "Drive", "Drop",
    "FORMATIONS", "Formation", "Gather", "GoTo", "Grid", "Hold", "Idle", "Path", "PathFollower",
    "PickUp", "Plan", "RespectBorders", "RobotController", "RobotState", "Rotate", "Sequence",
    "Squad", "SquadGoTo", "Stop", "SwarmError", "assign", "block", "build_grid", "find_path",
    "circle",
    "column", "half_circle", "inverse_wedge", "line", "replan", "search", "smooth", "steer",
    "wedge", "wheel_speeds",
]
