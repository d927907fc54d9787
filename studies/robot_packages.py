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
  height up at the end (a robot that falls over, or onto its belly as pybullet's Minitaur
  without its knee loops, fails);
* anything else: 2 s of steps held, its root link's drift.

Run: ``PYTHONPATH=. python studies/robot_packages.py [--packages DIR] [--images DIR]
[--write] [NAME ...]`` (NAME: a row's package/robot, e.g. ``pybullet/kuka_iiwa``).
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
    # y up (pybullet's examples load it turned by 180 degrees about (0, 1, 1); a section
    # turns a robot about z only): on its side
    Robot("pybullet", "laikago_yup", "laikago/laikago.urdf", ("base floating",), 0.6,
          True),
    Robot("pybullet", "minitaur", "quadruped/minitaur.urdf", ("base floating",), 0.3,
          True),
    Robot("pybullet", "husky", "husky/husky.urdf", ("base floating",), 0.2),
    Robot("pybullet", "racecar", "racecar/racecar.urdf", ("base floating",), 0.1),
    Robot("robosuite", "ur5e", "models/assets/robots/ur5e/robot.xml", ("tool right_hand",)),
    Robot("robosuite", "sawyer", "models/assets/robots/sawyer/robot.xml",
          ("tool right_hand",)),
    Robot("robosuite", "panda", "models/assets/robots/panda/robot.xml", ("tool right_hand",)),
    Robot("robosuite", "spot", "models/assets/robots/spot/robot.xml", ("base floating",), 0.7,
          True),
    Robot("dm_control", "quadruped", "suite/quadruped.xml", ("base floating",), 0.6,
          True),
    Robot("dm_control", "reacher", "suite/reacher.xml", ("tool finger",)),
    Robot("dm_control", "humanoid", "suite/humanoid.xml", ("base floating",), 1.4),
    Robot("gymnasium_robotics", "fetch_reach", "envs/assets/fetch/reach.xml"),
    Robot("gymnasium_robotics", "shadow_hand", "envs/assets/hand/reach.xml"),
)


def package_folder(name: str, extra: str | None) -> Path | None:
    """The package's data folder: installed (found without importing it), else under
    ``extra`` (unpacked wheels), else None. pybullet's robots are in ``pybullet_data``."""
    module = "pybullet_data" if name == "pybullet" else name
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
    import coopsim.physics.mujoco_engine  # noqa: F401 -- its import is not the robot's load
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


def write(text: str) -> None:
    """Put ``text`` between the markers of docs/experiments/robot-files.md."""
    doc = DOC.read_text()
    head, _, rest = doc.partition(BEGIN)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="package/robot rows to run (default all)")
    parser.add_argument("--packages", help="a folder of unpacked wheels")
    parser.add_argument("--images", help="a folder for each robot's image")
    parser.add_argument("--write", action="store_true", help="write the table into the docs")
    args = parser.parse_args()
    chosen = [r for r in ROBOTS if not args.names or f"{r.package}/{r.name}" in args.names]
    if args.images:
        os.makedirs(args.images, exist_ok=True)
    text = table(survey(chosen, args.packages, args.images))
    print(text)
    if args.write:
        write(text)


if __name__ == "__main__":
    main()
