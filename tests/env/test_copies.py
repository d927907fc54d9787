"""The copies backend of batched worlds (coopsim.env.copies): one template tiled, the kinds' own
kernels over the copies' rows around one compiled step parallel over the copies; the same model
as the world backend, the same bits for any thread count, and the world backend serving
(saying why) what it does not run."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("numba")

import coopsim.env  # noqa: E402,F401 -- registers coopsim/Scenario-v0
from coopsim.env.batch import BatchWorld  # noqa: E402
from coopsim.env.copies import CopyBatch, batch_world  # noqa: E402
from coopsim.env.mapping import ActionError, LearningError  # noqa: E402
from coopsim.model.commands import Command  # noqa: E402
from coopsim.model.kernel import StateField  # noqa: E402
from coopsim.model.params import ParamSpec  # noqa: E402
from coopsim.model.driver import Driver  # noqa: E402
from coopsim.model.plugins import DRIVERS, MODULES, ROBOT_TYPES  # noqa: E402
from coopsim.model.robot_type import Assembly  # noqa: E402
from coopsim.model.specs import (FloorSpec, ObjectSpec, ParamSetting, RobotSpec,  # noqa: E402
                                 ScenarioSpec, Settings, WorldSpec)
from coopsim.plugins.robots.single import Single, chassis  # noqa: E402
from coopsim.sim.drivers import DriverError  # noqa: E402
from learnhelpers import ROOT  # noqa: E402
from kernelkinds import Ping  # noqa: E402 -- the composed step tests' kind, on another view

AVOID = str(ROOT / "scenarios" / "learn_avoid.scenario")
ID = "coopsim/Scenario-v0"
AGENTS = ["r1", "r2", "r3", "r4"]
# Observations and rewards of the two backends agree to this, m and m/s. Why not exactly:
# the world backend holds copy k at an offset of up to tens of metres, so every position
# rounds to a coarser grid there (~1e-14 m), and a copy's edges are boxes there, the floor's
# clamp here; over hundreds of steps the difference stays below 1e-12 (seen: 8e-13).
TOL = 1e-9


def _vec(k, backend, **kw):
    kw.setdefault("observe", ["sonar"])
    kw.setdefault("lean", True)
    return gymnasium.make_vec(ID, num_envs=k, scenario=kw.pop("scenario", AVOID),
                              robot=kw.pop("robot", AGENTS), backend=backend, **kw)


def _actions(rng, k):
    """Mostly full speed ahead (walls are met), sometimes random turns."""
    act = rng.uniform(-0.6, 0.6, (k, 4, 2))
    return np.where(rng.random((k, 4, 1)) < 0.7, 0.6, act)


def test_copies_run_the_world_backends_model_through_contacts_and_autoresets():
    """learn_avoid, lean, sonar: 410 steps (its episodes truncate at 20 s = 400 steps, then
    every copy starts over) of the same actions through both backends."""
    k = 6
    copies, world = _vec(k, "copies"), _vec(k, "world")
    assert copies.batch.backend == "copies" and world.batch.backend == "world"
    oc, _ = copies.reset(seed=0)
    ow, _ = world.reset(seed=0)
    assert np.allclose(oc["sonar"], ow["sonar"], rtol=0, atol=TOL)
    rng = np.random.default_rng(0)
    touched = ended = 0
    for _ in range(410):
        act = _actions(rng, k)
        oc, rc, tc, uc, ic = copies.step(act)
        ow, rw, tw, uw, iw = world.step(act)
        assert np.allclose(oc["sonar"], ow["sonar"], rtol=0, atol=TOL)
        assert np.allclose(rc, rw, rtol=0, atol=TOL)
        assert (tc == tw).all() and (uc == uw).all()
        assert np.allclose(ic["episode_time"], iw["episode_time"])
        touched += int((copies.batch.contact > 0).any())
        ended += int(uc.sum())
    assert touched > 10 and ended == k  # walls were met; every copy was truncated once
    assert (oc["sonar"] < 2.0).mean() > 0.3


def test_the_bumper_and_the_collisions_term_where_robots_carry_it():
    """Lean robots observing the bumper carry one, so learn_avoid's collisions term counts."""
    copies = _vec(3, "copies", observe=["sonar", "bumper"], lean=True)
    world = _vec(3, "world", observe=["sonar", "bumper"], lean=True)
    copies.reset(seed=0)
    world.reset(seed=0)
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(120):
        act = _actions(rng, 3)
        oc, rc, *_ = copies.step(act)
        ow, rw, *_ = world.step(act)
        assert np.array_equal(oc["bumper"], ow["bumper"])
        assert np.allclose(rc, rw, rtol=0, atol=TOL)
        hits += int(oc["bumper"][:, 0].any())
    assert hits > 0


