"""The ground robots' composed step (coopsim.sim.compose): a world of ``single`` robots
(motors, sonar, target, odometry, gps, compass, bumper: every kind a kernel) takes the composed
calls on the kinematic and pymunk engines and gives the plain path's bits, every snapshot
column, with noise, lost data, slip and contacts, at 1 and 2 numba threads; a world with kinds
of Python code runs them as stages around the calls, with the same bits; so does a world with
kinds at a rate, through a parameter changed mid-run."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from coopsim.model import threads as policy
from coopsim.model.compiled import load_pending
from coopsim.model.specs import (DriverSetting, FloorSpec, ObjectSpec, ParamSetting, RobotSpec,
                                 ScenarioSpec, Settings, TargetSpec, WorldSpec, ZoneSpec)
from coopsim.sim import compose, fused
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper
from tests.sim.test_fused import _columns, _same  # every snapshot column, compared


NOISY = (("sonar", "noise", 0.01), ("gps", "noise", 0.02), ("compass", "noise", 0.01))


def _robots(n: int, params=NOISY, engine: str = "kinematic", kind: str = "single",
            driver: str = "wander") -> ScenarioSpec:
    """``n`` robots of ``kind`` driven by ``driver`` (``wander``: wandering) in a 4 m arena
    with a box and a post, two targets, the robots overlapping at the start (contacts); ``params``
    (module, name, value) on every robot."""
    settings = tuple(ParamSetting(*p) for p in params)
    robots = tuple(RobotSpec(kind, f"r{k}", (0.35 * k - 0.6, 0.1 * k - 0.5, 0.4 * k),
                             drivers=(DriverSetting(driver, ()),), params=settings)
                   for k in range(n))
    objects = (ObjectSpec("wall", "box", (0.3, 2.0, 0.5), (1.2, 0.0, 0.25)),
               ObjectSpec("post", "cylinder", (0.4, 0.4, 0.5), (-1.2, 0.8, 0.25)))
    world = WorldSpec(FloorSpec(4.0, 4.0), objects=objects)
    return ScenarioSpec(world, robots=robots,
                        targets=(TargetSpec("red", (1.5, 1.5, 0.0)),
                                 TargetSpec("blue", (-1.5, -1.0, 0.0))),
                        settings=Settings(dt=0.05, mode="lockstep", seed=3, engine=engine))


def _run(spec: ScenarioSpec, steps: int, fuse: bool, monkeypatch,
         started=None) -> tuple[list, int, str]:
    """Every snapshot's columns over ``steps`` ticks, how many ticks were composed, and
    the plan's path; ``started()`` is called once the simulation is made."""
    monkeypatch.setattr(fused, "ENABLED", fuse)
    load_pending()  # the kernels loaded before the run (a run loads them as it starts)
    sim = Simulation(spec)
    if started is not None:
        started()
    stepper, out, took = Stepper(sim, mode="lockstep"), [], 0
    for _ in range(steps):
        snap = stepper.tick()
        took += sim._fusing
        out.append(_columns(snap))
    return out, took, sim.step_path


LABELS = "composed (motors, bumper, compass, gps, odometry, sonar, target)"


@pytest.mark.parametrize("engine", ["kinematic", "pymunk"])
def test_a_single_robot_world_is_composed_and_gives_the_plain_paths_bits(
        monkeypatch, engine):
    spec = _robots(4, engine=engine)
    fast, took, path = _run(spec, 300, True, monkeypatch)
    assert path == LABELS
    assert took == 300
    plain, none, plain_path = _run(spec, 300, False, monkeypatch)
    assert none == 0 and plain_path == "plain (composing off)"
    _same(fast, plain)
    bumped = [np.frombuffer(s["reading bumper"]).any() for s in fast]
    assert any(bumped)  # the contacts were read, not only zeros


@pytest.mark.parametrize("count, kind", [(2, "single"), (4, "single"), (2, "swarmbot")])
def test_the_same_bits_on_more_threads(monkeypatch, count, kind):
    """With the rowwise kinds' rows cut in chunks on numba's threads (a low ROWS_MIN and a
    one-row chunk: each robot a chunk), every step stays composed and the run is the
    one-thread run, every snapshot column (swarmbot: its line sensors' zones, leds, radio
    a stage)."""
    spec = _robots(3, kind=kind)
    if kind == "swarmbot":
        spec = replace(spec, zones=ZONES)
    policy.use(1)
    one, _, _ = _run(spec, 150, True, monkeypatch)
    monkeypatch.setattr(compose, "ROWS_MIN", 2)
    monkeypatch.setattr(compose, "ROWS_CHUNK", 1)
    threaded, real = [], compose.ComposedPass.on_threads  # the parallel calls, counted
    monkeypatch.setattr(compose.ComposedPass, "on_threads", lambda self, call, args: (
        threaded.append(call.__name__), real(self, call, args))[1])
    try:
        if policy.use(count) < 2:
            pytest.skip("one core: no threads to share the rows")
        many, took, _ = _run(spec, 150, True, monkeypatch)
    finally:
        policy.use(1)
    assert took == 150 and sorted(set(threaded)) == ["act_step_par", "sense_par"]
    assert len(threaded) == 300
    _same(one, many)


