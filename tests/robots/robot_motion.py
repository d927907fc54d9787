"""The motion checks, one per kind of robot, on description files as installed
(example-robot-data): each writes a scenario in a temporary folder, runs coopsim in-process in
lockstep on the ``mujoco`` engine and returns its figures (the table script and the tests
call them; docs/robots.md states the figures).

    PYTHONPATH=. python tests/robots/robot_motion.py [wheeled|multirotor|legged|humanoid|all]

* :func:`check_wheeled`: 10 s at rest (the pose's drift, mm and degrees), 2 m straight on
  equal wheel commands and a 90-degree turn on the spot (odometry against the pose: % of the
  distance, degrees). Goals: 0 mm, 0 deg; <= 1 %; <= 1 deg.
* :func:`check_planar`: the same on a planar base (``base planar``: PR2's casters) driven by
  the ``velocity`` module, and 1 m sideways after the straight leg.
* :func:`check_multirotor`: hover at 1 m (the largest height error over the last 3 s of 12, m;
  the position loop's integral takes some seconds to settle a heavy airframe's hover) and
  the ``flight`` driver's eight (mean horizontal error, m), from rest on its lowest point
  (:func:`resting_height`). Goals: <= 0.02 m; <= 0.1 m.
* :func:`check_legged`: stands 10 s from its stance (base height against the nominal one, m;
  joints past their limits). Goals: within 0.02 m; none.
* :func:`check_humanoid`: the base fixed, every held joint sent a target within its limits
  (``servos.set_targets``): the largest tracking error after 2 s, rad.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

PACKAGE = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / \
    "site-packages" / "cmeel.prefix" / "share" / "example-robot-data" / "robots"


def robots_folder() -> Path | None:
    """example-robot-data's ``robots`` folder as installed, or None."""
    try:
        import example_robot_data  # noqa: F401 -- its presence; the files are cmeel's
    except ImportError:
        pass
    for base in map(Path, sys.path):
        found = base / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if found.is_dir():
            return found
    return PACKAGE if PACKAGE.is_dir() else None


def _run(lines: list[str], folder: Path, dt: float, name: str = "s"):
    """A lockstep simulation of one robot section (``lines``) on a 12 m floor."""
    from coopsim.formats.files import load
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    (folder / "w.world").write_text("[FLOOR]\nsize 12 12 0.1\n")
    path = folder / f"{name}.scenario"
    path.write_text("\n".join(["[WORLD]", "file w.world", "[SETTINGS]", "engine mujoco",
                               f"dt {dt}", "mode lockstep", "seed 3", "[ROBOT_1]"] + lines)
                    + "\n")
    sim = Simulation(load(str(path)))
    return sim, Stepper(sim, mode="lockstep")


def _search(urdf: Path, search) -> list[str]:
    """The section's ``search`` line: the folders given, else example-robot-data's own
    (its files name meshes ``package://example-robot-data/robots/...``)."""
    folders = [str(f) for f in search]
    if not folders and robots_folder() is not None:
        folders = [str(robots_folder().parent)]
    return [f"search {' '.join(folders)}"] if folders else []