def _digest(threads: int, k: int = 96, steps: int = 60) -> str:
    code = (
        "import hashlib, numpy as np, gymnasium, coopsim.env\n"
        f"env = gymnasium.make_vec('coopsim/Scenario-v0', num_envs={k}, scenario={AVOID!r}, "
        f"robot={AGENTS!r}, observe=['sonar'], lean=True, backend='copies', threads={threads})\n"
        "h = hashlib.sha256(); env.reset(seed=0); rng = np.random.default_rng(5)\n"
        f"for s in range({steps}):\n"
        f"    act = np.where(rng.random(({k}, 4, 1)) < 0.7, 0.6,\n"
        f"                   rng.uniform(-0.6, 0.6, ({k}, 4, 2)))\n"
        f"    if s == {steps // 2}: env.batch.reset_copies(np.arange({k}) % 3 == 0)\n"
        "    obs, rew, term, trunc, _ = env.step(act)\n"
        "    for a in (obs['sonar'], rew, env.batch.state, env.batch.contact):\n"
        "        h.update(np.ascontiguousarray(a).tobytes())\n"
        "print(h.hexdigest())\n")
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True)
    return out.stdout.split()[-1]


@pytest.mark.slow
def test_the_same_bits_on_one_two_and_four_threads():
    """96 copies x 4 robots in blocks of 16 copies: 2 and 4 threads split them; each copy
    writes only its own rows, so any cross-copy float reduction would show here."""
    one, two, four = (_digest(t) for t in (1, 2, 4))
    assert len(one) == 64 and one == two == four
    # 2,048 copies x 4 robots: 8,192 rows, from which the kinds' kernels run in chunks of
    # rows on the threads (the composed calls' parallel versions)
    assert _digest(1, 2048, 12) == _digest(2, 2048, 12)


def test_a_callable_task_reads_the_same_snapshot_on_both_backends():
    offsets = {}

    def task(snap, rows):  # each copy's own frame: the world backend's offsets taken off
        xy = snap.poses[rows][..., :2] - offsets["now"][:, None]
        speed = np.hypot(snap.velocities[rows][..., 0], snap.velocities[rows][..., 1])
        seen = snap.readings["sonar"][rows].min(axis=(1, 2))
        assert snap.robots[rows[1, 2]] == "c1_r3" and snap.index["c1_r3"] == rows[1, 2]
        assert snap.commands["motors"][rows].shape == (3, 4, 2)
        return -np.hypot(xy[..., 0], xy[..., 1]) + speed, seen < 0.25

    got = {}
    for backend in ("copies", "world"):
        env = _vec(3, backend, lean=False, task=task)
        assert env.batch.backend == backend
        offsets["now"] = env.batch.offsets
        env.reset(seed=1)
        rng, steps = np.random.default_rng(0), []
        for _ in range(300):
            _, reward, terminated, truncated, info = env.step(rng.uniform(-0.3, 0.5, (3, 4, 2)))
            steps.append((reward, terminated, truncated, info["time"][0]))
        got[backend] = steps
    ends = sum(int(t.sum()) for _, t, _, _ in got["copies"])
    assert ends >= 3  # copies met a wall and started over (autoreset) while others went on
    for (r1, t1, u1, s1), (r2, t2, u2, s2) in zip(got["copies"], got["world"]):
        assert np.allclose(r1, r2, rtol=0, atol=1e-9)
        assert t1.tolist() == t2.tolist() and u1.tolist() == u2.tolist() and s1 == s2


