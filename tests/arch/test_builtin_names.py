"""No built-in plugin is named in the core: the layers below and above ``plugins/`` reach robot
types, modules, drivers, engines, rules and metric kinds through their registries and declarations
(the default engine is the one declaring ``Engine.default``, the batch's the one with the
``batch`` feature),
never by a label written in the code. The test reads every string constant of the core's
source and fails on one that is a built-in plugin's label, except the few listed below, each
with the reason it is not that plugin: a word that happens to be a label, never a back door
(no entry is debt any more: behaviour that needs a plugin goes on the plugin's hooks)."""

from __future__ import annotations

import ast
import functools
from importlib import metadata
from pathlib import Path

from archhelpers import parse, source

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "coopsim"
PLUGIN_GROUPS = ("coopsim.robot_types", "coopsim.modules", "coopsim.drivers", "coopsim.engines",
                 "coopsim.rules", "coopsim.metrics")
NOT_CORE = ("plugins", "swarm")  # the built-in plugins and the library they are built on

#: (file, label): why this string is not the plugin of that name.
ALLOWED = {
    ("model/kernel.py", "pose"): "the frame array a kernel view names (frame.pose), not the module",
    ("model/kernel.py", "velocity"): "the frame array a kernel view names (frame.velocity)",
    ("formats/description.py", "mujoco"): "the MJCF root element's tag (<mujoco>), not the engine",
    ("description/mjcf.py", "velocity"): "MJCF's <velocity> actuator element, not the module",
    ("physics/mujoco/imported.py", "servos"): "the Mounted field of a description's held joints "
                                            "(read with getattr), not the module's label",
    ("app/analyze.py", "tracking"): "the `coopsim analyze tracking` subcommand's name",
    ("app/cli_bench.py", "tracking"): "the `coopsim analyze tracking` subcommand's name",
    ("app/points.py", "monitors"): "the scenario attribute [MONITORS] fills (Rule.section)",
    ("app/controllers.py", "python"): "the interpreter a controller's command line starts",
    ("client/sim.py", "speed"): "the /sim speed factor",
    ("net/simserver.py", "speed"): "the state document's `speed` key (RUN_KEYS): the speed factor",
    ("client/squads.py", "formation"): "a squad order's formation word",
    ("formats/events.py", "target"): "the `insert target` event word",
    ("formats/keys.py", "speed"): "the [SETTINGS] speed key",
    ("formats/keys.py", "formation"): "a squad's formation key",
    ("formats/enginecheck.py", "line"): "the [SETTINGS] section's line, in an error",
    ("conformance/transcript.py", "line"): "a transcript step's gateway line (JSON key)",
    ("formats/games.py", "formation"): "a squad's formation key",
    ("foxglove/layout.py", "events"): "the Foxglove log panel's title",
    ("model/orders.py", "line"): "a squad order's line formation",
    ("model/orders.py", "squad"): "the squad order's word",
    ("model/orders.py", "formation"): "a squad order's formation",
    ("model/robot_type.py", "velocity"): "the velocity drive kind",
    ("model/robot_type.py", "kinematic"): "the kinematic body kind (moved, never pushed)",
    ("physics/pymunk/build.py", "kinematic"): "the kinematic body kind (moved, never pushed)",
    ("physics/engine.py", "velocity"): "the velocity drive feature",
    ("model/robot_type.py", "rotors"): "the rotors drive kind (a body-frame wrench)",
    ("physics/engine.py", "rotors"): "the rotors drive kind an engine needs flight for",
    ("physics/engine.py", "flight"): "the flight engine feature (free 6-DoF bodies)",
    ("sim/simulation.py", "flight"): "the flight engine feature: a 3D world's full state",
    ("sim/snapshots.py", "flight"): "the flight engine feature: a 3D world's object poses",
    ("sim/compose.py", "flight"): "the flight engine feature: a 3D world's full state",
    ("sim/compose.py", "pose"): "the kernel view of the planar poses (model/kernel.py VIEWS)",
    ("sim/compose.py", "velocity"): "the kernel view of the planar velocities (VIEWS)",
    ("sim/describe.py", "formation"): "a squad's formation in the layout",
    ("viewer/app.py", "target"): "the Target panel's key",
    ("client/teleop.py", "mocap"): "the pose reading a hand-flown quadrotor's outer loop closes "
                                   "on, as the flight cascade's input (its drive is found by "
                                   "its commands)",
    ("viewer/connection.py", "speed"): "the /sim speed factor",
    ("viewer/forms.py", "speed"): "the /sim speed factor",
    ("viewer/hud.py", "speed"): "the /sim speed factor",
    ("viewer/panels.py", "target"): "the Target panel's key",
    ("foxglove/scene.py", "leds"): "the `leds` drawing-hint kind (any module may declare it)",
    ("viewer/scene.py", "leds"): "the `leds` drawing-hint kind and its layer",
    ("model/validate.py", "line"): "a parameter setting's file line",
    ("env/batch.py", "events"): "the scenario attribute [EVENT_n] fills (batched worlds refuse it)",
    ("crtp/server.py", "crazyflie"): "the robot type CRTP serves (the Crazyflie's own wire)",
    ("crtp/server.py", "rotors"): "a Crazyflie's motors: the slot its propeller speeds go to",
    ("crtp/server.py", "altimeter"): "the flow deck's ranger: range.zrange where it is carried",
    ("ros2/dds.py", "velocity"): "sensor_msgs/JointState's velocity field",
    ("physics/engine.py", "joints"): "the joints engine feature (pivot and revolute joints)",
    ("ros2/dds.py", "pose"): "a ROS message's field (geometry_msgs/PoseWithCovariance.pose)",
    ("formats/description.py", "tool"): "the [ROBOT_n] tool key of a described robot",
    ("formats/description.py", "gripper"): "the [ROBOT_n] gripper key of a described robot",
    ("formats/description.py", "rotors"): "the [ROBOT_n] rotors key of a described robot",
    ("formats/description.py", "joints"): "a module the tool and gripper keys give a described "
                                          "robot's type (its module list, as a type declares)",
    ("formats/description.py", "force"): "a module the tool and gripper keys give a described "
                                         "robot's type (its module list, as a type declares)",
    ("formats/description.py", "pose"): "a module the tool and gripper keys give a described "
                                        "robot's type (its module list, as a type declares)",
    ("description/arm.py", "gripper"): "the [ROBOT_n] gripper key an arm's error points at",
    ("description/arm.py", "tool"): "the [ROBOT_n] tool key an arm is read from",
    ("description/mobile.py", "rotors"): "the [ROBOT_n] rotors key of a described robot",
    ("description/mobile.py", "velocity"): "a planar base's velocity drive kind (base "
                                              "planar), not the module",
    ("description/robotxml.py", "velocity"): "the URDF <limit velocity> attribute",
    ("description/robotxml.py", "mujoco"): "the MJCF root element and the URDF <mujoco> element",
    ("app/run.py", "external"): "the summary's external robots line, not the rule",
    ("formats/files.py", "external"): "the [ROBOT_n] external key, not the rule",
    ("formats/keys.py", "external"): "the [ROBOT_n] external key, not the rule",
    ("net/network.py", "external"): "/sim state's external robots entry (protocol 10)",
    ("net/robotport.py", "external"): "the external_pose reply's text (protocol 10)",
    ("ros2/bridge.py", "external"): "/sim state's ros2.external counts (protocol 10)",
    ("sim/external.py", "external"): "a robot spec's external attribute",
    ("viewer/connection.py", "external"): "/sim state's external robots entry (protocol 10)",
    ("model/limits.py", "external"): "the reserved robot name of /external (protocol 11)",
    ("net/posechannel.py", "external"): "the external_pose reply's text (protocol 11)",
    ("net/simserver.py", "external"): "insert_robot's external word (protocol 11), not the rule",
    ("model/images.py", "camera3d"): "a published image's camera mount, else the robot's "
                                     "camera3d parameters (ROS 2 /tf, Foxglove's frames)",
    ("client/images.py", "camera3d"): "the read reply that carries images (docs/protocol.md, "
                                      "camera3d), decoded for the client's numpy array",
    ("foxglove/images.py", "camera3d"): "the snapshot's camera3d images (recording format 6's "
                                        "X key), not the module",
    ("ros2/images.py", "camera3d"): "the snapshot's camera3d images (recording format 6's X "
                                    "key) and their topic names, not the module",
    ("recording/feedbackcsv.py", "squad"): "the feedback CSV's squad-name column (recording "
                                           "format 7), not the driver",
}


