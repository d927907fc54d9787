"""What coopsim shows in Foxglove: the scene messages of one step (the topics, their schemas
and the state, metric and event messages: :mod:`coopsim.foxglove.topics`).

A :class:`Scene` is built once per layout (a layout document: ``World.describe()`` live, the
recorded one in a file) and encodes the step's Foxglove messages from a
:class:`~coopsim.model.snapshot.Snapshot`, so the live bridge, a replay and the MCAP export
send the same bytes. Frames (docs/foxglove.md): ``world`` is the floor's frame (x, y on the
floor, z up, m); every robot also has a frame named after it (``/tf``).

In a 3D world (snapshots with ``pose3d``) every pose carries the body's height and full
orientation: each drawn primitive is a 7-slot instance (x, y, z, qx, qy, qz, qw) placed at its
offset in the body's frame, and a robot with the ``rotors`` module is drawn as a rotorcraft
(a flat body and four rotor discs). A 2D world's messages are those of the planar scene.
"""

from __future__ import annotations

import math

import numpy as np

from ..model.capabilities import draw_hint
from ..model.plugins import MODULES
from ..model.polygons import ear_indices
from ..model.snapshot import quat_matrices, yaw_quats
from .proto import (WORLD, Msg, Slot, Template, color, pose, pose3, quaternion, quaternion4,
                    vector3, world_entity)
from .links import link_entities
from .scenery import scenery_entities

ROBOT_HEIGHT = 0.1  # m: the drawn height of a robot's body
TARGET_REACH = 0.5  # m: radius of the disc drawn around a target (at_target's default radius)
RAY_COLOR = (255, 120, 30)
ZONE_ALPHA = 200 / 255  # a zone's fill, as the viewer draws it: the floor shows through a little
ZONE_LINE = 0.03  # m: width of a zone's outline (drawn in its colour at half the brightness)
ROTOR_ARM = 0.5  # a rotorcraft's rotor centres at (+-, +-) this x its radius, body frame
ROTORCRAFT_HEIGHT = 0.03  # m: the drawn thickness of a rotorcraft's body
ROTORCRAFT_TOP = ROTORCRAFT_HEIGHT / 2 + 0.01  # m: a rotorcraft's heading arrow, above its body


class Scene:
    """One layout's templates: the moving scene, the transforms and the robots' poses.

    Args:
        layout: The layout document (docs/protocol.md section 5); its robots, objects and
            parts are in the order of the snapshots it goes with.
        three_d: Draw a 3D world (snapshots with ``pose3d``): real heights and orientations.
        objects3d: The snapshots carry the objects' 3D poses too (``object_pose3d``: a
            3D world): objects are drawn where they are, lifted or stacked.
    """

    def __init__(self, layout: dict, three_d: bool = False, objects3d: bool = False) -> None:
        self.robots = [r["name"] for r in layout.get("robots", ())]
        self._bodies = _Bodies(layout, three_d, three_d and objects3d)
        b = self._bodies
        self.world = Template(_world_update(layout), 0)
        self.scene = Template(b.update, b.slots)
        self.tf = Template(_transforms(self.robots, b.robot_slots, three_d), b.slots)
        # byte range of each robot's PoseInFrame
        msg, self.pose_ranges = _poses(self.robots, b.robot_slots, three_d)
        self.poses = Template(msg, b.slots)

    def fits(self, snap) -> bool:
        """Whether ``snap`` has this layout's bodies (else build a new Scene)."""
        return self._bodies.fits(snap)

    def values(self, snap) -> np.ndarray:
        """The slots' values in ``snap``: every pose instance, then every ray end."""
        return self._bodies.values(snap)