def test_a_scenario_with_squads_gets_the_copies_backend(tmp_path):
    scenario = tmp_path / "squads.scenario"  # only network clients order squads
    scenario.write_text(open(AVOID).read().replace("../worlds/", f"{ROOT}/worlds/")
                        + "\n[SQUAD_1]\nname A\nteam A\nrobots r1 r2\nformation line\n")
    assert _vec(2, None, scenario=str(scenario)).batch.backend == "copies"


def test_a_task_on_any_metric_kind_gives_the_world_backends_rewards(tmp_path):
    # distance, speed and min_sonar have no vectorised term: each copy's own function of the
    # batch's snapshot, as the world backend's monitors compute them
    text = open(AVOID).read().replace("../worlds/", f"{ROOT}/worlds/").split("[MONITORS]")[0]
    scenario = tmp_path / "metrics.scenario"
    scenario.write_text(text + "[MONITORS]\nmetric d12 distance r1 r2\nmetric v1 speed r1\n"
                        "metric wall distance r3 WALL_2\n"
                        "metric near2 min_sonar r2\nmetric fwd1 python "
                        "coopsim.env.metrics:forward_speed r1\n\n[TASK]\nreward 1 v1 r1\n"
                        "reward -0.1 d12\nreward 0.5 near2 r2\nreward 2 fwd1 r1\nreward 1 wall r3\n"
                        "terminate near2 < 0.6\ntruncate 20\n\n[SETTINGS]\ndt 0.05\n"
                        "engine kinematic\nseed 1\n")
    got = {}
    for backend in ("copies", "world"):
        env = _vec(3, backend, scenario=str(scenario))
        assert env.batch.backend == backend
        env.reset(seed=1)
        rng = np.random.default_rng(0)
        got[backend] = [env.step(rng.uniform(-0.3, 0.5, (3, 4, 2)))[1:3] for _ in range(300)]
    assert sum(int(t.sum()) for _, t in got["copies"]) >= 3  # near2 ended some episodes
    for (r1, t1), (r2, t2) in zip(got["copies"], got["world"]):
        assert np.allclose(r1, r2, rtol=0, atol=TOL) and t1.tolist() == t2.tolist()
    assert all(r[:, 2:].any() for r, _ in got["copies"])  # d12 pays every agent, not only r1
    for r, _ in got["world"]:  # WALL_2 found in each copy: r3's wall term, m, beside r4's
        assert ((r[:, 2] > r[:, 3]) | (r == 0).all(axis=1)).all()  # (all 0: a copy restarting)


@pytest.mark.parametrize("backend", ["world", "copies"])
def test_bad_actions_raise_alike_on_both_backends(backend):
    env = _vec(2, backend)
    env.reset(seed=0)
    act = np.zeros((2, 4, 2))
    act[1, 2, 0] = 0.7
    with pytest.raises(ActionError, match=r"copy 1 r3: action left m/s = 0\.7 is outside the "
                                          r"motors bound \[-0\.6, 0\.6\]"):
        env.step(act)
    with pytest.raises(ActionError, match=r"shape \(2, 2\), the space has shape \(2, 4, 2\)"):
        env.step(np.zeros((2, 2)))
    with pytest.raises(LearningError, match="has rules"):
        _vec(2, "copies", robot=None, scenario=str(ROOT / "scenarios" / "formation.scenario"))


def test_spaces_and_observations_agree():
    env = _vec(3, "copies", robot="r1", flat=True)
    obs, info = env.reset(seed=0)
    assert obs.shape == (3, 11) and env.observation_space.contains(obs)
    obs, rew, term, trunc, info = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs) and rew.shape == (3,)
    assert info["episode_time"].tolist() == pytest.approx([0.05] * 3)


def test_a_drives_own_reading_agrees_on_both_backends():
    """The motors' reading (the wheels driven, kept in its state, and the actual ones) and the
    odometry integrating the actual ones: the copies backend's as the world backend's."""
    obs = {"observe": ["motors", "odometry"]}
    copies, world = _vec(2, "copies", **obs), _vec(2, "world", **obs)
    assert copies.batch.backend == "copies"
    copies.reset(seed=0)
    world.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(30):
        act = rng.uniform(-0.6, 0.6, (2, 4, 2))
        oc, *_ = copies.step(act)
        ow, *_ = world.step(act)
        for label in ("motors", "odometry"):
            assert np.allclose(oc[label], ow[label], rtol=0, atol=TOL)
    assert np.abs(oc["motors"][..., :2]).min() > 0  # the wheels driven are read