SWARMBOT = "composed (motors, bumper, compass, gps, line, odometry, sonar, target)"
#: No-go zones the swarmbots wander over: water and a nogo strip overlapping it, a border
ZONES = (ZoneSpec("ZONE_1", "water", ((-1.0, -1.2), (0.2, -1.2), (0.2, 0.2), (-1.0, 0.2))),
         ZoneSpec("ZONE_2", "nogo", ((-0.4, -2.0), (-0.1, -2.0), (-0.1, 2.0), (-0.4, 2.0))),
         ZoneSpec("ZONE_3", "border", ((0.5, -1.8), (1.1, -1.8), (0.8, -1.2))))


@pytest.mark.parametrize("engine, kind, labels, stages", [
    ("kinematic", "swarmbot", SWARMBOT, "radio"),
    ("pymunk", "swarmbot", SWARMBOT, "radio"),
    ("kinematic", "kilobot", "composed (leds, motors, bumper, compass, gps, odometry)",
     "light, radio"),
])
def test_kinds_of_python_code_run_as_stages_and_give_the_plain_paths_bits(
        monkeypatch, engine, kind, labels, stages):
    """Kinds with no kernel (swarmbot: radio; kilobot: light and radio, its leds composed,
    lit by its driver) run as stages around the calls, the others stay composed (the
    swarmbots' ``line`` sensors seeing the zones they wander over), and every snapshot
    column is the plain path's."""
    spec = _robots(3, kind=kind, engine=engine,  # kilobot: no sonar, its own driver
                   params=NOISY if kind == "swarmbot" else NOISY[1:],
                   driver="wander" if kind == "swarmbot" else "kilobot_swarm")
    if kind == "swarmbot":
        spec = replace(spec, zones=ZONES)
    fast, took, path = _run(spec, 150, True, monkeypatch)
    assert path == f"{labels} + stages ({stages})", path
    assert took == 150
    plain, none, _ = _run(spec, 150, False, monkeypatch)
    assert none == 0
    _same(fast, plain)
    if kind == "kilobot":  # its driver lit the LEDs
        assert np.frombuffer(fast[-1]["reading leds"]).any()
    else:  # the sensors saw zones of each kind (left, right, kind: three per robot)
        seen = np.concatenate([np.frombuffer(cols["reading line"]) for cols in fast])
        assert set(seen[2::3]) == {0.0, 1.0, 2.0, 3.0}


@pytest.mark.parametrize("engine, wheeled", [("kinematic", False), ("pymunk", False),
                                             ("kinematic", True)])
def test_a_velocity_drive_is_composed_and_gives_the_plain_paths_bits(monkeypatch, engine,
                                                                     wheeled):
    """holonomic robots (``velocity`` acting by its kernel, handing the engine's
    ``set_velocity``; on the kinematic engine inside the acting call, with its step): two
    commanded into the wall and the arena's edge, one tracking a figure-eight (its position
    loop); ``wheeled``: a wandering ``single`` robot (``motors``, the engine's ``drive``) among
    them, both drives inside the one call. Every snapshot column is the plain path's."""
    spec = _robots(3, engine=engine, kind="holonomic", params=NOISY[1:])
    eight = DriverSetting("tracking", (("shape", "eight"), ("size", "1"), ("period", "4")))
    spec = replace(spec, robots=(replace(spec.robots[0], drivers=()),
                                 replace(spec.robots[1], drivers=()),
                                 replace(spec.robots[2], drivers=(eight,))))
    if wheeled:
        spec = replace(spec, robots=(*spec.robots, replace(_robots(1).robots[0], name="w",
                                                           position=(0.5, 1.0, 0.0))))

    def run(fuse: bool) -> tuple[list, int, str]:
        monkeypatch.setattr(fused, "ENABLED", fuse)
        load_pending()
        sim = Simulation(spec)
        stepper, out, took = Stepper(sim, mode="lockstep"), [], 0
        assert not fuse or sim.plan().fused.in_call == (engine == "kinematic")
        stepper.slots.put("r0", "velocity", (0.8, 0.2, 0.5, 0, 0, 0), attach=False)
        stepper.slots.put("r1", "velocity", (-0.6, 0.9, -1.0, 0, 0, 0), attach=False)
        for _ in range(200):
            snap = stepper.tick()
            took += sim._fusing
            out.append(_columns(snap))
        return out, took, sim.step_path

    fast, took, path = run(True)
    labels = "motors, velocity, bumper, compass, gps, odometry, sonar, target" if wheeled \
        else "velocity, bumper, compass, gps, sonar"
    assert path == f"composed ({labels})", path
    assert took == 200
    plain, none, _ = run(False)
    assert none == 0
    _same(fast, plain)
    driven = [np.frombuffer(s["reading velocity"]).reshape(-1, 6)[:3] for s in fast]
    assert all((np.abs(d[:, :3]).max(axis=1) > 0.05).all() for d in driven[10:])
    assert any(np.frombuffer(s["reading bumper"]).any() for s in fast)
    if wheeled:  # its wheels driven too
        assert np.abs(np.frombuffer(fast[-1]["reading motors"]).reshape(-1, 4)[3]).max() > 0.05


