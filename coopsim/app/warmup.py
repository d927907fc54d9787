"""``coopsim warmup``: compile every kernel into numba's disk cache, ahead of the first run.

A run compiles what it needs by itself (one stderr line while it does:
:mod:`coopsim.model.compiled`); this command does it for everything at once, so that no later
run waits: after an install, an update, or in a container image's build. It imports every
module holding kernels (found in the package's files) and runs their loaders, then builds and
steps a few bundled worlds on each engine: what a step composes at run time (its composed calls
per layout, an engine's small-world step) is compiled as a run compiles it. What it takes is said
on stdout: wall and CPU seconds, and whether it compiled or only loaded.
"""

from __future__ import annotations

import os
import time

from ..model.bundled import bundled_root

#: Bundled scenarios stepped on every engine that accepts them: ground robots with every module
#: of the reference robot and a target, a one-robot world, a Crazyflie, an arm
SCENARIOS = ("demo", "one_robot", "learn_goal", "crazyflie_hover", "arm_reach")
STEPS = 3  # steps each world takes (the first plan, its composed calls, a second sensing)


def warmup(say=print) -> None:
    """Compile (or load) every kernel; ``say`` gets the summary line."""
    from ..model import compiled
    from ..model.plugins import ENGINES

    wall, cpu = time.perf_counter(), time.process_time()
    compiled.import_kernel_modules()
    compiled.load_pending()
    for engine in ENGINES.labels():
        for name in SCENARIOS:
            _step(name, engine)
    compiled.load_pending()
    what = "compiled" if compiled.compiled_here() else "loaded from the cache"
    folder = os.environ.get("NUMBA_CACHE_DIR") or "__pycache__ beside the sources"
    say(f"coopsim: the kernels are {what} ({time.perf_counter() - wall:.1f} s, "
        f"{time.process_time() - cpu:.1f} s of CPU; cache: {folder})")


def _step(name: str, engine: str | None) -> None:
    """Build bundled scenario ``name`` (or the scenario file at path ``name``) on ``engine``
    (None: its own) and take :data:`STEPS` steps; nothing when the engine refuses the scenario
    or cannot load (its package missing)."""
    from ..formats.files import load
    from ..model.errors import CoopsimError
    from ..sim.simulation import Simulation
    from ..sim.stepper import Stepper

    path = name if name.endswith(".scenario") else bundled_root() / "scenarios" / f"{name}.scenario"
    try:  # a scenario naming the mujoco engine refuses to load without MuJoCo
        sim = Simulation(load(str(path)), seed=1, engine=engine)
    except (CoopsimError, ImportError):  # a 2D engine refusing a flyer, mujoco not installed
        return
    stepper = Stepper(sim, mode="lockstep")
    for _ in range(STEPS):
        stepper.tick()
