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

from importlib import import_module

#: Each name of the package, the module it is imported from when first asked for (PEP 562):
#: the simulator's plugins import the few modules they use (``coopsim.swarm.flight``) without
#: the planner's SciPy (optimize, sparse, ndimage: ~0.3 s of CPU a process); a
#: controller's ``from coopsim.swarm import Squad`` imports it at that line, as before.
_HOMES = {
    "arbitrator": ("Arbitrator", "Decision", "RobotController"),
    "astar": ("Path", "find_path", "replan", "search", "smooth"),
    "behaviours": ("AvoidCollision", "AvoidLines", "Drop", "GoTo", "Hold", "Idle", "PickUp",
                   "RespectBorders", "RobotState", "Rotate", "Sequence", "Stop"),
    "errors": ("SwarmError",),
    "follower": ("Drive", "PathFollower", "steer", "wheel_speeds"),
    "formations": ("FORMATIONS", "Formation", "assign", "block", "circle", "column",
                   "half_circle", "inverse_wedge", "line", "wedge"),
    "grid": ("Grid", "build_grid"),
    "squad": ("Attack", "Defend", "Gather", "Plan", "Squad", "SquadGoTo"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_HOME)


def __getattr__(name: str):
    """A name of :data:`__all__`, imported from its module on first use (then cached here)."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
