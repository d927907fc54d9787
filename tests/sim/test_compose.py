"""The composed step (coopsim.sim.compose): a world whose kinds declare kernels (built-in ones
and a plugin's, registered here) runs them in one compiled call each side of the physics, with
the engine's step inside on the kinematic engine; it gives the plain path's bits, every
snapshot column, with noise, lost data and a kind's kept state, on the kinematic and pymunk
engines; a kind of Python code only is a stage and demotes nobody; an edit of a kernel the
composed call reaches compiles it again."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from coopsim.model.commands import Command
from coopsim.model.compiled import jit, sources_key
from coopsim.model.driver import Driver
from coopsim.model.kernel import StateField
from coopsim.model.module import Module
from coopsim.model.params import ParamSpec
from coopsim.model.plugins import DRIVERS, MODULES, ROBOT_TYPES
from coopsim.model.robot_type import Assembly
from coopsim.model.specs import (DriverSetting, FloorSpec, ObjectSpec, ParamSetting, RobotSpec,
                                 ScenarioSpec, Settings, WorldSpec)
from coopsim.plugins.robots.single import Single, chassis
from coopsim.sim import compose, fused
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper
from kernelkinds import Ping, ping_sense  # noqa: F401 -- the plugin kind, registered below
from tests.sim.test_fused import _columns, _same


@jit()
def tilt_sense(views, rows, params, state, normals, uniforms, prev, out):
    """The body's quaternion w and z (full_state) and the step's time and length (clock)."""
    full, clock = views
    for k in range(len(rows)):
        i = rows[k]
        out[k, 0], out[k, 1] = full[i, 3], full[i, 6]
        out[k, 2], out[k, 3] = clock[0], clock[1]


class Tilt(Module):
    """A plugin's kind reading the core's computed views ``full_state`` and ``clock``."""

    label = "tilt"
    description = "quaternion w, z; time, s; step, s"
    commands = (Command(9302, "read", "tilt", kind="read", doc="w, z, t, dt"),)
    fields = ("w", "z", "t", "dt")
    kernel_views = ("full_state", "clock")
    kernel_sense = tilt_sense


class Chirp(Module):
    """A plugin's kind of Python code only: the yaw's sine."""

    label = "chirp"
    description = "sine of the yaw"
    commands = (Command(9301, "read", "chirp", kind="read", doc="sin(yaw)"),)
    fields = ("s",)

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return np.sin(frame.pose[rows, 2])[:, None]


class PingBot(Single):
    """``single``'s chassis carrying motors, gps, compass, ping and chirp."""

    label = "pingbot"
    description = "a test robot"
    modules = ("motors", "gps", "compass", "ping", "chirp", "tilt")

    @classmethod
    def build(cls, spec):
        body, member = chassis(spec.name, "chassis", spec.position[0], spec.position[1],
                               spec.yaw, cls.modules)
        return Assembly((member,), (body,))


class PinglessBot(PingBot):
    """``pingbot`` without the ping."""

    label = "pinglessbot"
    modules = ("motors", "gps", "compass", "chirp")


class Swing(Driver):
    """Wheel speeds that change with the robot's position (so each step differs)."""

    label = "swing"
    description = "a test driver"
    params = ()

    def step(self, bot):
        x, y = bot.gps.read()
        bot.motors.set_speeds(0.3 + 0.2 * math.sin(3 * x), 0.25 + 0.1 * math.cos(2 * y))


@pytest.fixture(scope="module", autouse=True)
def plugins():
    """The kinds, the robot type and the driver registered for this module's tests."""
    added = [(MODULES, Ping), (MODULES, Chirp), (MODULES, Tilt), (ROBOT_TYPES, PingBot),
             (ROBOT_TYPES, PinglessBot), (DRIVERS, Swing)]
    for registry, item in added:
        registry.register(item.label)(item)
    yield
    for registry, item in added:
        with registry._lock:
            del registry._items[item.label], registry._origins[item.label]


NOISY = (("gps", "noise", 0.02), ("compass", "noise", 0.01), ("ping", "noise", 0.05),
         ("ping", "lost", 30.0))


