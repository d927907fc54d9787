"""``World.describe()``: the world as the JSON layout ``/sim state`` answers and recordings keep.

Its keys are declared below (:data:`LAYOUT_KEYS`, listed by docs/reference/state.md).
Everything a viewer needs to draw is here: shapes, sizes, colours and poses, the robot types'
and modules' drawing hints, and the names of the per-robot columns the state stream carries.
"""

from __future__ import annotations

from ..model.armstate import arm_document
from ..model.module import declaration
from ..model.plugins import (MODULES, ROBOT_TYPES, carried_modules, snapshot_columns,
                             stream_columns)
from ..model.linkposes import LINKS_KEYS
from ..model.scenerydoc import SCENERY_KEYS, scenery_document
from ..model.snapshot import wrap_angle, wrapped_poses
from ..model.statedoc import DocKey
from ..model.specs import RobotSpec


def describe_world(world) -> dict:
    """The layout of ``world`` (SI units, radians, yaw wrapped to (-pi, pi], colours as
    [R, G, B] 0-255)."""
    state = world.engine.robot_state() if world.robots else None
    objects = []
    for name, (spec, handle) in world.objects.items():
        x, y, yaw = world.engine.poses([handle])[0]
        objects.append({"name": name, "shape": spec.shape, "size": list(spec.size),
                        "x": x, "y": y, "z": spec.position[2], "yaw": float(wrap_angle(yaw)),
                        "mass": spec.mass, "color": list(spec.color)})
    robots = []
    for i, r in enumerate(world.robots):
        members = world.sections[r.section].members
        robots.append({
            "name": r.name, "type": r.type, "section": r.section,
            "team": r.section if len(members) > 1 else None, "color": list(r.color),
            "radius": r.radius, "x": float(state[i, 0]), "y": float(state[i, 1]),
            "yaw": float(wrap_angle(state[i, 2])), "modules": list(r.modules),
            "controller": r.controller,
            "driver": r.driver[0] if r.driver else None,
            "draw": dict(ROBOT_TYPES.get(r.type).draw)})
        robots[-1]["axle"] = r.axle  # protocol 10: m between driven wheels (teleop)
        arm = r.info.arm if r.info is not None else None
        if arm is not None:  # protocol 6: the arm's spec, to draw its links from the angles
            robots[-1]["arm"] = arm_document(arm)
        links = _links(world, r)
        if links is not None:  # protocol 10: a described robot's links, drawn link by link
            robots[-1]["links"] = links
    parts = [{"name": p.name, "section": p.section, "color": list(p.color), "x": x, "y": y,
              "yaw": float(wrap_angle(yaw)), "shapes": [s.describe() for s in p.shapes]}
             for p, (x, y, yaw) in zip(world.parts, world.part_poses().tolist())]
    targets = [{"index": i, "color": t.color, "rgb": list(t.rgb), "x": t.position[0],
                "y": t.position[1], "z": t.position[2]} for i, t in enumerate(world.targets)]
    zones = [{"name": z.name, "kind": z.kind, "polygon": [list(v) for v in z.polygon],
              "color": list(z.color)} for z in world.zones]
    squads = [{"name": q.name, "robots": list(q.robots), "formation": q.formation,
               "spacing": q.spacing, "team": q.team, "radius": q.radius} for q in world.squads]
    used = carried_modules(r.modules for r in world.robots)
    doc = {"floor": {"length": world.floor.length, "width": world.floor.width},
            "objects": objects, "robots": robots, "parts": parts, "targets": targets,
            "zones": zones, "squads": squads,
            "sections": [{"name": n, "type": s.spec.type} for n, s in world.sections.items()],
            "layout_version": world.layout_version, "engine": world.engine_label,
            "types": buildable_types(type(world.engine)),
            "modules": {label: declaration(MODULES.get(label)) for label in used},
            # protocol 8: the streamed columns of the modules some robot carries
            "columns": [c.name for _, c in stream_columns(used)]}
    scenery = scenery_document(getattr(world, "meshes", ()), getattr(world, "terrain", None))
    if scenery is not None:  # protocol 9: only a world with meshes or terrain has the key
        doc["scenery"] = scenery
    return doc


def _links(world, robot) -> dict | None:
    """The ``links`` document of a robot from a description file (coopsim.model.linkposes),
    None for any other."""
    mount = robot.refs.get("imported")
    return None if mount is None else world.engine.links_document(mount)


_BUILDABLE: dict = {}  # (engine class, labels) -> the labels it builds: types do not change


def buildable_types(engine) -> list[str]:
    """The registered robot types the engine class ``engine`` can build (a Crazyflie is no
    choice on a 2D engine): what a viewer's robot manager offers for ``insert_robot``."""
    labels = tuple(ROBOT_TYPES.labels())
    key = (engine, labels)
    if key not in _BUILDABLE:
        out = []
        for label in labels:
            try:
                assembly = ROBOT_TYPES.get(label).build(RobotSpec(type=label, name="probe"))
            except Exception:  # noqa: BLE001 -- a plugin that cannot build a probe is listed
                out.append(label)
                continue
            if not engine.refuses_assembly(assembly):
                out.append(label)
        _BUILDABLE[key] = out
    return list(_BUILDABLE[key])


