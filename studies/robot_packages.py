"""Robots from the packages MuJoCo's and PyBullet's users have, loaded as shipped from a
scenario written as docs/robots.md says: per robot, whether it loads (``coopsim check`` = the
load ``run`` does), its load CPU, whether it moves true, and optionally a camera image of it.
The table goes into docs/experiments/robot-files.md between the ``robot-packages`` markers
(``--write``).

Packages: ``pybullet`` (its ``pybullet_data``), ``robosuite``, ``dm_control``,
``gymnasium_robotics``: each found installed (its folder, without importing it) or in a
folder of unpacked wheels (``--packages DIR``: ``pip download --no-deps NAME`` then unzip);
a package found nowhere is listed as absent.

Checks (one process per robot, so that each load is a first load, its CPU its own):

* an arm (``tool`` given): ``move_to`` a point in front at half its reach, then 3 s of steps:
  the tool's distance from the point (goal <= 5 mm) or the refusal's reason;
* a floating base: 10 s of steps from the section's pose (a legged robot in its standing
  posture, ``stance``): its root link's largest tilt from level and how far it moved; a
  legged robot's goal (``stands``): within 5 degrees, its root at least half its start
  height up at the end (a robot that falls over, or onto its belly, fails);
* a wheeled base (``wheels``): 2 m straight at 0.4 m/s, how far it ends aside (goal 5 mm),
  then a turn on the spot until its odometry reads 90 degrees, the true turn (goal 1 degree);
* anything else: 10 s of steps held, its root link's drift.

Run: ``PYTHONPATH=. python studies/robot_packages.py [--packages DIR] [--images DIR]
[--write] [NAME ...]`` (NAME: a row's package/robot, e.g. ``pybullet/kuka_iiwa``).

``--sweep`` instead loads every description file of the packages (and example-robot-data's,
and MuJoCo's own ``model`` folder as ``DIR/mujoco_models``): first by MuJoCo or PyBullet
(the oracle: what they refuse is listed, not counted), then by coopsim, loads only; its
table goes between the ``robot-sweep`` markers (``--save FILE`` keeps the rows, ``--rows
FILE`` tables them again; NAME: parts of a file's package/path to sweep).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "experiments" / "robot-files.md"
BEGIN, END = "<!-- robot-packages: begin -->", "<!-- robot-packages: end -->"
SWEEP_BEGIN, SWEEP_END = "<!-- robot-sweep: begin -->", "<!-- robot-sweep: end -->"


@dataclass(frozen=True)
class Robot:
    """One row: the package, a short name, the file in the package's data folder and the
    section's keys (besides description, name and position)."""

    package: str
    name: str
    file: str
    keys: tuple[str, ...] = ()
    z: float = 0.0  # the section's position z, m (a floating base's start height)
    stands: bool = False  # a legged robot: judged on standing (tilt and height kept)


def _stance(legs: tuple[str, ...], names: tuple[str, str, str],
            angles: tuple[float, float, float]) -> str:
    """A ``stance`` line: each leg's three joints (``names`` with ``{}`` for the leg) at
    ``angles`` (rad)."""
    return "stance " + " ".join(f"{n.format(leg)} {a:g}" for leg in legs
                                for n, a in zip(names, angles))


# The standing postures of pybullet's examples (their files' zero posture is no stance: the
# A1's knees clip to -0.92 rad, all four feet 16 cm ahead of the hips; the Laikago's legs lean
# back): the A1's hip 0, thigh 0.9, calf -1.8 rad (Unitree's stand, motion_imitation's
# INIT_MOTOR_ANGLES); the Laikago's pybullet_envs/minitaur/robots/laikago_constants.py
# angles (0, 0.67, -1.25) plus its joint offsets (0, -0.6, 0.66).
A1_STANCE = _stance(("FR", "FL", "RR", "RL"), ("{}_hip_joint", "{}_upper_joint",
                                               "{}_lower_joint"), (0.0, 0.9, -1.8))
LAIKAGO_STANCE = _stance(("FR", "FL", "RR", "RL"), (
    "{}_hip_motor_2_chassis_joint", "{}_upper_leg_2_hip_motor_joint",
    "{}_lower_leg_2_upper_leg_joint"), (0.0, 0.07, -0.59))