@pytest.mark.parametrize("params", [
    (("target", "noise", 0.1),), (("odometry", "slip", 5.0),), (("sonar", "lost", 5.0),)])
def test_noise_slip_and_lost_readings_are_drawn_inside_the_calls(monkeypatch, params):
    spec = _robots(2, params=NOISY + params)
    fast, took, path = _run(spec, 100, True, monkeypatch)
    assert path == LABELS and took == 100
    plain, _, _ = _run(spec, 100, False, monkeypatch)
    _same(fast, plain)
    quiet, _, _ = _run(_robots(2), 100, True, monkeypatch)
    label = params[0][0]
    assert [s[f"reading {label}"] for s in quiet] != [s[f"reading {label}"] for s in fast]


def test_kinds_at_a_rate_stay_composed_with_the_plain_paths_bits(monkeypatch):
    """Sonar (the call's own fan when every robot is due, the caster's for the few due) and
    gps at rates, with noise and lost data: the robots due each step and their draws are
    the plain path's."""
    timed = NOISY + (("gps", "rate", 5.0), ("sonar", "rate", 12.5), ("sonar", "lost", 10.0),
                     ("odometry", "slip", 5.0))
    fast, took, path = _run(_robots(3, params=timed), 120, True, monkeypatch)
    assert path == LABELS and took == 120
    plain, _, _ = _run(_robots(3, params=timed), 120, False, monkeypatch)
    _same(fast, plain)
    gps = [s["reading gps"] for s in fast]
    assert sum(a == b for a, b in zip(gps[1:], gps[:-1])) > 20  # a step in 4 none is due


def test_a_parameter_set_mid_run_at_a_rate_gives_the_plain_paths_bits(monkeypatch):
    """Parameters set between steps of kinds at rates (r1's sonar reach, r2's gps noise and
    rate): the steps after read the new values as the plain path's do (the composed pass
    keeps what its call takes per pattern of robots due; a parameter set plans anew)."""
    timed = NOISY + (("gps", "rate", 5.0), ("sonar", "rate", 12.5))
    runs = {}
    for fuse in (True, False):
        monkeypatch.setattr(fused, "ENABLED", fuse)
        load_pending()
        sim = Simulation(_robots(3, params=timed))
        stepper, out = Stepper(sim, mode="lockstep"), []
        for k in range(120):
            if k == 60:
                sim.set_param("r1", "sonar", "max_range", 0.3)
                sim.set_param("r2", "gps", "noise", 0.5)
            elif k == 90:
                sim.set_param("r2", "gps", "rate", 10.0)
            out.append(_columns(stepper.tick()))
        runs[fuse] = (out, sim.step_path)
    assert runs[True][1] == LABELS
    _same(runs[True][0], runs[False][0])
    near = [np.frombuffer(s["reading sonar"]).reshape(3, -1)[1].max() for s in runs[True][0]]
    assert max(near[:60]) > 0.3 >= max(near[70:])  # the new reach, read from its next scan