class _Bodies:
    """The moving bodies of a layout: pose instances (a body's pose with an offset) and rays."""

    def __init__(self, layout: dict, three_d: bool = False, objects3d: bool = False) -> None:
        robots, objects = layout.get("robots", ()), layout.get("objects", ())
        parts = layout.get("parts", ())
        self.counts = (len(robots), len(objects), len(parts))
        self.three_d = three_d
        self.objects3d = objects3d  # objects at their object_pose3d (centre), not on the floor
        self._per = 7 if three_d else 4  # slots per pose instance
        # (body, offset x, y, z in the body's frame, m); z only in 3D (2D templates hold it)
        self._inst: list[tuple[int, float, float, float]] = []
        # first slot of each robot's own pose (2D: the robot's row x 4, as ever)
        self.robot_slots: list[int] = [4 * i for i in range(len(robots))]
        self._rays: list[tuple] = []  # (module, robot row, angles, radius, first ray slot)
        self._leds: list[tuple] = []  # (module, robot row, LED index, first colour slot)
        self._ray_count = 0
        entities = [self._robot(i, r, layout) for i, r in enumerate(robots)]
        entities += [self._object(len(robots) + j, o) for j, o in enumerate(objects)]
        base = len(robots) + len(objects)
        entities += [self._part(base + k, p) for k, p in enumerate(parts)]
        ray_slots = self._per * len(self._inst)
        update = Msg().sub(1, Msg().uint(2, 1))  # delete ALL of this topic's entities first
        for entity in entities:
            update.sub(2, entity)
        # ray ends were numbered from 0 while the pose count was unknown: move them after
        update.slots = [(o, s if s >= 0 else ray_slots + (-s - 1)) for o, s in update.slots]
        self.update = update
        self.slots = ray_slots + self._ray_count
        self._group_rays()
        inst = np.array(self._inst, dtype=float).reshape(-1, 4)
        self._body, self._off = inst[:, 0].astype(int), inst[:, 1:]

    def _handle(self, body: int, ox: float = 0.0, oy: float = 0.0) -> tuple:
        """A place on ``body`` at offset (ox, oy) m in its frame, for :meth:`_pose`: in 2D its
        four slots (x, y, qz, qw), taken now; in 3D (body, ox, oy), each pose its own slots."""
        if self.three_d:
            return body, ox, oy
        p = len(self._inst)
        self._inst.append((body, ox, oy, 0.0))
        return tuple(Slot(4 * p + k) for k in range(4))

    def _instance3d(self, body: int, ox: float, oy: float, oz: float) -> int:
        """A 7-slot pose instance at offset (ox, oy, oz) m in ``body``'s frame: its first slot."""
        self._inst.append((body, ox, oy, oz))
        return 7 * (len(self._inst) - 1)

    def _pose(self, handle: tuple, z: float, level: bool = False) -> Msg:
        """A foxglove.Pose at ``handle``, ``z`` m up (2D: above the floor; 3D: along the body's
        z axis from its centre); ``level``: unrotated (texts)."""
        if not self.three_d:
            x, y, qz, qw = handle
            return pose(x, y, z, 0.0, 1.0) if level else pose(x, y, z, qz, qw)
        first = self._instance3d(*handle, z)
        x, y, zs, qx, qy, qz, qw = (Slot(first + k) for k in range(7))
        return pose3(x, y, zs, 0.0, 0.0, 0.0, 1.0) if level else pose3(x, y, zs, qx, qy, qz, qw)

    def _robot(self, i: int, robot: dict, layout: dict) -> Msg:
        if self.three_d:  # its own pose, unshifted: /tf and PoseInFrame
            self.robot_slots[i] = self._instance3d(i, 0.0, 0.0, 0.0)
        h = self._handle(i)
        r = float(robot.get("radius", 0.2))
        rgb = robot.get("color", (200, 200, 200))
        entity = world_entity(f"robot/{robot['name']}")
        rotors = _rotor_count(layout, robot) if self.three_d else 0
        rotorcraft = rotors > 0
        if rotorcraft:
            self._rotorcraft(entity, i, r, rgb, rotors)
        else:
            entity.sub(10, Msg().sub(1, self._pose(h, ROBOT_HEIGHT / 2))
                       .sub(2, vector3(2 * r, 2 * r, ROBOT_HEIGHT)).sub(5, color(rgb)))
        top = ROTORCRAFT_TOP if rotorcraft else ROBOT_HEIGHT + 0.01
        entity.sub(7, Msg().sub(1, self._pose(h, top))
                   .double(2, 0.6 * r).double(3, 0.2 * r).double(4, 0.5 * r)
                   .double(5, 0.45 * r).sub(6, color((250, 250, 250))))
        entity.sub(13, Msg().sub(1, self._pose(h, ROBOT_HEIGHT + 0.3, level=True)).uint(2, 1)
                   .double(3, 14.0).uint(4, 1).sub(5, color((255, 255, 255)))
                   .string(6, robot["name"]))
        for label, angles in _ray_modules(layout, robot):
            entity.sub(11, self._rays_of(i, r, label, angles, h))
        for label, count in _led_modules(layout, robot):
            for k in range(count):
                entity.sub(9, self._led(i, r, label, k, count))
        return entity

    def _led(self, row: int, radius: float, label: str, k: int, count: int) -> Msg:
        """A sphere on the robot's ring for LED ``k`` of ``count``, its colour four slots
        (R, G, B, alpha; alpha 0 while the LED is off) numbered like the rays' ends."""
        a = 2 * math.pi * k / count
        h = self._handle(row, 0.68 * radius * math.cos(a), 0.68 * radius * math.sin(a))
        first = self._ray_count
        self._ray_count += 4
        self._leds.append((label, row, k, first))
        d = 0.44 * radius
        rgba = Msg()
        for n in range(4):
            rgba.double(n + 1, Slot(-(first + n) - 1))
        return Msg().sub(1, self._pose(h, ROBOT_HEIGHT + 0.005)).sub(2, vector3(d, d, d)) \
            .sub(3, rgba)

    def _rotorcraft(self, entity: Msg, row: int, radius: float, rgb, rotors: int) -> None:
        """A rotorcraft at its 3D pose: a flat square body and ``rotors`` rotor discs around
        it, between its axes (four: at the ends of an X frame; body frame: x forward, y left,
        z up)."""
        arm = ROTOR_ARM * radius
        entity.sub(8, Msg().sub(1, self._pose(self._handle(row), 0.0))
                   .sub(2, vector3(arm, arm, ROTORCRAFT_HEIGHT)).sub(3, color(rgb)))
        reach = math.sqrt(2.0) * arm
        for k in range(rotors):
            a = (2 * k + 1) * math.pi / rotors
            place = self._pose(self._handle(row, reach * math.cos(a), reach * math.sin(a)),
                               ROTORCRAFT_HEIGHT / 2)
            d = 0.9 * arm
            entity.sub(10, Msg().sub(1, place).sub(2, vector3(d, d, 0.01)).double(3, 1.0)
                       .double(4, 1.0).sub(5, color((60, 60, 60), 0.6)))

    def _rays_of(self, row: int, radius: float, label: str, angles: np.ndarray, handle) -> Msg:
        """One LINE_LIST from the rim along each ray; each ray's end is a slot pair, numbered
        -1, -2... (ray slots go after the pose slots, whose count is known at the end)."""
        first = self._ray_count
        self._ray_count += 2 * len(angles)
        self._rays.append((label, row, angles, radius, first))
        line = Msg().uint(1, 2).sub(2, self._pose(handle, ROBOT_HEIGHT / 2)).double(3, 0.01)
        for n, a in enumerate(angles):
            line.sub(5, vector3(radius * math.cos(a), radius * math.sin(a), 0.0))
            line.sub(5, vector3(Slot(-(first + 2 * n) - 1), Slot(-(first + 2 * n + 1) - 1), 0.0))
        return line.sub(6, color(RAY_COLOR, 0.7))

    def _group_rays(self) -> None:
        """Robots' rays grouped by module and angles, for one vectorized pass each: (label,
        rows, angles, radii, first ray slot of each row)."""
        groups: dict = {}
        for label, row, angles, radius, first in self._rays:
            key = (label, tuple(angles.tolist()))
            groups.setdefault(key, []).append((row, radius, first))
        self._groups = [(label, np.array([g[0] for g in rows]), np.array(angles),
                         np.array([g[1] for g in rows]), np.array([g[2] for g in rows]))
                        for (label, angles), rows in groups.items()]

    def _object(self, body: int, obj: dict) -> Msg:
        h = self._handle(body)
        size = list(obj.get("size", (0.5, 0.5, 0.5))) + [0.5] * 3
        entity = world_entity(f"object/{obj['name']}")
        centre = 0.0 if self.objects3d else float(obj.get("z", size[2] / 2))
        prim = Msg().sub(1, self._pose(h, centre))
        prim.sub(2, vector3(*size[:3]))
        field = 10 if obj.get("shape") == "cylinder" else 8
        if field == 10:
            prim.double(3, 1.0).double(4, 1.0).sub(5, color(obj.get("color", (150,) * 3)))
        else:
            prim.sub(3, color(obj.get("color", (150, 150, 150))))
        return entity.sub(field, prim)

    def _part(self, body: int, part: dict) -> Msg:
        entity = world_entity(f"part/{part['name']}")
        rgb = part.get("color", (150, 150, 150))
        for shape in part.get("shapes", ()):
            off = list(shape.get("offset", (0.0, 0.0))) + [0.0, 0.0]
            place = self._pose(self._handle(body, float(off[0]), float(off[1])),
                               ROBOT_HEIGHT / 2)
            if shape.get("kind") == "circle":
                d = 2 * float(shape.get("radius", 0.1))
                entity.sub(10, Msg().sub(1, place).sub(2, vector3(d, d, ROBOT_HEIGHT))
                           .double(3, 1.0).double(4, 1.0).sub(5, color(rgb)))
            elif shape.get("kind") == "box":
                sx, sy = (list(shape.get("size", (0.1, 0.1))) + [0.1, 0.1])[:2]
                entity.sub(8, Msg().sub(1, place).sub(2, vector3(sx, sy, ROBOT_HEIGHT))
                           .sub(3, color(rgb)))
            else:  # a polygon: its outline
                line = Msg().uint(1, 1).sub(2, place).double(3, 0.02)
                for vx, vy, *_ in shape.get("vertices", ()):
                    line.sub(5, vector3(vx, vy, 0.0))
                entity.sub(11, line.sub(6, color(rgb)))
        return entity

    def fits(self, snap) -> bool:
        return ((len(snap.robots), len(snap.objects), len(snap.parts)) == self.counts
                and (getattr(snap, "pose3d", None) is not None) == self.three_d
                and (self.three_d and getattr(snap, "object_pose3d", None) is not None)
                == self.objects3d)

    def _instances(self, snap) -> np.ndarray:
        """The pose instances' slot values in ``snap``: 2D x, y, qz, qw each; 3D x, y, z, qx,
        qy, qz, qw (robots at their pose3d; objects and parts on the floor, turned by yaw)."""
        bodies = np.concatenate([np.asarray(snap.poses, float).reshape(-1, 3),
                                 np.asarray(snap.object_poses, float).reshape(-1, 3),
                                 np.asarray(snap.part_poses, float).reshape(-1, 3)])
        b = bodies[self._body]
        if self.three_d:
            return _instances3d(snap, bodies, self._body, self._off, self.objects3d)
        c, s = np.cos(b[:, 2]), np.sin(b[:, 2])
        q = yaw_quats(b[:, 2])  # w, x, y, z
        ox, oy = self._off[:, 0], self._off[:, 1]
        return np.column_stack((b[:, 0] + c * ox - s * oy, b[:, 1] + s * ox + c * oy, q[:, 3],
                                q[:, 0])).ravel()

    def values(self, snap) -> np.ndarray:
        out = [self._instances(snap)]
        rays = np.zeros(self._ray_count)
        for label, rows, angles, radii, first in self._groups:
            reading = snap.readings.get(label)
            d = np.zeros((len(rows), len(angles)))
            if reading is not None and reading.shape[0] == len(snap.robots):
                d = np.nan_to_num(np.asarray(reading, float)[rows][:, :len(angles)], nan=0.0)
            reach = radii[:, None] + d
            at = first[:, None] + 2 * np.arange(len(angles))
            rays[at], rays[at + 1] = reach * np.cos(angles), reach * np.sin(angles)
        for label, row, k, first in self._leds:  # LED colours: packed R * 65536 + G * 256 + B
            reading = snap.readings.get(label)
            if reading is not None and reading.shape[0] == len(snap.robots):
                v = int(np.nan_to_num(reading[row, k], nan=0.0))
                rays[first:first + 4] = ((v >> 16 & 255) / 255, (v >> 8 & 255) / 255,
                                         (v & 255) / 255, 1.0 if v > 0 else 0.0)
        return np.concatenate(out + [rays])