def posed_layout(layout: dict, snap) -> dict:
    """A layout document (live or recorded) with every body moved to its pose in ``snap`` (a
    Snapshot of that layout): what ``/sim state`` answers, live and in replays, without
    describing the world again."""
    out = {k: v for k, v in layout.items() if k not in ("ordinal", "step", "time")}
    for key, poses in (("robots", snap.poses), ("objects", snap.object_poses),
                       ("parts", snap.part_poses)):
        bodies = [dict(b) for b in layout.get(key, ())]
        for body, (x, y, yaw) in zip(bodies, wrapped_poses(poses).tolist()):
            body.update(x=x, y=y, yaw=yaw)
        out[key] = bodies
    if snap.pose3d is not None:  # a 3D world (protocol 5): full pose and twist per robot
        _add_3d(out["robots"], snap)
    marks = snap.extra.get("diverged")
    if marks:  # protocol 7: a robot the run has contained (coopsim.sim.health)
        for body in out["robots"]:
            mark = marks.get(body.get("name"))
            if mark is not None:
                body["diverged"] = mark.as_json()
    if snap.object_pose3d is not None:  # protocol 6: objects' height and orientation
        for body, pose in zip(out["objects"], snap.object_pose3d.tolist()):
            body.update(z=pose[2], quat=pose[3:7])
    out["layout_version"] = snap.layout_version
    # the columns the stream sends with this snapshot (this process' registry, the modules
    # the snapshot's world carries: protocol 8)
    out["columns"] = [c.name for _, c in snapshot_columns(snap)]
    return out


def _add_3d(robots: list, snap) -> None:
    """Each robot's ``z`` (m, world), ``quat`` [w, x, y, z] (body to world) and ``twist``
    [vx, vy, vz (m/s, world frame), wx, wy, wz (rad/s, body frame)] (docs/protocol.md section
    4); only in 3D worlds, so a 2D document stays as protocol 4 wrote it."""
    for body, pose, twist in zip(robots, snap.pose3d.tolist(), snap.twist3d.tolist()):
        body.update(z=pose[2], quat=pose[3:7], twist=twist)


# -- the layout's keys (docs/reference/state.md, generated from these) -------------------------

_POSE = (DocKey("x", "number, m", "world frame"), DocKey("y", "number, m", "world frame"),
         DocKey("yaw", "number, rad", "counter-clockwise from +x, wrapped to (-π, π]"))
_COLOR = DocKey("color", "[R, G, B] 0-255", "its colour")

#: Every key of a robot's entry in ``robots``.
ROBOT_KEYS = (
    DocKey("name", "string", "the robot's name (its endpoint is `/NAME`)"),
    DocKey("type", "string", "its robot type's label"),
    DocKey("section", "string", "the scenario section that made it (`insert_robot` names it)"),
    DocKey("team", "string or null", "the section when it made several robots (a `team2`), "
           "else null"),
    _COLOR,
    DocKey("radius", "number, m", "its footprint radius"),
    *_POSE,
    DocKey("modules", "list of labels", "its modules, in its type's order"),
    DocKey("controller", "string or null", "the command line the run launched for it"),
    DocKey("driver", "string or null", "its in-process driver's label"),
    DocKey("draw", "object", "its robot type's drawing hint (the viewer's)"),
    DocKey("axle", "number, m", "the distance between its driven wheels, 0 for a robot "
           "without: what turns a Twist into wheel speeds", since=10),
    DocKey("arm", "object", "the arm's spec, every field of `ArmSpec` (`links`: each "
           "`LinkSpec`; `gripper`: the `GripperSpec` or null): what draws its links from the "
           "`arm_q` columns", since=6, present="a robot with a 3D arm"),
    DocKey("links", "object", "its kinematic tree and each link's visual shapes, bounded (no "
           "triangle: a mesh is its file's basename); `coopsim.model.linkposes.link_poses` "
           "turns it and the `link_q` columns into each link's world pose", since=10,
           present="a robot from a URDF or MJCF file", fields=LINKS_KEYS),
    DocKey("z", "number, m", "height, world frame", since=5, present="3D worlds"),
    DocKey("quat", "[w, x, y, z]", "orientation, body to world", since=5,
           present="3D worlds"),
    DocKey("twist", "[vx, vy, vz, wx, wy, wz]", "velocity: m/s in the world frame, rad/s in "
           "the body frame", since=5, present="3D worlds"),
    DocKey("diverged", "object", "the steps the run contained it after it diverged "
           "(docs/reliability.md); the last key of the entry", since=7,
           present="a live run's robot that diverged", fields=(
               DocKey("count", "integer", "steps it diverged in so far"),
               DocKey("step", "integer", "the latest's step"),
               DocKey("time", "number, s", "the latest's time"),
               DocKey("first", "number, s", "the first's time"),
               DocKey("why", "string", "the latest's reason: `its angular rate reached "
                      "1012.5 rad/s, beyond the bound of 1000 rad/s`"))),
)