def check_wheeled(urdf, left: str, right: str, search=(), dt: float = 0.02) -> dict:
    """Rest, 2 m straight and a 90-degree turn of a differential base (module doc)."""
    from coopsim.sim.drivers import LocalRobot

    with tempfile.TemporaryDirectory() as tmp:
        sim, stepper = _run([f"description {urdf}", "name rb", "position 0 0 0",
                             *_search(urdf, search), f"wheels {left} {right}"], Path(tmp), dt)
        bot = LocalRobot(sim, "rb")

        def drive(seconds: float, l: float, r: float):
            bot.motors.set_speeds(l, r)
            for _ in range(int(round(seconds / dt))):
                snap = stepper.tick()
            return snap.poses[0].copy(), np.array(snap.reading("rb", "odometry"))

        rest, _ = drive(10.0, 0.0, 0.0)
        speed = min(0.4, 0.8 * bot.params("motors")["max_speed"])
        drive(2.0 / speed, speed, speed)
        pose, odo = drive(2.0, 0.0, 0.0)
        straight = float(np.hypot(*(pose[:2] - odo[:2])) / max(np.hypot(*pose[:2]), 1e-9))
        axle = sim.world.robot("rb").axle
        turn_v = min(0.2, speed)
        drive((math.pi / 2) * axle / (2 * turn_v), -turn_v, turn_v)
        after, odo2 = drive(2.0, 0.0, 0.0)
        turned = math.degrees(after[2] - pose[2])
        off = math.degrees(abs((after[2] - pose[2]) - (odo2[2] - odo[2])))
    out = {"rest_mm": float(np.hypot(*rest[:2]) * 1000), "rest_deg": math.degrees(abs(rest[2])),
           "distance_m": float(np.hypot(*pose[:2])), "straight_pct": straight * 100,
           "turned_deg": turned, "turn_deg": off}
    out["ok"] = (out["rest_mm"] < 0.5 and out["rest_deg"] < 0.05 and out["straight_pct"] <= 1
                 and out["turn_deg"] <= 1)
    out["figure"] = (f"rest 10 s {out['rest_mm']:.3f} mm {out['rest_deg']:.4f} deg; "
                     f"{out['distance_m']:.2f} m straight: odometry {out['straight_pct']:.3f} % "
                     f"off; {turned:.1f} deg turn: {off:.3f} deg off")
    return out


def check_planar(urdf, search=(), dt: float = 0.02) -> dict:
    """Rest, 2 m straight ahead, 1 m to the left and a 90-degree turn on the spot of a
    planar base (``base planar``: PR2's casters) on its velocity module, each followed by
    2 s at rest (module doc; the same figures as :func:`check_wheeled`'s, and the sideways
    leg's)."""
    from coopsim.sim.drivers import LocalRobot

    with tempfile.TemporaryDirectory() as tmp:
        sim, stepper = _run([f"description {urdf}", "name rb", "position 0 0 0",
                             *_search(urdf, search), "base planar"], Path(tmp), dt)
        bot = LocalRobot(sim, "rb")

        def drive(seconds: float, vx: float, vy: float, w: float):
            bot.velocity.set_velocity(vx, vy, w)  # world frame: the base starts at yaw 0
            for _ in range(int(round(seconds / dt))):
                snap = stepper.tick()
            return snap.poses[0].copy(), np.array(snap.reading("rb", "odometry"))

        rest, _ = drive(10.0, 0.0, 0.0, 0.0)
        speed = 0.4
        drive(2.0 / speed, speed, 0.0, 0.0)
        pose, odo = drive(2.0, 0.0, 0.0, 0.0)
        drive(1.0 / speed, 0.0, speed, 0.0)
        side, odo1 = drive(2.0, 0.0, 0.0, 0.0)
        rate = 0.5
        drive((math.pi / 2) / rate, 0.0, 0.0, rate)
        after, odo2 = drive(2.0, 0.0, 0.0, 0.0)
    travel = float(np.hypot(*pose[:2])) + float(np.hypot(*(side[:2] - pose[:2])))
    off = max(float(np.hypot(*(pose[:2] - odo[:2]))), float(np.hypot(*(side[:2] - odo1[:2]))))
    turned = math.degrees(after[2] - side[2])
    out = {"rest_mm": float(np.hypot(*rest[:2]) * 1000), "rest_deg": math.degrees(abs(rest[2])),
           "distance_m": float(np.hypot(*pose[:2])), "straight_pct": off / travel * 100,
           "drift_mm": abs(float(pose[1])) * 1000, "turned_deg": turned,
           "turn_deg": math.degrees(abs((after[2] - side[2]) - (odo2[2] - odo1[2])))}
    out["ok"] = (out["rest_mm"] < 0.5 and out["rest_deg"] < 0.05 and out["straight_pct"] <= 1
                 and out["turn_deg"] <= 1 and out["drift_mm"] <= 5)
    out["figure"] = (f"rest 10 s {out['rest_mm']:.3f} mm {out['rest_deg']:.4f} deg; "
                     f"{out['distance_m']:.2f} m straight ({out['drift_mm']:.3f} mm aside) and "
                     f"1 m sideways: odometry {out['straight_pct']:.3f} % off; {turned:.1f} deg "
                     f"turn: {out['turn_deg']:.3f} deg off")
    return out