def _spec(n: int, engine: str, params=NOISY) -> ScenarioSpec:
    robots = tuple(RobotSpec("pingbot", f"r{k}", (0.35 * k - 0.6, 0.1 * k - 0.5, 0.4 * k),
                             drivers=(DriverSetting("swing", ()),),
                             params=tuple(ParamSetting(*p) for p in params))
                   for k in range(n))
    objects = (ObjectSpec("wall", "box", (0.3, 2.0, 0.5), (1.2, 0.0, 0.25)),)
    return ScenarioSpec(WorldSpec(FloorSpec(4.0, 4.0), objects=objects), robots=robots,
                        settings=Settings(dt=0.05, mode="lockstep", seed=3, engine=engine))


def _run(spec, steps: int, fuse: bool, monkeypatch) -> tuple[list, int, str]:
    monkeypatch.setattr(fused, "ENABLED", fuse)
    sim = Simulation(spec)
    stepper, out, took = Stepper(sim, mode="lockstep"), [], 0
    for _ in range(steps):
        snap = stepper.tick()
        took += sim._fusing
        out.append(_columns(snap))
    return out, took, sim.step_path


@pytest.mark.parametrize("engine", ["kinematic", "pymunk"])
@pytest.mark.parametrize("n", [1, 3])
def test_composed_step_gives_the_plain_paths_bits(engine, n, monkeypatch):
    plain, took, path = _run(_spec(n, engine), 80, False, monkeypatch)
    assert took == 0 and path.startswith("plain")
    composed, took, path = _run(_spec(n, engine), 80, True, monkeypatch)
    assert path == "composed (motors, compass, gps, ping, tilt) + stages (chirp)"
    assert took == 80
    _same(plain, composed)
    # the noise and the lost data drew: readings differ from the noiseless ones
    quiet, _, _ = _run(_spec(n, engine, ()), 80, True, monkeypatch)
    assert quiet[-1] != composed[-1]


@pytest.mark.parametrize("engine", ["kinematic", "pymunk"])
def test_the_computed_views_of_a_planar_world(engine, monkeypatch):
    """``full_state`` on a planar engine is the planar state on the floor, ``clock`` the time
    the step measured and its length, made for the composed call as for the plain path."""
    monkeypatch.setattr(fused, "ENABLED", True)
    sim = Simulation(_spec(2, engine))
    assert isinstance(sim.plan().fused, compose.ComposedPass)
    stepper = Stepper(sim, mode="lockstep")
    for _ in range(3):
        snap = stepper.tick()
    tilt, yaw = snap.readings["tilt"], snap.poses[:, 2]
    assert np.allclose(tilt[:, 0], np.cos(yaw / 2)) and np.allclose(tilt[:, 1], np.sin(yaw / 2))
    assert tilt[:, 2].tolist() == [snap.time] * 2 and tilt[:, 3].tolist() == [0.05] * 2


def test_a_kind_reading_the_clock_while_acting_is_not_composed():
    """The acting call runs after the step's time moved on: it makes no ``clock``."""
    class Timed(Module):
        label = "timed"
        kernel_views = ("clock",)
        kernel_actuate = tilt_sense  # (never called: refused first)

    entry = ("timed", Timed, np.zeros(1, np.int64), {}, True)
    found, why = compose.ComposedPass.build((entry,), (), Simulation(_spec(1, "kinematic"))
                                            .world.engine, False)
    assert found is None and why == ("module 'timed' reads the view 'clock' while acting (a "
                                     "composed call makes it for sensing)")


