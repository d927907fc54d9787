"""Compile every kernel the suite uses into numba's on-disk cache, once, on both cores.

Run by tests/conftest.py before the xdist workers start, in :data:`PHASES`: each phase's parts
run as processes side by side (two, one a core), a phase after the one before has ended; then
``coopsim warmup`` itself, which then only loads. Why: on a fresh checkout the workers would
compile the same kernels at once in a dozen processes (test_kinematic.py's first tests took
330 s of a loaded machine: 24 s of CPU cold against 1.7 s from the cache); the warm-up done in
one process kept one core busy and the other idle for its 240 s of CPU (both workers wait for
it). The parts are cut where they share no kernel (a kernel two processes compile at once is
compiled twice): the loaders of the modules by which kernels they reach, the bundled worlds by
engine, the tests' own benchmark worlds by engine. Any failure changes nothing: the tests then
compile what they need.

``python tests/kernelwarm.py`` runs every part in this process, in order;
``python tests/kernelwarm.py PART...`` the parts named (what the conftest starts). Each part
says its name on stderr as it starts.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

#: The loaders' modules whose kernels the ray casters' part compiles (the batch casters call
#: the compiled caster's kernels); every other module's loader is the other part's.
CASTERS = ("coopsim.raycast.jitcast", "coopsim.env.batchcast", "coopsim.model.noise_kernels",
           "coopsim.physics.mujoco.raykernel")

#: The warm-up's phases: the parts of one phase run side by side (their CPU seconds cold, at
#: load 4-7: the loaders 63 and 71; the bundled worlds 31 and 38; the benchmark worlds 17 and,
#: with the swarm's search and the batch casters, 9; then ``coopsim warmup`` loads, 2 s: 231 s
#: of CPU, 127 s on the longer part of each phase).
PHASES = (("loaders:casters", "loaders:others"),
          ("worlds:aerial,mujoco", "worlds:kinematic,pymunk"),
          ("bench:kinematic", "bench:aerial swarm batch"))


def _say(part: str) -> None:
    sys.stderr.write(f"kernelwarm: {part}\n")
    sys.stderr.flush()


def _loaders(which: str) -> None:
    """Run the registered loaders of the modules of :data:`CASTERS` (``casters``) or of every
    other module (``others``)."""
    from coopsim.model import compiled

    compiled.import_kernel_modules()
    for warm in list(compiled._WARMERS):
        module = getattr(warm.load, "__module__", "")
        if (module in CASTERS) == (which == "casters") and not warm.ready:
            warm.load()
            warm.ready = True


def _worlds(engines: str) -> None:
    """``coopsim warmup``'s bundled worlds stepped on ``engines`` (comma-separated labels),
    as it steps them (what a step composes is compiled as a run compiles it); then the
    conformance scenarios whose engine is one of them (the conformance tests run them in
    processes that would otherwise compile their composed calls, a minute at load 10)."""
    from coopsim.app import warmup
    from coopsim.formats.files import load
    from coopsim.model.plugins import default_engine

    for engine in engines.split(","):
        for name in warmup.SCENARIOS:
            warmup._step(name, engine)
    for path in sorted((ROOT / "coopsim" / "conformance").glob("*.scenario")):
        if (load(str(path)).settings.engine or default_engine()) in engines.split(","):
            warmup._step(str(path), None)


def _bench(*args: str) -> None:
    """``coopsim bench step`` with ``args`` at two steps, quietly; an interrupt (SIGINT,
    SIGTERM: the command's exit status 130) ends the warm-up, any other exit goes on."""
    from coopsim.app.cli import main
    from coopsim.app.interrupt import EXIT_INTERRUPTED

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(["bench", "step", "--steps", "2", *args], standalone_mode=False)
        except SystemExit as exc:
            if exc.code == EXIT_INTERRUPTED:
                raise


def _bench_engine(engine: str) -> None:
    """The tests' benchmark worlds on ``engine``, at one and two threads."""
    for threads in ("1", "2"):
        if engine == "kinematic":
            _bench("--robots", "3,300", "--engine", "kinematic", "--threads", threads)
        else:
            _bench("--robots", "3", "--engine", engine, "--robot-type", "crazyflie",
                   "--threads", threads)


def _swarm() -> None:
    from coopsim.swarm.astar import find_path
    from coopsim.swarm.grid import Grid

    blocked = np.zeros((40, 40), bool)
    blocked[10:30, 20] = True
    find_path(Grid(blocked, 0.05, (0.0, 0.0)), (0.2, 1.0), (1.8, 1.0))


def _batch() -> None:
    """The batched environments' copy caster beside the world caster, as
    tests/env/test_learning_batch.py compares them (their second signatures: 300 s of a loaded
    machine in that test)."""
    try:
        import gymnasium

        import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0
    except ImportError:
        return  # coopsim[learning] is not installed: no test needs these kernels
    from coopsim.plugins.modules.sonar import ANGLES
    from coopsim.raycast.jitcast import JitRayCaster, fan_directions

    env = gymnasium.make_vec("coopsim/Scenario-v0", num_envs=9, scenario=str(
        ROOT / "scenarios" / "learn_avoid.scenario"), robot=["r1", "r2", "r3", "r4"],
        observe=["sonar"], lean=True, backend="world")
    caster, sim = env.batch.caster, env.batch.sim
    env.reset(seed=0)
    env.step(np.tile([0.5, 0.3], (9, 4, 1)))
    radius, group = np.ascontiguousarray(sim.robots.radius), sim.robots.group.astype(np.int64)
    pose = np.ascontiguousarray(sim.snapshot.poses)
    heading, fan = fan_directions(pose[:, 2], ANGLES)
    moving = (np.ascontiguousarray(np.column_stack([pose[:, :2], radius])), np.zeros((0, 4)),
              group, np.zeros(0, np.int64))
    reach = np.full(len(pose), 2.0)
    caster.fan(pose, heading, fan, reach, radius, group, moving)
    JitRayCaster.fan(caster, pose, heading, fan, reach, radius, group, moving)
    env.close()


def _batch_part() -> None:
    try:
        _batch()
    except Exception as exc:  # noqa: BLE001 -- the test compiles them then, as before
        print(f"kernelwarm: the batch casters were not compiled: {exc!r}", file=sys.stderr)


def run(part: str) -> None:
    """Run one part of :data:`PHASES` (``name:argument``, or words run in turn)."""
    for word in part.split():
        _say(word)
        name, _, arg = word.partition(":")
        if name == "loaders":
            _loaders(arg)
        elif name == "worlds":
            _worlds(arg)
        elif name == "bench":
            _bench_engine(arg)
        elif name == "swarm":
            _swarm()
        elif name == "batch":
            _batch_part()
        else:
            raise SystemExit(f"kernelwarm: no part {word!r}")


def main(parts: list[str]) -> None:
    """Run ``parts`` (all of :data:`PHASES` when none) in turn; an interrupt (SIGINT, or
    SIGTERM once a part has run coopsim's command line, which makes it one) ends the warm-up
    with the command's exit status 130."""
    from coopsim.app.interrupt import EXIT_INTERRUPTED

    try:
        for part in parts or [p for phase in PHASES for p in phase]:
            run(part)
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    main(sys.argv[1:])