class Echo(Ping):
    """A plugin's kind computed by a kernel and nothing else the copies backend knows of: the
    composer test's ``ping`` kernel on the velocity (speed, m/s, and the fastest so far)."""

    label = "echo"
    description = "speed, m/s; fastest so far, m/s"
    params = (ParamSpec("noise", "float", "noise, m/s", 0.0, 0.0, 1.0, "m/s"),
              ParamSpec("lost", "float", "lost readings, %", 0.0, 0.0, 100.0, "%"))
    commands = (Command(9310, "read", "echo", kind="read", doc="speed, fastest"),)
    fields = ("speed", "fastest")
    state_fields = (StateField("fastest"),)
    kernel_views = ("velocity",)


class EchoBot(Single):
    """``single``'s chassis carrying motors, gps and echo."""

    label = "echobot"
    description = "a test robot"
    modules = ("motors", "gps", "echo")

    @classmethod
    def build(cls, spec):
        body, member = chassis(spec.name, "chassis", spec.position[0], spec.position[1],
                               spec.yaw, cls.modules)
        return Assembly((member,), (body,))


@pytest.fixture
def echo_kind():
    """The plugin kind and its robot type, registered for one test."""
    added = [(MODULES, Echo), (ROBOT_TYPES, EchoBot)]
    for registry, item in added:
        registry.register(item.label)(item)
    yield
    for registry, item in added:
        with registry._lock:
            del registry._items[item.label], registry._origins[item.label]


def test_a_plugin_kind_with_a_kernel_runs_on_the_copies_backend_as_in_a_world(echo_kind):
    """Nothing but its ModuleKernel: the copies backend runs a plugin's kind by its own
    kernel (its state table, noise and lost data drawn as a world draws them), reading
    what the world backend reads."""
    noisy = (("gps", "noise", 0.02), ("echo", "noise", 0.01), ("echo", "lost", 30.0))
    robots = tuple(RobotSpec("echobot", f"r{k}", (0.35 * k - 0.6, 0.1 * k - 0.5, 0.4 * k),
                             params=tuple(ParamSetting(*p) for p in noisy)) for k in range(3))
    wall = (ObjectSpec("wall", "box", (0.3, 2.0, 0.5), (1.2, 0.0, 0.25)),)
    spec = ScenarioSpec(WorldSpec(FloorSpec(4.0, 4.0), objects=wall), robots=robots,
                        settings=Settings(dt=0.05, seed=3, engine="kinematic"))
    observe = ["echo", "motors", "gps"]
    copies = batch_world(spec, 4, observe=observe, backend="copies")
    world = batch_world(spec, 4, observe=observe, backend="world")
    assert isinstance(copies, CopyBatch)
    rng = np.random.default_rng(2)
    held, last = 0, None
    for step in range(60):
        act = rng.uniform(-0.6, 0.6, (4, 3, 2))
        for batch in (copies, world):
            batch.act(act)
        oc, ow = (batch.observation(batch.tick()) for batch in (copies, world))
        ow["gps"] = ow["gps"] - world.offsets[:, None, :]  # the big floor's frame
        for label in observe:
            assert np.allclose(oc[label], ow[label], rtol=0, atol=TOL), (step, label)
        if last is not None:
            held += int((oc["echo"][..., 0] == last[..., 0]).sum())
        last = oc["echo"]
    assert held > 0  # lost data kept the last speed
    assert (oc["echo"][..., 1] >= oc["echo"][..., 0] - 0.1).all()  # its state: the fastest


