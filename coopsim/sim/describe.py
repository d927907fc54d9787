"""``World.describe()``: the world as the JSON layout ``/sim state`` answers and recordings keep.

docs/protocol.md section 5 lists every field. Everything a viewer needs to draw is here: shapes,
sizes, colours and poses, the robot types' and modules' drawing hints, and the names of the
per-robot columns the state stream carries.
"""

from __future__ import annotations

from ..model.armstate import arm_document
from ..model.module import declaration
from ..model.plugins import (MODULES, ROBOT_TYPES, carried_modules, snapshot_columns,
                             stream_columns)
from ..model.scenerydoc import scenery_document
from ..model.snapshot import wrap_angle, wrapped_poses
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