#: The flight driver's inner gains for an airframe of a metre's size (the Crazyflie-tuned
#: defaults, rate 60 and attitude 12 1/s, ask a 1.5 kg Iris for 6 times the angular
#: acceleration its rotors give: they saturate and it flips).
LARGE_GAINS = "rate_gain 20 att_gain 6"


def hexa_lines(arm: float = 0.25, tilt_deg: float = 20.0) -> list[tuple]:
    """Six rotor lines round the centre (30 + 60 k degrees), each tilted ``tilt_deg``
    sideways about its arm, alternately one way and the other, spins alternating."""
    out = []
    for k in range(6):
        phi, tilt = math.radians(30 + 60 * k), math.radians(tilt_deg) * (1 if k % 2 else -1)
        axis = (-math.sin(phi) * math.sin(tilt), math.cos(phi) * math.sin(tilt), math.cos(tilt))
        out.append((round(arm * math.cos(phi), 6), round(arm * math.sin(phi), 6), 0.0,
                    *(round(a, 6) for a in axis), "ccw" if k % 2 else "cw"))
    return out


def plus_lines(arm: float = 0.215) -> list[tuple]:
    """Four rotor lines of a + frame (front, left, back, right), spins alternating."""
    return [(arm, 0.0, 0.0, 0, 0, 1, "cw"), (0.0, arm, 0.0, 0, 0, 1, "ccw"),
            (-arm, 0.0, 0.0, 0, 0, 1, "cw"), (0.0, -arm, 0.0, 0, 0, 1, "ccw")]


#: Borinot's six rotors as its authors' description gives them (hidro_robots,
#: ``robots/borinot/xacro/definition.urdf.xacro``: the ``rotor`` macros, hub x y z in the base
#: link's frame, m, thrust along +z, spin; the flying-arm file example-robot-data ships
#: leaves them out): a hexa frame of radius 0.185 m, 0.05 m above the base link's origin.
BORINOT = ((0.0, -0.185, "cw"), (0.0, 0.185, "ccw"), (0.1602146997, 0.0925, "cw"),
           (-0.1602146997, -0.0925, "ccw"), (0.1602146997, -0.0925, "ccw"),
           (-0.1602146997, 0.0925, "cw"))


def borinot_lines() -> list[tuple]:
    """Borinot's six rotor lines (:data:`BORINOT`)."""
    return [(x, y, 0.05, 0, 0, 1, spin) for x, y, spin in BORINOT]


def _geom_bottom(model, data, g: int) -> float | None:
    """The lowest z (m, world frame) of MuJoCo geom ``g`` as posed in ``data``; None for a
    kind without a bottom (a plane)."""
    import mujoco

    rot, pos, size, kind = data.geom_xmat[g].reshape(3, 3), data.geom_xpos[g], \
        model.geom_size[g], model.geom_type[g]
    if kind == mujoco.mjtGeom.mjGEOM_MESH:  # the vertices MuJoCo collides with (hull's)
        first, n = model.mesh_vertadr[model.geom_dataid[g]], \
            model.mesh_vertnum[model.geom_dataid[g]]
        return float((model.mesh_vert[first:first + n] @ rot[2] + pos[2]).min())
    if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        return float(pos[2] - size[0])
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        return float(pos[2] - np.abs(rot[2]) @ size)
    if kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
        return float(pos[2] - abs(rot[2, 2]) * size[1] - size[0])
    if kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
        return float(pos[2] - abs(rot[2, 2]) * size[1] - size[0] * np.hypot(*rot[2, :2]))
    return None