# pybullet's Minitaur as its examples stand it (pybullet_envs' minitaur.py ResetPose): each
# leg's two motors at pi/2 and its knees at -2.1834 rad, times each motor's direction (-1 on
# the left legs); its knees carry it in that posture (the loop at each foot, which pybullet's
# code closes with a point constraint, stays shut within a millimetre: not closed here).
MINITAUR_STANCE = "stance " + " ".join(
    f"motor_{leg}{side}_joint {d * math.pi / 2:.6g} knee_{leg}{side}_link {d * -2.1834:.6g}"
    for leg, d in (("front_left", -1), ("back_left", -1), ("front_right", 1),
                   ("back_right", 1)) for side in "LR")

ROBOTS = (
    Robot("pybullet", "kuka_iiwa", "kuka_iiwa/model.urdf", ("tool lbr_iiwa_link_7",)),
    Robot("pybullet", "panda", "franka_panda/panda.urdf", ("tool panda_hand",)),
    Robot("pybullet", "xarm6", "xarm/xarm6_robot.urdf", ("tool link6",)),
    Robot("pybullet", "r2d2", "r2d2.urdf", ("base floating",), 0.5),
    Robot("pybullet", "a1", "a1/a1.urdf", ("base floating", A1_STANCE), 0.29, True),
    Robot("pybullet", "mini_cheetah", "mini_cheetah/mini_cheetah.urdf", ("base floating",),
          0.45, True),
    Robot("pybullet", "laikago", "laikago/laikago_toes_zup.urdf",
          ("base floating", LAIKAGO_STANCE), 0.48, True),
    # y up: pybullet's examples load it turned by 180 degrees about (0, 1, 1), the section's
    # orientation 90 0 180
    Robot("pybullet", "laikago_yup", "laikago/laikago.urdf",
          ("base floating", "orientation 90 0 180", LAIKAGO_STANCE), 0.6, True),
    Robot("pybullet", "minitaur", "quadruped/minitaur.urdf",
          ("base floating", MINITAUR_STANCE), 0.2, True),
    # wheeled bases: the Husky driven on its front pair (its rear wheels held)
    Robot("pybullet", "husky", "husky/husky.urdf", ("wheels front_left_wheel front_right_wheel",)),
    Robot("pybullet", "racecar", "racecar/racecar.urdf",
          ("wheels left_rear_wheel_joint right_rear_wheel_joint",)),
    Robot("robosuite", "ur5e", "models/assets/robots/ur5e/robot.xml", ("tool right_hand",)),
    Robot("robosuite", "sawyer", "models/assets/robots/sawyer/robot.xml",
          ("tool right_hand",)),
    Robot("robosuite", "panda", "models/assets/robots/panda/robot.xml", ("tool right_hand",)),
    Robot("robosuite", "spot", "models/assets/robots/spot/robot.xml", ("base floating",), 0.7,
          True),
    Robot("dm_control", "quadruped", "suite/quadruped.xml", ("base floating",), 0.6,
          True),
    Robot("dm_control", "reacher", "suite/reacher.xml", ("tool finger",)),
    # in cm (gravity -981) on a 0.1 ms step, its own: where its floor.xml stands it
    Robot("dm_control", "fruitfly", "locomotion/walkers/assets/fruitfly_v2/fruitfly.xml",
          ("base floating",), 0.132, True),
    Robot("dm_control", "humanoid", "suite/humanoid.xml", ("base floating",), 1.4),
    Robot("gymnasium_robotics", "fetch_reach", "envs/assets/fetch/reach.xml",
          ("body robot0:base_link",)),
    Robot("gymnasium_robotics", "shadow_hand", "envs/assets/hand/reach.xml",
          ("body robot0:hand mount",)),
)


def package_folder(name: str, extra: str | None) -> Path | None:
    """The package's data folder: installed (found without importing it), else under
    ``extra`` (unpacked wheels; None: the folder ``COOPSIM_ROBOT_PACKAGES`` names, where the
    tests find them too), else None. pybullet's robots are in ``pybullet_data``."""
    module = "pybullet_data" if name == "pybullet" else name
    extra = extra or os.environ.get("COOPSIM_ROBOT_PACKAGES")
    spec = importlib.util.find_spec(module)
    if spec is not None and spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    if extra and (Path(extra) / module).is_dir():
        return Path(extra) / module
    return None