#: Every key of the layout document (``World.describe()``, :func:`posed_layout` adds the
#: poses): what a recording keeps as its layout and ``/sim state`` starts with.
LAYOUT_KEYS = (
    DocKey("floor", "object", "the floor, centred on the origin", fields=(
        DocKey("length", "number, m", "along x"), DocKey("width", "number, m", "along y"))),
    DocKey("objects", "list of objects", "the world's objects, in object order (the state "
           "stream's)", fields=(
        DocKey("name", "string", "its name"),
        DocKey("shape", "string", "`box`, `cylinder` or `sphere`"),
        DocKey("size", "[l, w, h] m", "its size"),
        *_POSE[:2], DocKey("z", "number, m", "its height; in a 3D world its height now (a "
                           "cube an arm lifted)"),
        _POSE[2], DocKey("mass", "number, kg", "0 for a static object"), _COLOR,
        DocKey("quat", "[w, x, y, z]", "orientation, body to world (after `color`)", since=6,
               present="3D worlds"))),
    DocKey("robots", "list of objects", "the robots, in row order (the state stream's)",
           fields=ROBOT_KEYS),
    DocKey("parts", "list of objects", "bodies of a robot type that are no robot (a `team2`'s "
           "bar)", fields=(
        DocKey("name", "string", "`SECTION.KEY`"), DocKey("section", "string", "its section"),
        _COLOR, *_POSE,
        DocKey("shapes", "list of objects", "its shapes, in the part's frame", fields=(
            DocKey("kind", "string", "`circle`, `box` or `poly`"),
            DocKey("radius", "number, m", "a circle's"),
            DocKey("size", "[l, w] m", "a box's"),
            DocKey("vertices", "[[x, y]...] m", "a polygon's"),
            DocKey("offset", "[x, y] m", "the shape's centre in the part's frame"))))),
    DocKey("targets", "list of objects", "the targets, by index", fields=(
        DocKey("index", "integer", "what `update_target` and `remove_target` name"),
        DocKey("color", "string", "its colour's name"),
        DocKey("rgb", "[R, G, B] 0-255", "that colour"),
        DocKey("x", "number, m", ""), DocKey("y", "number, m", ""),
        DocKey("z", "number, m", ""))),
    DocKey("zones", "list of objects", "the scenario's no-go zones (docs/files.md); they do "
           "not collide", fields=(
        DocKey("name", "string", ""), DocKey("kind", "string", "`water`, `border` or `nogo`"),
        DocKey("polygon", "[[x, y]...] m", "its outline"), _COLOR)),
    DocKey("squads", "list of objects", "the scenario's squads (docs/protocol.md section 9)",
           fields=(
        DocKey("name", "string", ""), DocKey("robots", "list of names", "its members"),
        DocKey("formation", "string", "its default formation"),
        DocKey("spacing", "number, m", "between members"),
        DocKey("team", "string", "the side it plays for in a game, \"\" for none"),
        DocKey("radius", "number or null, m", "a circle's or half circle's; null for the "
               "library's n × spacing"))),
    DocKey("sections", "list of objects", "the scenario's robot sections: `{name, type}`, "
           "what insert/update/remove_robot name"),
    DocKey("layout_version", "integer", "changes on every insertion, update, removal, load or "
           "reset; the state stream's `params[1]`"),
    DocKey("engine", "string", "the physics engine's label"),
    DocKey("types", "list of labels", "every registered robot type this run's engine can "
           "build (what `insert_robot` takes; a 2D engine leaves out the flying types)",
           since=5),
    DocKey("modules", "label -> object", "each module kind in use: `{label, description, "
           "commands, fields, draw}`; `commands` are the robot `commands` reply's lines, "
           "`draw` the viewer's hint (`{kind: \"rays\", angles, columns, origin, color}` for "
           "sonar) or null"),
    DocKey("columns", "list of names", "the state stream's per-robot columns, in stream "
           "order: the streamed columns of the modules some robot of this world carries, so "
           "they belong to this `layout_version` (a 2D swarm of sonar robots: `sonar0` .. "
           "`sonar10`; a Crazyflie world: `rotor_w1` .. `rotor_w4`; docs/protocol.md section "
           "5)", since=8),
    DocKey("scenery", "object", "the world's meshes and terrain, without triangles "
           "(`/sim` 27 `mesh` serves them)", since=9,
           present="a world with `[MESH_n]` or `[TERRAIN]` sections", fields=SCENERY_KEYS),
)