def _instances3d(snap, bodies: np.ndarray, body: np.ndarray, off: np.ndarray,
                 objects3d: bool = False) -> np.ndarray:
    """(x, y, z, qx, qy, qz, qw) of every 3D instance: its body's position plus its offset
    turned by the body's orientation (robots: pose3d; objects: object_pose3d when
    ``objects3d``; others: yaw about z, on the floor)."""
    n = len(snap.robots)
    position = np.zeros((len(bodies), 3))
    position[:, :2] = bodies[:, :2]
    quat = yaw_quats(bodies[:, 2])  # w, x, y, z
    position[:n] = np.asarray(snap.pose3d, float)[:, :3]
    quat[:n] = np.asarray(snap.pose3d, float)[:, 3:7]
    if objects3d:
        m = len(snap.objects)
        position[n:n + m] = np.asarray(snap.object_pose3d, float)[:, :3]
        quat[n:n + m] = np.asarray(snap.object_pose3d, float)[:, 3:7]
    q = quat[body]
    world = position[body] + np.einsum("nij,nj->ni", quat_matrices(q), off)
    return np.column_stack((world, q[:, 1:4], q[:, 0])).ravel()


def _declared(layout: dict, label: str, key: str):
    """Module ``label``'s ``draw`` hint or ``fields``: the layout's, else this process's
    registry's (None for neither)."""
    value = ((layout.get("modules") or {}).get(label) or {}).get(key)
    if value is None and label in MODULES:
        kind = MODULES.get(label)
        value = draw_hint(kind) if key == "draw" else kind.fields
    return value