def scenario(folder: Path, robot: Robot, path: Path) -> Path:
    """A scenario of ``robot`` alone on a floor, as docs/robots.md writes one."""
    (folder / "floor.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    lines = ["[WORLD]", "file floor.world", "", "[ROBOT_1]", f"description {path}",
             "name r", f"position 0 0 {robot.z}", *robot.keys, "", "[SETTINGS]",
             "engine mujoco", "dt 0.01", "mode lockstep", "seed 1"]
    out = folder / "robot.scenario"
    out.write_text("\n".join(lines) + "\n")
    return out


def one(path: str, image: str = "", stands: bool = False) -> dict:
    """Load and move the robot of scenario ``path`` (in this process: its first load);
    ``stands``: judge it as a legged robot standing."""
    import numpy as np

    from coopsim.formats.files import load
    from coopsim.model.errors import CoopsimError
    from coopsim.sim.drivers import LocalRobot
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper
    import coopsim.physics.mujoco.engine  # noqa: F401 -- its import is not the robot's load
    from coopsim.model.plugins import REGISTRIES

    for registry in REGISTRIES.values():  # the plugins' imports are the process's, not its
        for label in registry.labels():
            registry.get(label)
    start = time.process_time()
    try:
        sim = Simulation(load(path))
        sim.physics()
    except CoopsimError as exc:
        return {"loads": False, "why": str(exc).splitlines()[0]}
    cpu = time.process_time() - start
    stepper = Stepper(sim, mode="lockstep")
    snap = stepper.tick()
    bot = LocalRobot(sim, "r")
    out = {"loads": True, "cpu": cpu}
    arm = sim.world.robot("r").info.arm if sim.world.robot("r").info is not None else None
    if arm is not None and "tool" in bot.modules():
        base = np.array(snap.pose3d[0][:3])
        target = base + np.array([0.5 * arm.reach, 0.0, 0.5 * arm.reach])
        try:
            seconds = float(bot.tool.move_to(*target, 0.5).split()[0])
        except CoopsimError as exc:
            out["moves"] = f"move_to refused: {str(exc)[:120]}"
        else:
            for _ in range(int((seconds + 3.0) / 0.01)):
                stepper.tick()
            error = float(np.linalg.norm(np.array(bot.tool.read()[:3]) - target))
            out["moves"] = f"move_to: {1000 * error:.1f} mm off" + (" ✓" if error <= 0.005
                                                                     else " ✗")
    elif "motors" in bot.modules():  # a wheeled base: 2 m straight, then 90 degrees
        out["moves"] = _drive(stepper, bot)
        snap = stepper.tick()  # where it ended: the image's
    else:
        z0 = np.array(snap.pose3d[0][:3])
        tilt = 0.0
        for _ in range(1000):
            snap = stepper.tick()
            tilt = max(tilt, _tilt(snap.pose3d[0][3:7]))
        moved = np.array(snap.pose3d[0][:3]) - z0
        held = tilt <= 5.0 and snap.pose3d[0][2] >= 0.5 * z0[2]
        out["moves"] = (f"10 s: tilt {tilt:.1f}° at most, root moved "
                        f"{100 * float(np.linalg.norm(moved)):.1f} cm (height "
                        f"{100 * float(moved[2]):+.1f} cm)"
                        + ((" ✓" if held else " ✗") if stands else ""))
    if image:
        out["image"] = _image(sim, snap, image)
    return out


def _drive(stepper, bot) -> str:
    """A wheeled base's check: 2 m straight at 0.4 m/s on equal wheel commands (how far it
    ends aside, goal 5 mm), then a turn on the spot until its odometry reads 90 degrees (the
    true turn's error, goal 1 degree)."""
    snap = stepper.tick()
    x0, y0, yaw0 = snap.poses[0][:3]
    bot.motors.set_speeds(0.4, 0.4)
    for _ in range(int(round(2.0 / 0.4 / 0.01))):
        snap = stepper.tick()
    bot.motors.set_speeds(0.0, 0.0)
    for _ in range(100):
        snap = stepper.tick()
    x, y, yaw = snap.poses[0][:3]
    aside = abs(-(x - x0) * math.sin(yaw0) + (y - y0) * math.cos(yaw0))
    start, odo = snap.poses[0][2], float(bot.odometry.read()[2])
    bot.motors.set_speeds(-0.1, 0.1)
    for _ in range(3000):
        stepper.tick()
        if math.remainder(float(bot.odometry.read()[2]) - odo, 2 * math.pi) >= math.pi / 2:
            break
    bot.motors.set_speeds(0.0, 0.0)
    for _ in range(100):
        snap = stepper.tick()
    turned = math.degrees(math.remainder(snap.poses[0][2] - start, 2 * math.pi))
    moved = math.hypot(x - x0, y - y0)
    ok = aside <= 0.005 and abs(turned - 90.0) <= 1.0
    return (f"{moved:.3f} m straight: {1000 * aside:.2f} mm aside; turned {turned:.2f}°"
            + (" ✓" if ok else " ✗"))


