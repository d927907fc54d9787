"""How much memory a batch of copies will take, checked before anything is allocated
(docs/learning.md, "Batched worlds"): a batch too large for the machine is refused at once with
the figure, instead of working for minutes and ending in a ``MemoryError``.

The estimates are bytes per copy from the template, a little above what was measured
(``tracemalloc``, peak while building and taking one step; learn_avoid and learn_coverage,
the marginal cost between 400 and 1,600 copies for ``world``, 8,000 and 32,000 for
``copies``):

- ``copies``: per robot, :data:`ROBOT_FLOATS` float64 of state and scratch, three per sonar
  beam (directions, distances) and three per reading value (the reading kept, the one measured,
  the observation handed out). Measured 4.2 kB a copy on learn_avoid (4 robots, 11 beams, 25
  values), estimated 5.0 kB.
- ``world``: the one big scenario and simulation: :data:`WORLD_ROBOT` bytes a robot,
  :data:`WORLD_OBJECT` an object (the copy's walls and its 4 edges), :data:`WORLD_OTHER` a
  target or a metric. Measured 56 kB a copy on learn_avoid (4 robots, 10 objects, 2 metrics)
  and 43 kB on learn_coverage, estimated 67 kB and 51 kB.

The limit is the memory available now (Linux's ``MemAvailable``; elsewhere the free physical
pages); where neither can be read nothing is refused. The ``world`` backend is also bound by
the objects one world holds (:func:`check_objects`).
"""

from __future__ import annotations

import os

from ..model.limits import MAX_OBJECTS
from .mapping import LearningError

ROBOT_FLOATS = 48  # per robot: pose, headings, commands, state, contacts, wheels, scratch...
WORLD_ROBOT = 10_000  # bytes: a robot's spec, handles, rows and readings in the big world
WORLD_OBJECT = 2_500  # bytes: an object's spec and static shape
WORLD_OTHER = 1_000  # bytes: a target or a metric (and its renamed copy)
EDGES = 4  # walls the world backend adds around each copy


def available() -> int | None:
    """Bytes of memory a new allocation can have now, or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def copies_bytes(robots: int, beams: int, values: int) -> int:
    """Bytes a copy of the ``copies`` backend takes: ``robots`` a copy, ``beams`` sonar beams
    a robot and ``values`` reading values in all (every module of every robot of the copy)."""
    return 8 * (robots * (ROBOT_FLOATS + 3 * beams) + 3 * values)


def world_objects(base) -> int:
    """Objects a copy of scenario ``base`` adds to the ``world`` backend's one world: the
    world file's, the scenario's and the copy's edge walls."""
    return len(base.world.objects) + len(base.objects) + EDGES


def world_bytes(base) -> int:
    """Bytes a copy of scenario ``base`` takes on the ``world`` backend."""
    other = len(base.targets) + (len(base.monitors.metrics) if base.monitors else 0)
    return (WORLD_ROBOT * len(base.robots) + WORLD_OBJECT * world_objects(base)
            + WORLD_OTHER * other)


def check_objects(copies: int, base) -> None:
    """Refuse a ``world`` backend batch whose one world would hold more objects than a world
    holds (:data:`coopsim.model.limits.MAX_OBJECTS`), before building any of it.

    Raises:
        LearningError: the count, a copy's share and how many copies fit, in the sentence.
    """
    each = world_objects(base)
    if copies * each <= MAX_OBJECTS:
        return
    raise LearningError(
        f"{copies:,} copies on the world backend would hold {copies * each:,} objects "
        f"({each} a copy: its world's and scenario's objects and {EDGES} edge walls); a world "
        f"holds at most {MAX_OBJECTS:,}, so at most {MAX_OBJECTS // each:,} copies fit (the "
        "copies backend has no such bound)")


def check(copies: int, per_copy: int, backend: str) -> None:
    """Refuse a batch of ``copies`` copies of ``per_copy`` bytes each that the memory
    available now cannot hold.

    Raises:
        LearningError: the estimate, bytes a copy and the memory available, in the sentence.
    """
    need, have = copies * per_copy, available()
    if have is None or need <= have:
        return
    raise LearningError(
        f"{copies:,} copies would need about {need / 1e9:,.3g} GB ({need:,} bytes: "
        f"{per_copy:,} bytes a copy on the {backend} backend), more than the "
        f"{have / 1e9:,.3g} GB of memory available now; at most about "
        f"{have // max(per_copy, 1):,} copies fit")