def _ray_modules(layout: dict, robot: dict) -> list[tuple[str, np.ndarray]]:
    """(module label, ray angles) of each module of ``robot`` drawn as rays (a module's
    ``draw`` hint of kind ``rays``, from the layout or this process's registry)."""
    labels = robot.get("modules") or ([] if layout.get("modules") else _registered_rays())
    return [(label, np.asarray(hint["angles"], dtype=float)) for label in labels
            if (hint := _declared(layout, label, "draw") or {}).get("kind") == "rays"]


def _led_modules(layout: dict, robot: dict) -> list[tuple[str, int]]:
    """(module label, number of LEDs) of each module of ``robot`` drawn as LEDs (a ``draw``
    hint of kind ``leds``: one sphere per column on the robot's ring)."""
    return [(label, len(hint["columns"])) for label in robot.get("modules") or ()
            if (hint := _declared(layout, label, "draw") or {}).get("kind") == "leds"]


def _rotor_count(layout: dict, robot: dict) -> int:
    """How many rotors ``robot`` has: the propeller speeds ``w1``, ``w2``... its modules'
    declared fields report (docs/robots.md: a rotor module's reading); 0 for no rotorcraft."""
    for label in robot.get("modules") or ():
        fields, count = set(_declared(layout, label, "fields") or ()), 0
        while f"w{count + 1}" in fields:
            count += 1
        if count >= 2:
            return count
    return 0