def _tilt(quat) -> float:
    """The angle between a body's z axis, at orientation ``quat`` (w, x, y, z), and the
    world's, degrees."""
    w, x, y, z = quat
    return math.degrees(math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (x * x + y * y)))))


def _image(sim, snap, path: str) -> str:
    """A 320 x 240 image of the robot from 2 m ahead and to its right, saved as PNG."""
    import numpy as np
    from PIL import Image

    from coopsim.model.images import View

    centre = np.array(snap.pose3d[0][:3]) + (0, 0, 0.3)
    eye = centre + (1.6, -1.2, 0.9)
    forward = (centre - eye) / np.linalg.norm(centre - eye)
    up = np.array([0.0, 0.0, 1.0]) - forward * forward[2]
    view = View(tuple(eye), tuple(forward), tuple(up / np.linalg.norm(up)), 50, 0.05, 20,
                320, 240)
    rgb, _ = sim.world.engine.render_images([view])[0]
    Image.fromarray(rgb).save(path)
    return path


def survey(robots, extra: str | None, images: str | None) -> list[dict]:
    """Each robot's row, each in a process of its own."""
    rows = []
    for robot in robots:
        row = {"package": robot.package, "robot": robot.name, "file": robot.file}
        folder = package_folder(robot.package, extra)
        if folder is None or not (folder / robot.file).is_file():
            rows.append({**row, "loads": None, "why": "package not found"})
            continue
        with tempfile.TemporaryDirectory() as tmp:
            path = scenario(Path(tmp), robot, folder / robot.file)
            image = os.path.join(images, f"{robot.package}_{robot.name}.png") if images else ""
            code = ("import json, sys; sys.path.insert(0, %r); import robot_packages as rp; "
                    "print('ROW' + json.dumps(rp.one(%r, %r, %r)))"
                    % (str(Path(__file__).parent), str(path), image, robot.stands))
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=900)
            found = re.search(r"^ROW(.*)$", done.stdout, re.M)
            got = json.loads(found.group(1)) if found else {
                "loads": False, "why": (done.stderr.strip().splitlines() or ["?"])[-1]}
        rows.append({**row, **got})
    return rows