def test_the_plain_path_says_why_a_world_does_not_compose():
    """The step line's reason for each way a plugin's kinds keep a world plain: a kernel
    reading a view no composed call makes, a kernel made inside a function (the composed
    module cannot import it by name), no kind with a kernel, no kind at all."""
    @jit()
    def local_sense(views, rows, params, state, normals, uniforms, prev, out):
        for k in range(len(rows)):
            out[k, 0] = views[0][rows[k], 0]

    class Odd(Module):
        label = "odd"
        kernel_views = ("pressure",)
        kernel_sense = tilt_sense

    class Local(Module):
        label = "local"
        kernel_views = ("pose",)
        kernel_sense = local_sense

    world = Simulation(_spec(1, "kinematic")).world
    rows = np.zeros(1, np.int64)
    for module, why in ((Odd, "module 'odd' reads the view 'pressure' a composed call does "
                              "not make"),
                        (Local, "module 'local''s kernel cannot be imported by name"),
                        (Chirp, "no module has a kernel")):
        entry = (module.label, module, rows, {}, False, False, True, 0, False)
        found, path, before, after = fused.choose((), (entry,), world)
        assert found is None and path == f"plain ({why})"
    assert fused.choose((), (), world)[1] == "plain (no module acts or senses)"


def test_the_engines_step_runs_inside_the_acting_call_on_the_kinematic_engine(monkeypatch):
    monkeypatch.setattr(fused, "ENABLED", True)
    sim = Simulation(_spec(2, "kinematic"))
    assert isinstance(sim.plan().fused, compose.ComposedPass) and sim.plan().fused.in_call
    stepped = []
    engine = sim.world.engine
    monkeypatch.setattr(type(engine), "step", lambda self, dt: stepped.append(dt))
    stepper = Stepper(sim, mode="lockstep")
    for _ in range(5):
        stepper.tick()
    assert stepped == [] and sim.step == 5  # the engine's own step never called
    assert np.linalg.norm(engine.robot_state()[:, :2]
                          - np.array([[-0.6, -0.5], [-0.25, -0.4]])) > 0.01


def test_the_composed_text_names_every_kernel_and_its_digest_follows_them():
    text = compose.source((("coopsim.plugins.modules.kernels", "motors_actuate", ("axle",)),),
                          (("kernelkinds", "ping_sense", ("pose",)),),
                          (("coopsim.physics.kinematic.small", "step_checked"),
                           ((0, ("coopsim.physics.kinematic.small", "drive_rows")),)), None)
    assert "import motors_actuate as A0" in text and "import ping_sense as S0" in text
    assert "import drive_rows as D0" in text and "STEP(engine, edge)" in text
    assert "D0(engine, rows, drive)" in text
    # each function takes the base arrays its kinds read, no other (each is typed at a call)
    assert "def act(axle, statics, commands, outs):" in text
    assert "def act_step(axle, statics, commands, outs, engine, edge):" in text
    assert "def sense(state, keys, noise, statics, prevs, outs, casts, belows):" in text
    assert compose.takes((("ranges",), ("velocity", "dt")), fan=True) == (
        "state", "radius", "group", "dt")  # the fan cast inside the call reads its robots
    assert compose.takes((("below", "arm_chain"),), below=True) == ("full", "arms")
    assert compose.picker(("axle", "dt"))(compose.BASE) == ("axle", "dt")
    assert compose.picker(("dt",))(compose.BASE) == ("dt",) and compose.picker(())(()) == ()
    module = compose.compiled(text)
    assert compose.compiled(text) is module  # one import a process
    # the composed call's cache key reaches the kernels it calls (an edit of one recompiles)
    before = sources_key(module.sense)
    kept = ping_sense.py_func.__code__
    import coopsim.model.compiled as compiled
    path = kept.co_filename
    compiled._DIGESTS[path] = b"edited"
    try:
        assert sources_key(module.sense) != before
    finally:
        del compiled._DIGESTS[path]