def _registered_rays() -> list[str]:
    """Labels of registered modules drawn as rays (for layouts that list no modules: the
    rays are drawn where the snapshot has their readings)."""
    return [label for label in MODULES.labels()
            if (draw_hint(MODULES.get(label)) or {}).get("kind") == "rays"]


def _world_update(layout: dict) -> Msg:
    """The still scene: the floor, the zones (``[ZONE_n]``), and each target."""
    floor = layout.get("floor") or {}
    length, width = float(floor.get("length", 10.0)), float(floor.get("width", 10.0))
    entity = world_entity("floor").sub(8, Msg().sub(1, pose(0.0, 0.0, -0.005, 0.0, 1.0))
                                  .sub(2, vector3(length, width, 0.01))
                                  .sub(3, color((70, 70, 75))))
    update = Msg().sub(1, Msg().uint(2, 1)).sub(2, entity)
    for zone in layout.get("zones", ()):
        update.sub(2, _zone(zone))
    for t in layout.get("targets", ()):
        rgb = t.get("rgb", (230, 40, 40))
        mark = world_entity(f"target/{t.get('index', 0)}")
        for d, h, alpha in ((2 * TARGET_REACH, 0.004, 0.25), (0.3, 0.02, 1.0)):
            mark.sub(10, Msg().sub(1, pose(t["x"], t["y"], h / 2, 0.0, 1.0))
                     .sub(2, vector3(d, d, h)).double(3, 1.0).double(4, 1.0)
                     .sub(5, color(rgb, alpha)))
        mark.sub(13, Msg().sub(1, pose(t["x"], t["y"], 0.3, 0.0, 1.0)).uint(2, 1)
                 .double(3, 12.0).uint(4, 1).sub(5, color(rgb)).string(6, str(t.get("color"))))
        update.sub(2, mark)
    for entity in scenery_entities(layout):  # protocol 9: the world's meshes and terrain
        update.sub(2, entity)
    for entity in link_entities(layout):  # protocol 10: described robots' links
        update.sub(2, entity)
    return update