def table(rows: list[dict]) -> str:
    """The rows as a markdown table, and a summary line."""
    lines = ["| package | robot | file | loads | load CPU (s) | moves | image |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        why = re.sub(r"^\S*robot\.scenario:\d+: ", "", r.get("why", ""))  # its temporary file
        loads = "absent" if r["loads"] is None else ("yes" if r["loads"] else f"no: {why[:160]}")
        cpu = f"{r['cpu']:.2f}" if "cpu" in r else "—"
        image = os.path.basename(r["image"]) if r.get("image") else "—"
        lines.append(f"| {r['package']} | {r['robot']} | {r['file']} | {loads} | {cpu} | "
                     f"{r.get('moves', '—')} | {image} |")
    tried = [r for r in rows if r["loads"] is not None]
    loaded = [r for r in tried if r["loads"]]
    cpus = sorted(r["cpu"] for r in loaded)
    lines.append("")
    lines.append(f"Loaded {len(loaded)} of {len(tried)} tried"
                 + (f"; load CPU median {cpus[len(cpus) // 2]:.2f} s, largest {cpus[-1]:.2f} s,"
                    f" {sum(c <= 1.0 for c in cpus)} within 1 s" if cpus else "") + ".")
    return "\n".join(lines)


def write(text: str, begin: str = BEGIN, end: str = END) -> None:
    """Put ``text`` between the markers ``begin`` and ``end`` of
    docs/experiments/robot-files.md (added at its end where it has none)."""
    doc = DOC.read_text()
    if begin not in doc:
        doc = f"{doc.rstrip()}\n\n{begin}\n{end}\n"
    head, _, rest = doc.partition(begin)
    _, _, tail = rest.partition(end)
    DOC.write_text(f"{head}{begin}\n{text}\n{end}{tail}")


# --- the sweep: every robot file of the packages -------------------------------------------

# The packages swept and where their files are: the folder (below the package's data folder)
# walked for ``.urdf`` files (PyBullet's loadURDF the oracle) and ``.xml`` files whose root is
# ``<mujoco>`` (MuJoCo's compiler the oracle). ``mujoco_models`` is the ``model`` folder of
# MuJoCo's source (not in its wheel), ``example-robot-data`` its ``robots`` folder.
SWEPT = (("pybullet", ""), ("robosuite", "models/assets"), ("dm_control", ""),
         ("gymnasium_robotics", "envs/assets"), ("example-robot-data", "robots"),
         ("mujoco_models", "model"))
TESTS = ("test_assets", "testing")  # folders of a package's own tests' files: not swept


def sweep_folder(name: str, extra: str | None) -> Path | None:
    """The folder a swept package's data is in (see ``package_folder``)."""
    if name == "example-robot-data":
        import sysconfig
        for base in (sysconfig.get_paths()["purelib"], extra or ""):
            for folder in (Path(base) / "cmeel.prefix" / "share" / name, Path(base) / name):
                if folder.is_dir():
                    return folder
        return None
    if name == "mujoco_models":
        found = Path(extra) / name if extra else None
        return found if found is not None and found.is_dir() else None
    return package_folder(name, extra)


def robot_files(folder: Path) -> list[Path]:
    """The package's description files under ``folder``: every ``.urdf``, and every ``.xml``
    whose first element is ``<mujoco>`` (MJCF) that no other file ``<include>``s (a
    fragment; ROS's ``package.xml`` is not MJCF either), sorted; the package's tests'
    folders left out."""
    import xml.etree.ElementTree as ET

    found, included = [], set()
    for path in sorted(folder.rglob("*")):
        if any(part in TESTS for part in path.relative_to(folder).parts):
            continue
        if path.suffix == ".urdf":
            found.append(path)
        elif path.suffix == ".xml":
            try:
                root = ET.parse(path).getroot()
            except ET.ParseError:
                continue
            if root.tag == "mujoco":
                found.append(path)
            included.update((path.parent / e.get("file", "")).resolve()
                            for e in root.iter("include"))
    return [p for p in found if p.resolve() not in included]


def oracle(path: str) -> dict:
    """Whether MuJoCo (an MJCF) or PyBullet (a URDF) loads the file alone, as its users
    load it (``MjModel.from_xml_path``; ``loadURDF`` in a DIRECT client), with its moving
    joints (free joints not counted) or the reason it refuses."""
    if path.endswith(".urdf"):
        import pybullet

        client = pybullet.connect(pybullet.DIRECT)
        try:
            body = pybullet.loadURDF(path, physicsClientId=client)
            joints = sum(pybullet.getJointInfo(body, j, physicsClientId=client)[2]
                         != pybullet.JOINT_FIXED
                         for j in range(pybullet.getNumJoints(body, physicsClientId=client)))
            return {"oracle": True, "joints": int(joints)}
        except pybullet.error as exc:
            return {"oracle": False, "oracle_why": f"pybullet: {exc}"}
        finally:
            pybullet.disconnect(client)
    import mujoco

    try:
        model = mujoco.MjModel.from_xml_path(path)
    except ValueError as exc:
        return {"oracle": False, "oracle_why": "mujoco: " + " ".join(str(exc).split())[:200]}
    joints = int(sum(t != mujoco.mjtJoint.mjJNT_FREE for t in model.jnt_type))
    return {"oracle": True, "joints": joints, "bodies": int(model.nbody - 1)}


def load_only(path: str, folder: str) -> dict:
    """Load the description file ``path`` in coopsim (this process) from a scenario of it
    alone on a floor, as docs/robots.md writes one (fixed base, 1 m up), build MuJoCo's world
    and step once: ``loads``, its CPU, or the refusal's first line; an exception that is not
    coopsim's own is a defect (``crash``)."""
    import traceback

    from coopsim.formats.files import load
    from coopsim.model.errors import CoopsimError
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    # a floor that pybullet's planes (200 m) and large objects fit on
    (Path(folder) / "floor.world").write_text("[FLOOR]\nsize 400 400 0.1\n")
    scen = Path(folder) / "robot.scenario"
    scen.write_text("\n".join(["[WORLD]", "file floor.world", "", "[ROBOT_1]",
                               f"description {path}", "name r", "position 0 0 1", "",
                               "[SETTINGS]", "engine mujoco", "dt 0.01", "mode lockstep",
                               "seed 1"]) + "\n")
    start = time.process_time()
    try:
        sim = Simulation(load(str(scen)))
        sim.physics()
        Stepper(sim, mode="lockstep").tick()
    except CoopsimError as exc:
        return {"loads": False, "why": str(exc).splitlines()[0]}
    except Exception as exc:  # noqa: BLE001 -- what the sweep looks for
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return {"loads": False, "crash": True,
                "why": f"{type(exc).__name__}: {exc} ({Path(where.filename).name}:"
                       f"{where.lineno})"[:300]}
    return {"loads": True, "cpu": time.process_time() - start}


def _worker(tasks: str) -> None:
    """Do the tasks of the file ``tasks`` (one JSON list a line: index, kind, path), printing
    a ``ROW`` line of each one's result as it is done (the parent resumes after a crash)."""
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        for line in Path(tasks).read_text().splitlines():
            index, kind, path = json.loads(line)
            got = oracle(path) if kind == "oracle" else load_only(path, tmp)
            # on a line of its own: MuJoCo and PyBullet write to the same stdout
            sys.stdout.write(f"\nROW {index} " + json.dumps(got) + "\n")
            sys.stdout.flush()


def _run_tasks(tasks: list[tuple[str, str]], timeout: float = 600.0) -> list[dict]:
    """Each task's result, in worker processes (a new one after one dies or hangs: that
    task's result says so)."""
    import selectors

    results: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        while len(results) < len(tasks):
            todo = Path(tmp) / f"tasks{len(results)}"
            todo.write_text("".join(json.dumps([i, *t]) + "\n"
                                    for i, t in enumerate(tasks) if i >= len(results)))
            proc = subprocess.Popen([sys.executable, __file__, "--worker", str(todo)],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True,
                                    env={**os.environ, "PYTHONPATH": str(ROOT)})
            sel = selectors.DefaultSelector()
            sel.register(proc.stdout, selectors.EVENT_READ)
            while len(results) < len(tasks):
                if not sel.select(timeout):
                    proc.kill()
                    results.append({"loads": False, "crash": True,
                                    "why": f"no answer in {timeout:.0f} s"})
                    break
                line = proc.stdout.readline()
                if not line:
                    proc.wait()
                    results.append({"loads": False, "crash": True,
                                    "why": f"the process died (exit {proc.returncode})"})
                    break
                found = re.match(r"ROW (\d+) (.*)$", line)
                if found:
                    assert int(found.group(1)) == len(results), line
                    results.append(json.loads(found.group(2)))
                    print(f"  {len(results)}/{len(tasks)} {tasks[len(results) - 1][1]}: "
                          f"{found.group(2)[:150]}", file=sys.stderr, flush=True)
            proc.stdout.close()
            proc.wait()
    return results


def sweep(extra: str | None, only: list[str]) -> list[dict]:
    """Every description file of the swept packages: whether MuJoCo or PyBullet loads it,
    then, of those it loads, whether coopsim does."""
    files = []
    for name, sub in SWEPT:
        folder = sweep_folder(name, extra)
        if folder is None or not (folder / sub).is_dir():
            print(f"{name}: not found", file=sys.stderr)
            continue
        for path in robot_files(folder / sub):
            rel = str(path.relative_to(folder))
            if not only or any(o in f"{name}/{rel}" for o in only):
                files.append({"package": name, "file": rel, "path": str(path)})
    print(f"{len(files)} files", file=sys.stderr)
    for row, got in zip(files, _run_tasks([("oracle", f["path"]) for f in files])):
        row.update(got)
    loaded = [f for f in files if f.get("oracle")]
    for row, got in zip(loaded, _run_tasks([("coopsim", f["path"]) for f in loaded])):
        row.update(got)
    return files


def _bodiless(row: dict) -> bool:
    """MuJoCo compiled the file to a model without a body: no robot."""
    return bool(row.get("oracle")) and row.get("bodies") == 0


def _why(row: dict) -> str:
    """A refusal's reason, the file's folder taken off its paths."""
    why = row.get("why", "")
    why = why.replace(str(Path(row["path"]).parent) + "/", "")
    top = row["path"][:-len(row["file"])]  # the package's folder on this machine
    why = why.replace(top, f"{row['package']}/")
    return re.sub(r"^\S*robot\.scenario:\d+: ", "(at the scenario's line) ", why)


def sweep_table(rows: list[dict]) -> str:
    """The sweep's summary per package, then every file coopsim refuses or MuJoCo/PyBullet
    refuses."""
    out = ["| package | files | MuJoCo/PyBullet load | coopsim loads | % | with joints: "
           "coopsim loads | load CPU median / largest (s) |", "|---|---|---|---|---|---|---|"]
    total = [0, 0, 0, 0, 0]
    for name in dict.fromkeys(r["package"] for r in rows):
        mine = [r for r in rows if r["package"] == name and not _bodiless(r)]
        ok = [r for r in mine if r.get("oracle")]
        ours = [r for r in ok if r.get("loads")]
        moving = [r for r in ok if r.get("joints")]
        cpus = sorted(r["cpu"] for r in ours)
        counts = (len(mine), len(ok), len(ours), len(moving),
                  sum(bool(r.get("loads")) for r in moving))
        total = [a + b for a, b in zip(total, counts)]
        out.append(f"| {name} | {counts[0]} | {counts[1]} | {counts[2]} | "
                   f"{100 * counts[2] / max(1, counts[1]):.1f} | {counts[4]} of {counts[3]} | "
                   + (f"{cpus[len(cpus) // 2]:.2f} / {cpus[-1]:.2f} |" if cpus else "— |"))
    out.append(f"| all | {total[0]} | {total[1]} | {total[2]} | "
               f"{100 * total[2] / max(1, total[1]):.1f} | {total[4]} of {total[3]} | |")
    out += ["", "Refused by coopsim (MuJoCo or PyBullet loads them):", "",
            "| package | file | why |", "|---|---|---|"]
    out += [f"| {r['package']} | {r['file']} | {_why(r)[:220]} |" for r in rows
            if r.get("oracle") and not r.get("loads") and not _bodiless(r)]
    out += ["", "Not robots: MuJoCo compiles them to a model without a body (an arena, a "
            "scene of static geoms, a file of defaults; not counted):", ""]
    out.append(", ".join(f"{r['package']} {r['file']}" for r in rows if _bodiless(r)) + ".")
    out += ["", "Refused by MuJoCo or PyBullet themselves (not counted):", "",
            "| package | file | why |", "|---|---|---|"]
    out += [f"| {r['package']} | {r['file']} | "
            f"{_why({**r, 'why': r.get('oracle_why', r.get('why', ''))})[:200]} |"
            for r in rows if not r.get("oracle")]
    return "\n".join(out)


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        _worker(sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="package/robot rows to run (default all); "
                        "with --sweep, parts of the files' package/path to sweep")
    parser.add_argument("--packages", help="a folder of unpacked wheels")
    parser.add_argument("--images", help="a folder for each robot's image")
    parser.add_argument("--sweep", action="store_true",
                        help="every description file of the packages, loads only")
    parser.add_argument("--save", help="--sweep: keep the rows in this JSON file")
    parser.add_argument("--rows", help="--sweep: the table of rows kept (no run)")
    parser.add_argument("--write", action="store_true", help="write the table into the docs")
    args = parser.parse_args()
    if args.sweep:
        rows = (json.loads(Path(args.rows).read_text()) if args.rows
                else sweep(args.packages, args.names))
        if args.save:
            Path(args.save).write_text(json.dumps(rows, indent=0))
        text = sweep_table(rows)
        print(text)
        if args.write:
            write(text, SWEEP_BEGIN, SWEEP_END)
        return
    chosen = [r for r in ROBOTS if not args.names or f"{r.package}/{r.name}" in args.names]
    if args.images:
        os.makedirs(args.images, exist_ok=True)
    text = table(survey(chosen, args.packages, args.images))
    print(text)
    if args.write:
        write(text)


if __name__ == "__main__":
    main()