def builtin_labels() -> dict[str, str]:
    """Label -> entry-point group of every plugin the coopsim distribution registers."""
    out: dict[str, str] = {}
    for group in PLUGIN_GROUPS:
        for ep in metadata.entry_points(group=group):
            if ep.dist is not None and ep.dist.metadata["Name"] == "coopsim":
                out.setdefault(ep.name, group)
    return out


def plugin_files() -> set[Path]:
    """The files the built-ins' entry points name outside ``plugins/``: the engines in
    ``physics/`` (an engine's module is the plugin, as a module's file is)."""
    return {PACKAGE.parent.joinpath(*ep.value.split(":")[0].split(".")).with_suffix(".py")
            for group in PLUGIN_GROUPS for ep in metadata.entry_points(group=group)
            if ep.dist is not None and ep.dist.metadata["Name"] == "coopsim"}


@functools.cache
def named_in_core() -> frozenset[tuple[str, str, int]]:
    labels = builtin_labels()
    plugins = plugin_files()
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in NOT_CORE or path in plugins:
            continue
        for node in ast.walk(parse(source(path))):
            if isinstance(node, ast.Constant) and node.value in labels:
                found.add((rel.as_posix(), node.value, node.lineno))
    return frozenset(found)


def test_the_core_names_no_builtin_plugin():
    assert {"single", "sonar", "motors", "ctf", "monitors", "min_sonar", "pymunk",
            "kinematic"} <= set(builtin_labels())
    assert PACKAGE / "physics" / "pymunk/engine.py" in plugin_files()
    named = sorted(f"coopsim/{f}:{line}: {label!r}" for f, label, line in named_in_core()
                   if (f, label) not in ALLOWED)
    assert named == [], "built-in plugins named in the core:\n" + "\n".join(named)


def test_every_allowance_is_still_needed():
    used = {(f, label) for f, label, _ in named_in_core()}
    assert sorted(set(ALLOWED) - used) == []


def test_no_allowance_is_debt():
    assert [k for k, why in ALLOWED.items() if "DEBT" in why] == []