@pytest.mark.parametrize("backend", ["copies", "world"])
def test_a_copy_reset_starts_its_kinds_state_over(echo_kind, backend):
    """Copy 0 driven fast, then reset alone and driven slowly: its ``echo`` state (the
    fastest so far) starts over, as a fresh batch's does, while copy 1 keeps its own."""
    robots = (RobotSpec("echobot", "r0", (0.0, 0.0, 0.0)),)
    spec = ScenarioSpec(WorldSpec(FloorSpec(8.0, 8.0)), robots=robots,
                        settings=Settings(dt=0.05, seed=3, engine="kinematic"))
    fast, slow = np.full((2, 1, 2), 0.5), np.full((2, 1, 2), 0.1)
    batch = batch_world(spec, 2, observe=["echo"], backend=backend)
    fresh = batch_world(spec, 2, observe=["echo"], backend=backend)
    for _ in range(20):
        batch.act(fast)
        batch.tick()
    batch.reset_copies(np.array([True, False]))
    for _ in range(10):
        for b in (batch, fresh):
            b.act(slow)
        got, want = (b.observation(b.tick())["echo"][:, 0, 1] for b in (batch, fresh))
    assert got[0] == want[0] < 0.2  # copy 0: the slow run's fastest alone
    assert got[1] > 0.4  # copy 1 was never reset: its fast steps stay the fastest


def _walkers(tmp_path, extra: str = "") -> str:
    """An agent r1 among two robots driven by ``wander`` that back off on a coin toss of
    their own generator after 5 blocked steps, in a 3 m square."""
    (tmp_path / "small.world").write_text("[FLOOR]\nsize 3 3 0.1\n")
    scenario = tmp_path / "walkers.scenario"
    robot = "[ROBOT_{}]\ntype single\nname {}\nposition {} {} {}\n{}\n"
    scenario.write_text(
        "[WORLD]\nfile small.world\n\n"
        + robot.format(1, "r1", 0, 0, 0, extra)
        + robot.format(2, "w1", -0.8, 0.6, 90, "driver wander cruise 0.5 unstick 5")
        + robot.format(3, "w2", 0.9, -0.5, 200, "driver wander cruise 0.5 unstick 5")
        + "\n[SETTINGS]\nengine kinematic\ndt 0.05\nseed 4\n")
    return str(scenario)


def test_drivers_on_other_robots_run_on_the_copies_backend_as_in_a_world(tmp_path):
    """The drivers' robots move as the world backend moves them, copy by copy, through one
    copy's reset and a whole batch's; their generators are seeded by each copy's robot name
    (the copies, given the same actions, part ways)."""
    scenario = _walkers(tmp_path)
    batches = {b: batch_world(scenario, 3, robots="r1", observe=["sonar", "gps"], backend=b)
               for b in ("copies", "world")}
    assert batches["copies"].backend == "copies"
    walkers = [f"c{k}_w{w}" for k in range(3) for w in (1, 2)]
    paths, clocks = {}, {}
    for backend, batch in batches.items():
        path, clocks[backend] = [], []
        for run in range(2):
            batch.reset(seed=9)
            rng = np.random.default_rng(3)
            for step in range(160):
                batch.act(np.broadcast_to(rng.uniform(-0.3, 0.3, 2), (3, 2)))
                if step == 90:
                    batch.reset_copies(np.array([False, True, False]))
                snap = batch.tick()
                snap = snap if backend == "world" else batch.snapshot()
                clocks[backend].append((snap.step, snap.time))
                xy = snap.poses[[snap.index[n] for n in walkers], :2]
                path.append(xy - np.repeat(batch.offsets, 2, axis=0))
        paths[backend] = np.array(path)
    assert np.allclose(paths["copies"], paths["world"], rtol=0, atol=TOL)
    assert clocks["copies"] == clocks["world"]  # the snapshot of the step just taken
    last = paths["copies"][159].reshape(3, 2, 2)
    assert not np.allclose(last[0], last[2], atol=1e-3)  # each copy's own coin tosses
    assert np.array_equal(paths["copies"][:160], paths["copies"][160:])  # reset: all again
    lean = batch_world(scenario, 3, robots="r1", observe=["gps"], lean=True, backend="copies")
    lean.reset(seed=9)  # the walkers keep the sonar their driver reads: the same walk
    rng = np.random.default_rng(3)
    for step in range(90):
        lean.act(np.broadcast_to(rng.uniform(-0.3, 0.3, 2), (3, 2)))
        snap = lean.tick().snapshot()
    assert np.array_equal(snap.poses[[snap.index[n] for n in walkers], :2], paths["copies"][89])