def test_the_parallel_calls_cut_only_the_rowwise_kinds_rows_into_chunks():
    kernels = "coopsim.plugins.modules.kernels"
    text = compose.source(((kernels, "motors_actuate", ("pose", "velocity", "axle"), True, 2),),
                          (("kernelkinds", "ping_sense", ("pose",)),
                           (kernels, "gps_sense", ("pose",), True, 0)), None, None)
    par = text[text.index("def act_par("):]
    assert "for c in prange(chunks):" in par
    # the kind that does not say it is rowwise runs whole, before the loop, on one thread
    assert "S0((state[:, :3], ), r0, p0, s0, z0, u0, prevs[0], outs[0])" in par
    assert "r0[a0:b0]" not in par[par.index("def sense_par("):]
    # a rowwise kind's every argument by row is cut to the chunk, its state table whole
    assert "S1((state[:, :3], ), r1[a1:b1], p1[a1:b1], (), z1[a1:b1], u1[a1:b1], " \
        "v1[a1:b1], o1[a1:b1])" in par
    assert "s0_0, s0_1, = s0" in par and "(s0_0, s0_1, ), c0[a0:b0]" in par
    # the serial calls are unchanged: all rows in one call each
    serial = text[:text.index("def act_par(")]
    assert "for c in prange" not in serial and "[a" not in serial


@pytest.mark.parametrize("engine", ["kinematic", "pymunk"])
def test_the_calls_are_compiled_when_the_plan_is_made_not_at_a_step(engine, monkeypatch):
    """The simulation compiles (or loads) the composed calls as it makes its plan: its steps
    compile nothing more."""
    monkeypatch.setattr(fused, "ENABLED", True)
    sim = Simulation(_spec(2, engine))
    module = sim.plan().fused.module
    calls = [getattr(module, name) for name in ("act", "act_step", "sense")
             if hasattr(module, name)]

    def versions():
        return [len(call.signatures) for call in calls]

    made = versions()
    assert made[-1] >= 1  # sense, before any step
    stepper = Stepper(sim, mode="lockstep")
    for _ in range(10):
        stepper.tick()
    assert versions() == made


def test_a_ground_world_reading_contacts_on_aerial_is_composed(monkeypatch):
    """e-pucks (their bumpers read the engine's contacts, none on ``aerial``) on the aerial
    engine: composed, with the plain path's bits."""
    from pathlib import Path

    from coopsim.formats.files import load

    path = Path(__file__).resolve().parents[2] / "scenarios" / "epuck_braitenberg.scenario"
    runs = []
    for fuse in (True, False):
        monkeypatch.setattr(fused, "ENABLED", fuse)
        sim = Simulation(load(str(path)), seed=1, engine="aerial")
        stepper = Stepper(sim, mode="lockstep")
        runs.append(([_columns(stepper.tick()) for _ in range(30)], sim.step_path))
    (composed, path_c), (plain, _) = runs
    assert path_c.startswith("composed (leds, motors")
    _same(composed, plain)


def test_a_kind_some_robots_lack_takes_the_calls_every_robot_carrying_it_compiled(monkeypatch):
    """The previous readings reach ``sense`` with one type whether every robot carries a kind
    or only some do (a gather of some robots' readings is read-only, as the carried readings
    are): a world where one robot lacks the ping steps on the versions a world where every
    robot carries it compiled (a second version was seconds of compiling in a run's step)."""
    monkeypatch.setattr(fused, "ENABLED", True)
    every = Simulation(_spec(2, "pymunk"))
    module = every.plan().fused.module
    stepper = Stepper(every, mode="lockstep")
    for _ in range(3):
        stepper.tick()
    made = len(module.sense.signatures)
    spec = _spec(2, "pymunk")
    spec = dataclasses.replace(spec, robots=(spec.robots[0], dataclasses.replace(
        spec.robots[1], type="pinglessbot", params=spec.robots[1].params[:2])))
    some = Simulation(spec)
    assert some.plan().fused.module is module  # the same kinds: the same composed text
    assert not all(entry[6] for entry in some.plan().fused.sensing)
    stepper = Stepper(some, mode="lockstep")
    for _ in range(3):
        stepper.tick()
    assert len(module.sense.signatures) == made
    # nor does a kind at a rate: its robots due, some steps all of them, some a few
    timed = Simulation(_spec(4, "pymunk", NOISY + (("gps", "rate", 8.0), ("compass", "rate", 5.0))))
    assert timed.plan().fused.module is module
    stepper = Stepper(timed, mode="lockstep")
    for _ in range(6):
        stepper.tick()
    assert len(module.sense.signatures) == made