def resting_height(urdf, posture: dict | None = None) -> tuple[float, str]:
    """(the root link's height, m, that puts the robot's lowest collision point on the floor,
    its root level; the link that point is on) in ``posture`` ({joint: rad or m}, the rest
    at 0): the collision geometry as coopsim gives it to MuJoCo (meshes as their vertices)."""
    import mujoco

    from coopsim.formats.description import load_description
    from coopsim.description.robot import DescriptionSpec
    from coopsim.physics.mujoco.imported import description_spec

    model = description_spec(load_description(DescriptionSpec(str(urdf)))).compile()
    data = mujoco.MjData(model)
    for name, value in (posture or {}).items():
        joint = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if joint >= 0:
            data.qpos[model.jnt_qposadr[joint]] = value
    mujoco.mj_kinematics(model, data)
    low = [(_geom_bottom(model, data, g), g) for g in range(model.ngeom)
           if model.geom_contype[g] or model.geom_conaffinity[g]]  # visual geoms: 0, 0
    z, g = min((z, g) for z, g in low if z is not None)
    return -z, mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, model.geom_bodyid[g])


def check_multirotor(urdf, rotors=(), spin=(), lines=(), search=(), dt: float = 0.005,
                     seconds: float = 16.0, gains: str = LARGE_GAINS) -> dict:
    """Hover at 1 m, then the flight driver's eight (module doc), from rest on its lowest
    point (:func:`resting_height`: a flying arm's hanging arm; set at the floor, its
    geometry 0.35 m into it, it was thrown up and flipped)."""
    start = max(0.0, resting_height(urdf)[0])
    keys = [f"description {urdf}", "name mr", f"position 0 0 {start!r}",
            *_search(urdf, search)]
    keys += [f"rotors {' '.join(rotors)}"] if rotors else []
    keys += [f"rotor {' '.join(map(str, row))}" for row in lines]
    keys += [f"spin {' '.join(spin)}"] if spin else []
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        sim, stepper = _run(keys + [f"driver flight shape hover height 1 {gains}"], Path(tmp),
                            dt, "h")
        z = [stepper.tick().pose3d[0, 2] for _ in range(int(round(12.0 / dt)))]
        out["hover_m"] = float(np.abs(np.array(z[-int(3.0 / dt):]) - 1.0).max())
        sim, stepper = _run(keys + ["driver flight shape eight size 0.8 period 6 takeoff 2 "
                                    f"height 1 {gains}"], Path(tmp), dt, "e")
        where, refs = [], []
        for _ in range(int(round(seconds / dt))):
            snap = stepper.tick()
            where.append(snap.pose3d[0, :3].copy())
            refs.append(snap.commands["rotors"][0, 5:8].copy())
    lap = slice(int(round(2.0 / dt)), None)
    error = np.linalg.norm(np.array(where)[lap, :2] - np.array(refs)[lap, :2], axis=1)
    out["eight_m"] = float(error.mean())
    out["ok"] = out["hover_m"] <= 0.02 and out["eight_m"] <= 0.1
    out["figure"] = (f"hover at 1 m: {out['hover_m'] * 100:.2f} cm worst (last 3 s); eight: "
                     f"{out['eight_m'] * 1000:.1f} mm mean horizontal error")
    return out


def srdf_stance(srdf, state: str = "standing") -> tuple[dict[str, float], float]:
    """({joint: value}, the base's height, m) of an SRDF ``group_state`` (its floating
    ``root_joint``'s z; 0 when it has none)."""
    root = ET.parse(srdf).getroot()
    for found in root.iter("group_state"):
        if found.get("name") == state:
            values = {j.get("name"): j.get("value", "").split() for j in found.iter("joint")}
            height = next((float(v[2]) for v in values.values() if len(v) == 7), 0.0)
            return {k: float(v[0]) for k, v in values.items() if len(v) == 1}, height
    raise ValueError(f"{srdf} has no group_state {state!r}")