def test_a_driver_naming_a_robot_follows_its_own_copys(tmp_path):
    """``follow_leader leader w1`` on w2: in copy k it follows copy k's w1 (``c{k}_w1``) on
    both backends, the copies' walks apart (it failed with ``no robot named 'w1'``)."""
    scenario = _walkers(tmp_path)
    text = open(scenario).read()
    follow = text.replace("w2\nposition 0.9 -0.5 200\ndriver wander cruise 0.5 unstick 5",
                          "w2\nposition 0.9 -0.5 200\ndriver follow_leader leader w1 gap 0.4")
    assert follow != text
    open(scenario, "w").write(follow)
    gaps = {}
    for backend in ("copies", "world"):
        batch = batch_world(scenario, 3, robots="r1", observe=["gps"], backend=backend)
        assert batch.backend == backend
        batch.reset(seed=9)
        for _ in range(300):
            batch.act(np.zeros((3, 2)))
            snap = batch.tick()
        snap = snap if backend == "world" else batch.snapshot()
        xy = snap.poses[[snap.index[f"c{k}_w{w}"] for k in range(3) for w in (1, 2)], :2]
        gaps[backend] = (xy - np.repeat(batch.offsets, 2, axis=0)).reshape(3, 2, 2)
    assert np.allclose(gaps["copies"], gaps["world"], rtol=0, atol=TOL)
    leaders, followers = gaps["copies"][:, 0], gaps["copies"][:, 1]
    assert not np.allclose(leaders[0], leaders[2], atol=1e-2)  # the copies walked apart
    near = np.linalg.norm(followers[:, None] - leaders[None], axis=2)  # follower k, leader j
    assert (near.argmin(axis=1) == np.arange(3)).all(), near  # each behind its own leader
    assert (np.diag(near) < 0.8).all(), near


def test_what_a_batch_cannot_drive_is_refused_saying_what(tmp_path):
    with pytest.raises(LearningError, match="robot w1 has a driver.*an agent is driven by"):
        batch_world(_walkers(tmp_path), 2, robots=["r1", "w1"], backend="copies")
    # every robot driven: the first is taken, and refused as one environment refuses it
    with pytest.raises(LearningError, match="robot epuck1 has a driver"):
        batch_world(str(ROOT / "scenarios" / "epuck_braitenberg.scenario"), 2)
    with pytest.raises(LearningError, match="at least one agent"):
        batch_world(_walkers(tmp_path), 2, robots=())


@pytest.mark.parametrize("gap", [-1.0, 0.1, float("nan"), float("inf"), "far", True])
@pytest.mark.parametrize("backend", ["copies", "world", None])
def test_a_gap_that_is_no_distance_is_refused_on_either_backend(backend, gap):
    """Not a distance, or too small for the walls around two floors: refused alike whichever
    backend serves; the least gap runs."""
    with pytest.raises(LearningError, match=f"gap must be .* 0.2 m or more.*got {gap!r}"):
        batch_world(AVOID, 2, gap=gap, backend=backend)
    assert batch_world(AVOID, 2, gap=0.2, backend=backend).tick() is not None


class Swerve(Driver):
    """A batch driver (arrays of every robot hosting it): turn from the nearer side's sonar,
    a coin toss of its generator deciding the cruise; odometry reset asked of one robot."""

    label, batch = "swerve_test", True
    params = (ParamSpec("reset", "int", "reset r's odometry (1) or not", 0, 0, 1),)

    def step_batch(self, bots) -> None:
        d = bots.read("sonar")
        turn = np.clip(d[:, :5].min(axis=1) - d[:, 6:].min(axis=1), -0.3, 0.3)
        cruise = 0.2 + 0.2 * self.rng.random(len(bots.names))
        bots.set("motors", np.column_stack((cruise - turn, cruise + turn)))
        bots.post("swerve_cruise", float(cruise.mean()))  # on the snapshot's board
        if self.p["reset"]:
            bots.robot(bots.names[0]).odometry.reset()


