"""Small builders shared by the core tests (specs in code, no files)."""

from __future__ import annotations

import time

from coopsim.model.specs import (FloorSpec, ObjectSpec, ParamSetting, RobotSpec, ScenarioSpec,
                           Settings, TargetSpec, WorldSpec)


def scenario(robots=(), objects=(), targets=(), floor=(10.0, 10.0), seed=0, dt=0.01,
             mode="lockstep") -> ScenarioSpec:
    """A scenario on an empty floor of ``floor`` (length, width) m."""
    return ScenarioSpec(WorldSpec(FloorSpec(*floor)), targets=tuple(targets),
                        robots=tuple(robots), objects=tuple(objects),
                        settings=Settings(dt=dt, mode=mode, seed=seed), name="test")


def robot(name="r1", x=0.0, y=0.0, yaw=0.0, type="single", params=()) -> RobotSpec:
    """A robot spec; params as (module, name, value) triples."""
    settings = tuple(ParamSetting(m, n, v) for m, n, v in params)
    return RobotSpec(type, name, (x, y, 0.0), yaw, params=settings)


def box(name, x, y, size=(1.0, 1.0), mass=0.0, yaw=0.0) -> ObjectSpec:
    """A box object."""
    return ObjectSpec(name, "box", (size[0], size[1], 0.5), (x, y, 0.25), yaw, mass)


def cylinder(name, x, y, diameter=0.5, mass=0.0) -> ObjectSpec:
    """A cylinder object."""
    return ObjectSpec(name, "cylinder", (diameter, diameter, 0.5), (x, y, 0.25), 0.0, mass)


def target(color, x, y) -> TargetSpec:
    """A target marker."""
    return TargetSpec(color, (x, y, 0.0))


def step_by_hand(sim, n: int = 1, before=None) -> None:
    """Step a Simulation ``n`` times through its phases (no stepper), calling ``before()``
    first each time (set commands there); stops early once a rule has ended the run."""
    for _ in range(n):
        if before is not None:
            before()
        sim.command({})
        sim.actuate()
        sim.physics()
        sim.sense()
        sim.apply_rules()
        if sim.ended:
            return


def chassis_type(label: str, modules: tuple, footprint: float = 0.15):
    """A robot type ``label`` (registered once) of one reference chassis carrying ``modules``:
    how a test puts a plugin's module on a robot."""
    from coopsim.model.plugins import ROBOT_TYPES
    from coopsim.model.robot_type import Assembly, RobotType
    from coopsim.plugins.robots.single import chassis

    def build(cls, spec):
        body, member = chassis(spec.name, "chassis", spec.position[0], spec.position[1],
                               spec.yaw, cls.modules)
        return Assembly((member,), (body,))

    if label not in ROBOT_TYPES:
        ROBOT_TYPES.register(label)(type(label, (RobotType,), {
            "label": label, "modules": tuple(modules), "footprint": footprint,
            "build": classmethod(build)}))
    return ROBOT_TYPES.get(label)


def unblock_fifo(fifo, done, after: float) -> None:
    """Should the code under test block opening ``fifo`` for reading (a map or scenario that
    is a FIFO), open its other end once ``after`` s pass without ``done`` being set, so a
    failing test fails instead of hanging (run on a daemon thread)."""
    import os

    if done.wait(after):
        return
    while not done.is_set():
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader yet
            pass
        done.wait(0.1)


def finishes(stepper, stall: float = 120.0) -> bool:
    """Wait until ``stepper``'s run has finished; False once its step has not moved for
    ``stall`` s of wall time. A loaded machine makes a run slower, not stuck: the guard is
    for a run that stopped stepping (a hang, a controller never attached), not for a slow one."""
    step, since = -1, time.monotonic()
    while not stepper.wait_finished(0.5):
        if stepper.snapshot.step != step:
            step, since = stepper.snapshot.step, time.monotonic()
        elif time.monotonic() - since > stall:
            return False
    return True


def freeze(pid: int) -> None:
    """SIGSTOP process ``pid`` and return once it is stopped. The signal acts when the process
    next runs: on a loaded machine a signal sent meanwhile (a SIGTERM) is taken first."""
    import os
    import signal

    os.kill(pid, signal.SIGSTOP)
    while True:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            if stat.read().rsplit(b")", 1)[1].split()[0] in (b"T", b"t"):
                return
        time.sleep(0.01)
