"""The ``mujoco`` engine on real MuJoCo models: free bodies under gravity and body-frame
wrenches, ground robots driven like pymunk's, contacts, layout changes, divergence, whole
simulations, bit-for-bit runs, and the command line's refusals (2D engines and a floating
object; the engine without MuJoCo installed)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.formats.files import load  # noqa: E402
from coopsim.model.errors import SimulationError  # noqa: E402
from coopsim.model.robot_type import Assembly, BodySpec, MemberSpec, ShapeSpec  # noqa: E402
from coopsim.model.specs import FloorSpec, ObjectSpec  # noqa: E402
from coopsim.physics.mujoco.engine import GRAVITY, MujocoEngine  # noqa: E402
from coopsim.physics.mujoco.state import rotations  # noqa: E402
from coopsim.physics.pymunk.engine import PymunkEngine  # noqa: E402
from coopsim.plugins.robots.single import CHASSIS_RADIUS as R, chassis  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.stepper import Stepper  # noqa: E402

from helpers import box, robot, scenario  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MASS, INERTIA = 1.5, (0.02, 0.03, 0.04)  # a quadrotor-like free body, kg and kg m^2
DT = 0.01


def flyer(name="q1", x=0.0, y=0.0, z=2.0, yaw=0.0) -> Assembly:
    """A free 0.5 m, 1.5 kg body driven by its rotors (a wrench)."""
    body = BodySpec("body", "dynamic", MASS, (ShapeSpec("circle", radius=0.25),), (x, y), yaw,
                    free=True, z=z, height=0.1, inertia=INERTIA)
    return Assembly((MemberSpec(name, "body", (), 0.25, drive="rotors"),), (body,))


def ground(name="r1", x=0.0, y=0.0, yaw=0.0) -> Assembly:
    body, member = chassis(name, "chassis", x, y, yaw)
    return Assembly((member,), (body,))


def world(engine_cls=MujocoEngine, assemblies=(), objects=(), floor=(10.0, 10.0)):
    """An engine holding ``assemblies`` (robots in their order) and ``objects``."""
    engine = engine_cls(FloorSpec(*floor))
    handles = [engine.add_object(o) for o in objects]
    robots = []
    for k, assembly in enumerate(assemblies):
        h = engine.add_assembly(assembly, k + 1)
        robots += [h.robots[m.name] for m in assembly.members]
    engine.set_robots(robots, ["" for _ in robots])
    return engine, handles


def run(engine, seconds: float, before=None) -> None:
    for _ in range(round(seconds / DT)):
        if before is not None:
            before()
        engine.step(DT)


ROW = np.array([0])


# --- free bodies ---------------------------------------------------------------------------------

def test_a_free_body_falls_at_g():
    engine, _ = world(assemblies=[flyer(z=5.0)])
    run(engine, 0.5)
    s = engine.state3d()[0]
    assert s[9] == pytest.approx(-GRAVITY * 0.5, rel=1e-9)  # vz: the velocity is exact
    assert s[2] == pytest.approx(5.0 - GRAVITY * 0.5 ** 2 / 2, abs=0.02)  # Euler's z
    assert s[0:2].tolist() == [0.0, 0.0] and s[3:7].tolist() == [1.0, 0.0, 0.0, 0.0]


def test_m_g_along_body_z_hovers_and_a_yawed_body_pushes_along_its_own_x():
    engine, _ = world(assemblies=[flyer(z=2.0, yaw=math.pi / 2)])
    engine.apply_wrench(ROW, np.array([[0.0, 0.0, MASS * GRAVITY]]), np.zeros((1, 3)))
    run(engine, 1.0)
    s = engine.state3d()[0]
    assert s[2] == pytest.approx(2.0, abs=1e-9) and abs(s[9]) < 1e-9
    # 1.5 N along the body's x, which points along world +y: a = 1 m/s^2 that way, held
    engine.apply_wrench(ROW, np.array([[1.5, 0.0, MASS * GRAVITY]]), np.zeros((1, 3)))
    run(engine, 1.0)
    s = engine.state3d()[0]
    assert s[8] == pytest.approx(1.0, rel=1e-6) and abs(s[7]) < 1e-9
    assert s[2] == pytest.approx(2.0, abs=1e-9)


def test_a_body_frame_torque_spins_the_body_about_its_own_axis():
    tau = 0.01  # N m about the body's x axis, which the 90 degree yaw turns to world +y
    engine, _ = world(assemblies=[flyer(z=5.0, yaw=math.pi / 2)])
    engine.apply_wrench(ROW, np.array([[0.0, 0.0, MASS * GRAVITY]]), np.array([[tau, 0, 0]]))
    run(engine, 0.5)
    gyro = engine.state3d()[0, 10:13]
    assert gyro[0] == pytest.approx(tau / INERTIA[0] * 0.5, rel=1e-6)  # what a gyro reads
    assert abs(gyro[1]) < 1e-9 and abs(gyro[2]) < 1e-9
    rot = rotations(engine.state3d()[:, 3:7])[0]
    assert rot[:, 0] == pytest.approx([0.0, 1.0, 0.0], abs=1e-9)  # the axis it turns about
    angle = tau / INERTIA[0] * 0.5 ** 2 / 2  # rolled by w t / 2 (Euler: to a step's worth)
    assert math.acos(rot[2, 2]) == pytest.approx(angle, abs=0.002)
    assert rot[0, 2] > 0  # body z leans towards world +x: a right-handed turn about world +y
    assert engine.robot_state()[0, 5] == pytest.approx(0.0, abs=1e-9)  # no yaw rate


def test_a_released_wrench_lets_the_body_fall_and_it_lands_on_the_floor():
    engine, _ = world(assemblies=[flyer(z=1.0)])
    engine.apply_wrench(ROW, np.array([[0.0, 0.0, MASS * GRAVITY]]), np.zeros((1, 3)))
    run(engine, 0.2)
    engine.apply_wrench(ROW, np.zeros((1, 3)), np.zeros((1, 3)))
    run(engine, 1.5)
    s = engine.state3d()[0]
    assert s[2] == pytest.approx(0.05, abs=0.01)  # resting on its 0.1 m tall shape
    assert abs(s[9]) < 0.05


# --- ground robots ---------------------------------------------------------------------------------

@pytest.mark.parametrize("forward, turn", [(0.5, 0.0), (0.3, 0.8), (0.0, -1.0)])
def test_a_ground_robot_drives_like_on_pymunk(forward, turn):
    poses = []
    for cls in (MujocoEngine, PymunkEngine):
        engine, _ = world(cls, assemblies=[ground(yaw=0.3)])
        run(engine, 2.0, lambda e=engine: e.drive(ROW, np.array([forward]), np.array([turn])))
        poses.append(engine.robot_state()[0])
    mj, pm = poses
    assert mj[:2] == pytest.approx(pm[:2], abs=0.02)
    assert mj[2] == pytest.approx(pm[2], abs=0.02)
    assert mj[3:] == pytest.approx(pm[3:], abs=0.02)
    assert engine.state3d().shape == (1, 13)


def test_velocity_drive_and_a_wall_stops_the_robot_with_a_front_contact():
    wall = box("W", 2.0, 0.0, size=(0.2, 4.0))
    engine, _ = world(assemblies=[ground()], objects=[wall])
    run(engine, 4.0, lambda: engine.set_velocity(ROW, np.array([[0.6, 0.0, 0.0]])))
    s = engine.robot_state()[0]
    assert s[0] == pytest.approx(1.9 - R, abs=0.01)  # stalled at the wall's face
    assert abs(s[3]) < 0.01
    assert engine.contacts(engine.robot_state()).tolist() == [[1.0, 0.0]]
    assert engine.state3d()[0, 2] == 0.0  # on the floor


def test_a_robot_pushes_a_movable_box_and_a_dropped_sphere_lands_on_a_static_box():
    crate = box("C", 1.0, 0.0, size=(0.4, 0.4), mass=2.0)
    pedestal = ObjectSpec("P", "box", (1.0, 1.0, 0.5), (-2.0, 2.0, 0.25))
    ball = ObjectSpec("B", "sphere", (0.2, 0.2, 0.2), (-2.0, 2.0, 1.5), mass=0.3)
    engine, (h_crate, _, h_ball) = world(assemblies=[ground()], objects=[crate, pedestal, ball])
    run(engine, 3.0, lambda: engine.drive(ROW, np.array([0.5]), np.array([0.0])))
    x_crate = engine.poses([h_crate])[0, 0]
    assert x_crate > 1.5  # pushed along
    assert x_crate - engine.robot_state()[0, 0] == pytest.approx(R + 0.2, abs=0.02)
    assert h_ball.lowest(engine.data) == pytest.approx(0.5, abs=0.01)  # on the pedestal
    circles, _, segments, _ = engine.moving_geometry()
    assert len(segments) == 4 and circles[:, 2].tolist() == [0.1]  # the crate and the ball
    circles, _, segments, _ = engine.static_geometry()
    assert len(segments) == 16 + 4 and len(circles) == 0  # walls and the pedestal


def test_adding_and_removing_between_steps_keeps_the_others_state():
    engine, (h_a,) = world(assemblies=[ground(), flyer(x=2.0)],
                           objects=[box("A", -3.0, 3.0, mass=1.0)])
    engine.apply_wrench(np.array([1]), np.array([[0.3, 0.0, MASS * GRAVITY + 1.5]]),
                        np.array([[0.0, 0.0, 0.002]]))
    run(engine, 0.5, lambda: engine.drive(ROW, np.array([0.4]), np.array([0.5])))
    before = engine.state3d().copy()
    h_b = engine.add_object(box("B", 3.0, -3.0))
    engine.remove_object(h_a)
    assert engine.state3d().tobytes() == before.tobytes()
    assert engine.poses([h_b]).tolist() == [[3.0, -3.0, 0.0]]
    run(engine, 0.5)  # the drive command and the wrench are held across the change
    after, yaw = engine.state3d(), engine.robot_state()[0, 2]
    assert after[0, 7:9] == pytest.approx([0.4 * math.cos(yaw), 0.4 * math.sin(yaw)], abs=0.01)
    assert after[1, 9] > before[1, 9] + 0.4  # still climbing at 1 m/s^2


def test_a_diverged_body_is_put_back_alone_and_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo's own handler would write MUJOCO_LOG.TXT here
    engine, _ = world(assemblies=[ground(), flyer(name="q7", x=2.0)])
    alone, _ = world(assemblies=[ground()])
    for e in (engine, alone):
        run(e, 0.05, lambda e=e: e.drive(ROW, np.array([0.3]), np.array([0.5])))
    before = engine.state3d()[1].copy()
    engine.apply_wrench(np.array([1]), np.array([[1e300, 0.0, 1e300]]), np.zeros((1, 3)))
    for e in (engine, alone):
        e.step(DT)
    (found,) = engine.diverged()
    assert found.row == 1 and "its speed reached" in found.why, found
    assert engine.state3d()[1, :7] == pytest.approx(before[:7], abs=1e-12)  # the step's start
    assert engine.state3d()[1, 7:].tolist() == [0.0] * 6  # at rest, its wrench dropped
    # the ground robot went on as if alone (MuJoCo's reset of every body is off)
    assert engine.state3d()[0].tobytes() == alone.state3d()[0].tobytes()
    run(engine, 0.05)
    assert engine.diverged() == () and np.isfinite(engine.state3d()).all()
    assert list(tmp_path.iterdir()) == []


def test_a_diverged_object_is_put_back_and_named():
    cube = ObjectSpec("b1", "box", (0.2, 0.2, 0.2), (2.0, 0.0, 0.1), 0.0, 1.0)
    engine, (h,) = world(assemblies=[ground()], objects=[cube])
    run(engine, 0.05)
    before = engine.poses3d([h])[0].copy()
    engine.data.qvel[h.dadr:h.dadr + 3] = (5e4, 0.0, 0.0)  # m/s: a kick no contact gives
    engine.step(DT)
    (found,) = engine.diverged()
    assert (found.row, found.label) == (-1, "object b1") and "its speed reached" in found.why
    assert engine.poses3d([h])[0] == pytest.approx(before, abs=1e-12)
    assert engine.data.qvel[h.dadr:h.dadr + 6].tolist() == [0.0] * 6


@pytest.mark.parametrize("count", [1, 4, 5])  # the guard's few on floats, then its arrays
@pytest.mark.parametrize("where", [(0.0, 0.0, -20.0), (0.0, 10_006.0, 0.1), (-10_006.0, 0.0, 0.1)])
def test_an_object_beyond_the_bounds_is_put_back_alone(count, where):
    """An object moved below the floor's depth or beyond its edges between two steps is the
    one named, among ``count`` objects (the guard's loop over a few, its arrays over
    more)."""
    cubes = [ObjectSpec(f"b{k}", "box", (0.2, 0.2, 0.2), (2.0, 0.5 * k, 0.1), 0.0, 1.0)
             for k in range(count)]
    engine, handles = world(assemblies=[ground()], objects=cubes)
    run(engine, 0.02)
    h = handles[-1]
    engine.data.qpos[h.qadr:h.qadr + 3] = where
    engine.step(DT)
    (found,) = engine.diverged()  # that one alone
    assert (found.row, found.label) == (-1, f"object b{count - 1}")
    assert ("altitude" if where[2] < 0 else "beyond the floor's edges") in found.why


def test_reset_rows_puts_robots_back_and_drops_their_commands():
    engine, _ = world(assemblies=[ground(), flyer(x=2.0, z=1.0)])
    engine.apply_wrench(np.array([1]), np.array([[0.0, 0.0, 30.0]]), np.zeros((1, 3)))
    run(engine, 0.3, lambda: engine.drive(ROW, np.array([0.5]), np.array([0.2])))
    engine.reset_rows(np.array([0, 1]), np.array([[1.0, 1.0, 0.5, 0, 0, 0],
                                                   [-1.0, 2.0, 1.0, 0, 0, 0]]))
    s = engine.robot_state()
    assert s[:, :3].ravel() == pytest.approx([1.0, 1.0, 0.5, -1.0, 2.0, 1.0], abs=1e-12)
    assert engine.state3d()[1, 2] == 1.0
    run(engine, 0.2)
    assert engine.robot_state()[0, :3] == pytest.approx([1.0, 1.0, 0.5], abs=1e-9)
    assert engine.state3d()[1, 9] < -1.0  # no wrench any more: it falls


# --- whole simulations -----------------------------------------------------------------------------

def _one_robot(tmp_path):
    text = (ROOT / "scenarios" / "one_robot.scenario").read_text()
    path = tmp_path / "one_robot.scenario"
    path.write_text(text.replace("../worlds/empty.world", str(ROOT / "worlds" / "empty.world"))
                    .replace("[SETTINGS]", "[SETTINGS]\nengine mujoco"))
    return load(str(path))


def test_a_2d_scenario_runs_on_mujoco_and_the_snapshot_has_the_3d_pose(tmp_path):
    stepper = Stepper(Simulation(_one_robot(tmp_path)), mode="lockstep")
    for _ in range(100):
        stepper.slots.put("robot1", "motors", (0.4, 0.4), attach=False)
        stepper.tick()
    snap = stepper.snapshot
    assert stepper.sim.world.engine.label == "mujoco"
    assert snap.pose3d.shape == (1, 7) and snap.twist3d.shape == (1, 6)
    moved = math.hypot(snap.pose3d[0, 0] + 3.0, snap.pose3d[0, 1] + 3.0)
    assert moved == pytest.approx(0.4, abs=0.02)  # 1 s at 0.4 m/s towards the target
    assert snap.pose3d[0, 0:2].tolist() == snap.poses[0][0:2].tolist()


def _pushing_run() -> bytes:
    scn = scenario([robot("a", 0.0, 0.0), robot("b", 0.0, 1.0, yaw=0.2)],
                   [box("C", 1.0, 0.0, size=(0.4, 0.4), mass=2.0), box("W", 3.0, 0.0,
                                                                       size=(0.2, 4.0))])
    stepper = Stepper(Simulation(scn, engine="mujoco"), mode="lockstep")
    for _ in range(200):
        for name in ("a", "b"):
            stepper.slots.put(name, "motors", (0.5, 0.45), attach=False)
        stepper.tick()
    snap = stepper.snapshot
    return b"".join(np.ascontiguousarray(a).tobytes() for a in (
        stepper.sim.world.engine.state3d(), snap.pose3d, snap.twist3d, snap.reading("a", "sonar"),
        snap.reading("b", "bumper")))


def test_the_same_scenario_twice_gives_the_same_bits():
    assert _pushing_run() == _pushing_run()


# --- the command line ------------------------------------------------------------------------------

def _run(path: Path, *prelude: str) -> subprocess.CompletedProcess:
    """``coopsim run path --headless``, after ``prelude`` lines of Python (a patch)."""
    code = "\n".join([*prelude, "from coopsim.app.cli import main",
                      f"main(['run', {str(path)!r}, '--headless', '--port', '0',"
                      " '--no-controllers', '--mode', 'lockstep', '--duration', '2'])"])
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=path.parent, env=env)  # MUJOCO_LOG.TXT there


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["pymunk", "kinematic"])
def test_cli_run_refuses_a_floating_object_on_a_2d_engine(tmp_path, engine):
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 10 10 0.1\n")
    path = tmp_path / "f.scenario"
    path.write_text(f"[WORLD]\nfile w.world\n[SETTINGS]\nengine {engine}\n"
                    "[OBJECT_1]\ntype box\nsize 0.5 0.5 0.5\nposition 1 1 2\n")
    result = _run(path)
    assert result.returncode == 2, result.stderr
    reason = (f"the {engine} engine is 2D and object OBJECT_1 floats above the floor (its "
              "bottom at z = 1.75 m): use an engine with the flight feature (engine mujoco)")
    assert f"{path}:5: {reason}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_cli_run_without_mujoco_names_the_install_command(tmp_path):
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 10 10 0.1\n")
    path = tmp_path / "m.scenario"
    path.write_text("[WORLD]\nfile w.world\n[SETTINGS]\nengine mujoco\n"
                    "[ROBOT_1]\ntype single\nname r\nposition 0 0 0\n")
    result = _run(path, "import sys", "sys.modules['mujoco'] = None  # as if not installed")
    assert result.returncode == 2, result.stderr
    assert (f"{path}:4: the mujoco engine needs MuJoCo, which is not installed: "
            "pip install 'coopsim[3d]'") in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_cli_run_goes_on_and_names_the_robot_when_the_physics_diverges(tmp_path):
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 10 10 0.1\n")
    path = tmp_path / "d.scenario"
    path.write_text("[WORLD]\nfile w.world\n[SETTINGS]\nengine mujoco\n"
                    "[ROBOT_1]\ntype single\nname r\nposition 0 0 0\n")
    patch = textwrap.dedent("""\
        from coopsim.physics.mujoco import engine as me
        step = me.MujocoEngine.step
        def bad(self, dt):  # a force no body survives, from t = 0.1 s
            if self.data is not None and self.data.time > 0.1:
                self.data.qfrc_applied[:] = 1e308
                me.md.drive_forces = lambda data, rows, h: None
            step(self, dt)
        me.MujocoEngine.step = bad
        """)
    result = _run(path, patch)
    out = result.stdout + result.stderr
    assert result.returncode == 0 and "duration 2 s reached" in out, out
    assert "FAIL" not in out and "Traceback" not in out, out
    assert "robot r diverged (1 time so far)" in out, out  # the log
    line = next(x for x in out.splitlines() if x.startswith("diverged"))
    assert "1 robot put back: r (" in line, line  # the summary