def _changing(spec: ScenarioSpec, fuse: bool, monkeypatch) -> list:
    """Every snapshot's columns over 120 ticks of ``spec`` while its layout changes between
    steps: a robot added at step 30, odometry reset at 50, a robot and a target removed at 80
    (the calls are planned anew each time, the readings carried over by name)."""
    monkeypatch.setattr(fused, "ENABLED", fuse)
    load_pending()
    sim = Simulation(spec)
    stepper, out, took = Stepper(sim, mode="lockstep"), [], 0
    for k in range(120):
        if k == 30:
            sim.world.add_robot(RobotSpec("single", "late", (1.5, -1.5, 0.0), params=tuple(
                ParamSetting(*p) for p in NOISY)))
            sim.relayout()
        elif k == 50:
            sim.zero_reading("r1", "odometry")
        elif k == 80:
            sim.world.remove_robot("r0")
            sim.world.remove_target(0)
            sim.relayout()
        out.append(_columns(stepper.tick()))
        took += sim._fusing
    assert took == (120 if fuse else 0)
    return out


def test_a_changing_layout_gives_the_plain_paths_bits(monkeypatch):
    spec = _robots(3)
    _same(_changing(spec, True, monkeypatch), _changing(spec, False, monkeypatch))



@pytest.mark.parametrize("engine", ["kinematic", "pymunk"])
@pytest.mark.parametrize("where", ["in the call", "on the grid"])
def test_the_fan_gives_the_plain_paths_bits_among_moving_objects(monkeypatch, engine, where):
    """The sonar's fans are cast inside the composed sensing call while the caster tests every
    pair (its own kernel, the bits of its own call; on the kinematic engine the motors, the
    engine's drive and step in the acting call), or by the caster on its grid before the call
    when the pairs are many (jitcast._ALL_PAIRS); each gives the plain path's bits, with
    movable objects among the shapes (a pushed box and ball on pymunk: new moving shapes
    every step)."""
    from dataclasses import replace

    from coopsim.raycast import jitcast

    spec = _robots(4, engine=engine)
    movable = (ObjectSpec("crate", "box", (0.3, 0.3, 0.3), (0.0, -0.2, 0.15), mass=1.0),
               ObjectSpec("ball", "cylinder", (0.3, 0.3, 0.3), (-0.5, 0.3, 0.15), mass=0.5))
    spec = replace(spec, world=replace(spec.world, objects=spec.world.objects + movable))
    plain, _, _ = _run(spec, 150, False, monkeypatch)

    def started():  # the first readings (the simulation's start) are the plain path's
        if where == "on the grid":
            monkeypatch.setattr(jitcast, "_ALL_PAIRS", 0)  # every cast walks the grid
            return
        from coopsim.sim.sensing import Sensors  # every step's cast and readings in the call

        monkeypatch.setattr(Sensors, "geometry", _refused)
        if engine == "kinematic":  # and the motors, the drive and the step in one call
            from coopsim.physics.kinematic.engine import KinematicEngine

            for name in ("drive", "step"):
                monkeypatch.setattr(KinematicEngine, name, _refused)

    fast, took, _ = _run(spec, 150, True, monkeypatch, started)
    assert took == 150
    _same(fast, plain)


def _refused(*args):
    raise AssertionError("not this path")


def test_a_robot_beyond_the_bounds_is_caught_by_the_acting_calls_check(monkeypatch, caplog):
    """On the kinematic engine the composed acting call (motors, drive, step) checks the state
    it leaves (health.healthy_rows) and the sensing phase then checks nothing more: a robot
    thrown past the floor's edge is still caught at that step, put back where the last
    snapshot had it and marked, the other robot left alone."""
    from coopsim.physics.kinematic.engine import KinematicEngine

    monkeypatch.setattr(fused, "ENABLED", True)
    sim = Simulation(_robots(2))
    stepper = Stepper(sim, mode="lockstep")
    for _ in range(4):
        stepper.tick()
    for name in ("drive", "step"):  # the motors, the drive and the step in the acting call
        monkeypatch.setattr(KinematicEngine, name, _refused)
    last = sim.snapshot.poses[0].copy()
    other = sim.snapshot.poses[1].copy()
    shot = sim.world.engine.robot_state()[0].copy()
    shot[0] = 20_000.0  # m: far past the 4 m floor and the bounds' 10 km beyond it
    sim.world.engine.reset_rows(np.array([0]), shot[None])
    stepper.tick()
    assert sim._fusing and not sim.health.vouched  # the composed step, its check said no
    mark = sim.snapshot.extra["diverged"]["r0"]
    assert "beyond" in mark.why and mark.step == sim.step
    assert sim.snapshot.poses[0].tolist() == last.tolist()
    assert "r1" not in sim.snapshot.extra["diverged"]
    assert sim.snapshot.poses[1].tolist() != other.tolist()  # it drove on
    stepper.tick()  # and the run goes on composed, every robot within the bounds again
    assert sim._fusing and sim.snapshot.extra["diverged"]["r0"].count == 1