def check_legged(urdf, stance: dict, height: float, search=(), dt: float = 0.005,
                 seconds: float = 10.0) -> dict:
    """Stand ``seconds`` from ``stance`` dropped from ``height`` + 2 cm (module doc)."""
    from coopsim.sim.drivers import LocalRobot

    words = " ".join(f"{k} {float(v)!r}" for k, v in stance.items())  # :g rounded past limits
    with tempfile.TemporaryDirectory() as tmp:
        sim, stepper = _run([f"description {urdf}", "name lg", f"position 0 0 {height + 0.02}",
                             "base floating", *_search(urdf, search), f"stance {words}"],
                            Path(tmp), dt)
        bot = LocalRobot(sim, "lg", control=False)
        zs, q = [], []
        for _ in range(int(round(seconds / dt))):
            snap = stepper.tick()
            zs.append(snap.pose3d[0, 2])
            q.append(np.array(snap.reading("lg", "posture"))[1:])
        described = sim.world.robot("lg")
        kind = type(sim).__module__  # noqa: F841 -- the type's held joints below
        from coopsim.model.plugins import ROBOT_TYPES

        robot_type = ROBOT_TYPES.get(described.type)
        moving = robot_type.DESCRIPTION.moving
        del bot
    q = np.array(q)[:, :len(moving)]
    seen, moving = len(moving), moving[:q.shape[1]]  # posture reads 32 (Centauro has 39)
    lower = np.array([j.lower for j in moving])
    upper = np.array([j.upper for j in moving])
    beyond = ((q < lower - 1e-3) | (q > upper + 1e-3)).any(axis=0)
    past = int(beyond.sum())
    names = [moving[k].name for k in np.flatnonzero(beyond)]
    zs = np.array(zs)
    settled = zs[int(round(1.0 / dt)):]
    out = {"height_m": float(settled.mean()), "nominal_m": height,
           "worst_m": float(np.abs(settled - height).max()), "past_limits": past,
           "final_m": float(zs[-1])}
    out["ok"] = out["worst_m"] <= 0.02 and past == 0
    out["figure"] = (f"stands {seconds:g} s: base {out['final_m']:.3f} m (nominal "
                     f"{height:.3f} m, worst {out['worst_m'] * 100:.2f} cm off after 1 s), "
                     f"{past} joints past their limits" + (f" ({', '.join(names)})" if names
                                                            else "")
                     + (f" (of the first {len(moving)} of its {seen} joints, the posture "
                        "reading's)" if seen > len(moving) else ""))
    return out


def described_joints(urdf) -> set[str]:
    """Names of the revolute, continuous and prismatic joints of an URDF (a stance's filter:
    an SRDF names the full robot's joints, a reduced file has fewer)."""
    root = ET.parse(urdf).getroot()
    return {j.get("name") for j in root.iter("joint")
            if j.get("type") in ("revolute", "continuous", "prismatic")}


def check_humanoid(urdf, search=(), dt: float = 0.005, fraction: float = 0.3) -> dict:
    """The base fixed 1.2 m up, every held joint to ``fraction`` of the way from its home
    towards its upper limit (at most 0.5 rad away): the largest error after 2 s, rad."""
    from coopsim.model.plugins import ROBOT_TYPES
    from coopsim.sim.drivers import LocalRobot

    with tempfile.TemporaryDirectory() as tmp:
        sim, stepper = _run([f"description {urdf}", "name hu", "position 0 0 1.2",
                             "base fixed", *_search(urdf, search)], Path(tmp), dt)
        servos = ROBOT_TYPES.get(sim.world.robot("hu").type).SERVOS[:32]
        targets = [s.home + min(0.5, fraction * (min(s.upper, s.home + 1.5) - s.home))
                   for s in servos]
        targets = _mimicked(urdf, servos, targets)
        bot = LocalRobot(sim, "hu")
        bot.servos.set_targets(*targets)
        for _ in range(int(round(2.0 / dt))):
            snap = stepper.tick()
        names = [j.name for j in ROBOT_TYPES.get(sim.world.robot("hu").type).DESCRIPTION.moving]
        q = np.array(snap.reading("hu", "posture"))[1:]
    got = np.array([q[names.index(s.name)] for s in servos])
    error = np.abs(got - np.array(targets))
    out = {"joints": len(servos), "worst_rad": float(error.max()),
           "worst_joint": servos[int(np.argmax(error))].name,
           "median_rad": float(np.median(error))}
    out["ok"] = out["worst_rad"] <= 0.1  # the servos pull with full effort at 0.1 rad
    out["figure"] = (f"{len(servos)} held joints to targets, base fixed: worst "
                     f"{out['worst_rad']:.4f} rad, median {out['median_rad']:.4f} rad after 2 s")
    return out