def _zone(zone: dict) -> Msg:
    """A zone as the viewer draws it: its polygon filled in its colour (a TriangleList over
    its vertices) and outlined at half the brightness (a LINE_LOOP), just above the floor;
    ``kind`` in the entity's metadata."""
    rgb = zone.get("color", (60, 120, 220))
    vertices = [(float(v[0]), float(v[1])) for v in zone.get("polygon", ())]
    entity = world_entity(f"zone/{zone.get('name', '')}")
    entity.sub(6, Msg().string(1, "kind").string(2, str(zone.get("kind", ""))))
    if len(vertices) < 3:
        return entity
    fill = Msg().sub(1, pose(0.0, 0.0, 0.002, 0.0, 1.0))
    for x, y in vertices:
        fill.sub(2, vector3(x, y, 0.0))
    fill.sub(3, color(rgb, ZONE_ALPHA))
    # indices are a packed `repeated fixed32`: little-endian 4-byte words in one field
    entity.sub(12, fill.raw(5, np.asarray(ear_indices(vertices), "<u4").tobytes()))
    line = Msg().uint(1, 1).sub(2, pose(0.0, 0.0, 0.004, 0.0, 1.0)).double(3, ZONE_LINE)
    for x, y in vertices:
        line.sub(5, vector3(x, y, 0.0))
    return entity.sub(11, line.sub(6, color([c // 2 for c in rgb[:3]])))


def _robot_place(first: int, three_d: bool) -> tuple[Msg, Msg]:
    """(translation Vector3, rotation Quaternion) of a robot's own pose slots from ``first``:
    planar (z 0, a turn about z) or 3D (x, y, z, qx, qy, qz, qw)."""
    if not three_d:
        x, y, qz, qw = (Slot(first + k) for k in range(4))
        return vector3(x, y, 0.0), quaternion(qz, qw)
    x, y, z, qx, qy, qz, qw = (Slot(first + k) for k in range(7))
    return vector3(x, y, z), quaternion4(qx, qy, qz, qw)


def _transforms(robots: list[str], slots: list[int], three_d: bool = False) -> Msg:
    """FrameTransforms: world -> each robot (translation m, rotation: about z in 2D)."""
    out = Msg()
    for name, first in zip(robots, slots):
        move, turn = _robot_place(first, three_d)
        out.sub(1, world_entity(name).sub(4, move).sub(5, turn))
    return out


def _poses(robots: list[str], slots: list[int],
           three_d: bool = False) -> tuple[Msg, list[tuple[int, int]]]:
    """Every robot's PoseInFrame back to back, and the byte range of each."""
    out, ranges = Msg(), []
    for first in slots[:len(robots)]:
        start = len(out.data)
        move, turn = _robot_place(first, three_d)
        one = Msg().stamp(1).string(2, WORLD).sub(3, Msg().sub(1, move).sub(2, turn))
        out.data += one.data
        out.slots += [(start + o, s) for o, s in one.slots]
        out.stamps += [start + o for o in one.stamps]
        ranges.append((start, len(out.data)))
    return out, ranges