@pytest.fixture
def swerve():
    DRIVERS.register(Swerve.label)(Swerve)
    yield
    with DRIVERS._lock:
        del DRIVERS._items[Swerve.label], DRIVERS._origins[Swerve.label]


def test_a_batch_driver_runs_on_the_copies_backend_as_in_a_world(tmp_path, swerve):
    """One call for every copy's robots hosting it (Batch over the batch's rows), the same
    generator as the world backend's; what a batch cannot do is the driver's error."""
    text = open(_walkers(tmp_path)).read().replace("driver wander cruise 0.5 unstick 5",
                                                   "driver swerve_test")
    scenario = tmp_path / "swerve.scenario"
    scenario.write_text(text)
    got = {}
    for backend in ("copies", "world"):
        batch = batch_world(str(scenario), 4, robots="r1", observe=["gps"], backend=backend)
        assert batch.backend == backend
        batch.reset(seed=2)
        path, board = [], []
        for _ in range(120):
            batch.act(np.full((4, 2), 0.1))
            snap = batch.tick()
            snap = snap if backend == "world" else batch.snapshot()
            rows = [snap.index[f"c{k}_w{w}"] for k in range(4) for w in (1, 2)]
            path.append(snap.poses[rows, :2] - np.repeat(batch.offsets, 2, axis=0))
            board.append(snap.extra["swerve_cruise"])
        got[backend], got[backend, "board"] = np.array(path), board
    assert np.allclose(got["copies"], got["world"], rtol=0, atol=TOL)
    assert got["copies", "board"] == got["world", "board"]  # the board it posts to
    assert len(set(got["copies", "board"])) > 100
    assert np.ptp(got["copies"][-1], axis=0).min() > 0.01  # the walkers went their own ways
    scenario.write_text(text.replace("driver swerve_test", "driver swerve_test reset 1"))
    batch = batch_world(str(scenario), 2, robots="r1", observe=["gps"], backend="copies")
    with pytest.raises(DriverError, match="swerve_test on c0_w1,.*acts on the simulation"):
        batch.tick()


def test_readings_at_a_rate_are_held_as_the_world_backend_holds_them(tmp_path):
    """Sonar at 5 Hz with noise and lost data, compass at 7 Hz, gps (not observed) at 4 Hz
    with noise, odometry slipping every step, a driven robot measuring every step: the robots
    due each step and every kind's noise are the world backend's, through a copy's reset."""
    timed = ("param sonar.rate 5\nparam sonar.noise 0.01\nparam sonar.lost 10\n"
             "param compass.rate 7\nparam compass.noise 0.05\nparam gps.rate 4\n"
             "param gps.noise 0.02\nparam odometry.slip 1\n")
    text = open(_walkers(tmp_path)).read()
    text = text.replace("position 0 0 0\n", "position 0 0 0\n" + timed)
    text = text.replace("driver wander cruise 0.5 unstick 5\n", timed, 1)  # w1: an agent
    scenario = tmp_path / "rates.scenario"
    scenario.write_text(text)
    observe = ["sonar", "compass", "odometry"]
    got = {}
    for backend in ("copies", "world"):
        batch = batch_world(str(scenario), 3, robots=["r1", "w1"], observe=observe,
                            backend=backend)
        assert batch.backend == backend
        batch.reset(seed=3)
        rng, got[backend] = np.random.default_rng(0), []
        for step in range(100):
            batch.act(rng.uniform(-0.3, 0.3, (3, 2, 2)))
            if step == 40:
                batch.reset_copies(np.array([False, True, False]))
            got[backend].append(batch.observation(batch.tick()))
    for label in observe:
        for step, (mine, theirs) in enumerate(zip(got["copies"], got["world"])):
            assert np.allclose(mine[label], theirs[label], rtol=0, atol=TOL), (label, step)
    held = sum(int((a["sonar"] == b["sonar"]).all(axis=-1).sum())
               for a, b in zip(got["copies"][1:], got["copies"][:-1]))
    assert held > 300  # 3 steps in 4 held (dt 0.05 s at 5 Hz), the others' readings not