def mimics(urdf) -> dict[str, tuple[str, float, float]]:
    """Joint -> (the joint it mimics, multiplier, offset) of an URDF's ``<mimic>`` elements
    (MuJoCo's compiler couples them with an equality constraint)."""
    out = {}
    for joint in ET.parse(urdf).getroot().iter("joint"):
        m = joint.find("mimic")
        if m is not None and m.get("joint"):
            out[joint.get("name")] = (m.get("joint"), float(m.get("multiplier", 1.0)),
                                      float(m.get("offset", 0.0)))
    return out


def _mimicked(urdf, servos, targets: list[float]) -> list[float]:
    """``targets`` with each joint that mimics another held one sent where its coupling puts
    it (multiplier x the other's target + offset): a target of its own fought the coupling
    (the Talos' gripper fingers ended 0.26 rad off); a joint whose follower is past the 32
    joints ``set_targets`` sets stays home (Romeo's hands)."""
    coupled = mimics(urdf)
    index = {s.name: k for k, s in enumerate(servos)}
    out = list(targets)
    for follower, (leader, _, _) in coupled.items():  # one held past the 32 set: it stays
        if follower not in index and leader in index:  # home, so does what it follows
            out[index[leader]] = servos[index[leader]].home
    for k, s in enumerate(servos):
        leader = coupled.get(s.name)
        if leader is not None and leader[0] in index:
            out[k] = min(max(leader[1] * out[index[leader[0]]] + leader[2], s.lower), s.upper)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", nargs="?", default="all")
    args = parser.parse_args()
    robots = robots_folder()
    if robots is None:
        sys.exit("example-robot-data is not installed")
    if args.kind in ("wheeled", "all"):
        print("tiago", check_wheeled(robots / "tiago_description/robots/tiago.urdf",
                                     "wheel_left_joint", "wheel_right_joint")["figure"])
        print("tiago pro (front wheels)", check_wheeled(
            robots / "tiago_pro_description/robots/tiago_pro.urdf", "wheel_front_left_joint",
            "wheel_front_right_joint")["figure"])
        print("pr2 (base planar)", check_planar(robots / "pr2_description/urdf/pr2.urdf")[
            "figure"])
    if args.kind in ("multirotor", "all"):
        print("iris", check_multirotor(robots / "iris_description/robots/iris.urdf",
                                       [f"iris__rotor_{k}" for k in range(4)])["figure"])
        print("hector (+ frame, rotor lines)", check_multirotor(
            robots / "hector_description/robots/quadrotor_base.urdf",
            lines=plus_lines())["figure"])
        print("hextilt (6 tilted rotor lines)", check_multirotor(
            robots / "hextilt_description/urdf/hextilt_flying_arm_5.urdf",
            lines=hexa_lines())["figure"])
        print("borinot (6 rotor lines of its authors' description)", check_multirotor(
            robots / "borinot_description/urdf/borinot_flying_arm_2.urdf",
            lines=borinot_lines())["figure"])
    if args.kind in ("legged", "all"):
        go2 = robots / "go2_description"
        stance, height = srdf_stance(go2 / "srdf/go2.srdf")
        print("go2", check_legged(go2 / "urdf/go2.urdf", stance, height)["figure"])
    if args.kind in ("humanoid", "all"):
        talos = robots / "talos_data/robots/talos_reduced.urdf"
        print("talos, base fixed", check_humanoid(talos)["figure"])
        stance, height = srdf_stance(robots / "talos_data/srdf/talos.srdf", "half_sitting")
        stance = {k: v for k, v in stance.items() if k in described_joints(talos)}
        print("talos, standing", check_legged(talos, stance, height)["figure"])


if __name__ == "__main__":
    main()
