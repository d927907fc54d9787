"""The ``pymunk`` engine: rigid-body dynamics on Chipmunk, the way ARGoS's 2D engine does it.

* Movable objects and bodies with ``floor_friction`` slide with floor friction: a pivot joint and
  a gear joint to a static ground body, ``max_bias`` 0 and force/torque capped at mu * m * g, so
  friction opposes sliding and spinning without pinning the body in place.
* Differential drive: each chassis is tied to a kinematic *control body* by a pivot joint and a
  gear joint whose ``max_bias`` is 0 (they correct velocity, never position) and whose force and
  torque are capped. The motors set the control body's velocity; the joints drag the chassis
  along up to the caps, so a robot pushes light objects and stalls against a wall instead of
  passing through it. The velocity drive uses the same control body with a world-frame velocity.
* Revolute joints are a pivot plus, when asked, a rotary limit and a simple motor.

Batched state goes through ``pymunk.batch`` (one C call copies every body's state), mapped to
robot rows once per layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pymunk
import pymunk.batch as batch

from ...model.robot_type import Assembly
from ...model.specs import FloorSpec, ObjectSpec
from ...model.errors import SimulationError
from . import build as pb
from ..engine import ATTACH_KINDS, FEATURES, Engine, Handles
# the engine's constants, defined with the parts they shape; public here as before
from .build import FLOOR_FRICTION, GRAVITY, WALL_THICKNESS  # noqa: F401
from ..shapes import as_geometry, mark_sides

ITERATIONS = 10  # solver iterations per step
_NO_GEOMETRY = as_geometry([], [])  # no moving shapes (read-only: shared)
for _empty in _NO_GEOMETRY:
    _empty.flags.writeable = False
del _empty
_FEW = 4  # robots up to which velocities are set body by body instead of in one batch
_FEW_PAIRS = 8  # contact pairs up to which contacts() maps them to robots in Python

_F = batch.BodyFields
_STATE = _F.POSITION | _F.ANGLE | _F.VELOCITY | _F.ANGULAR_VELOCITY
_VELOCITY = _F.VELOCITY | _F.ANGULAR_VELOCITY
_A = batch.ArbiterFields
_CONTACT = _A.BODY_A_ID | _A.BODY_B_ID | _A.POINT_A_1


@dataclass
class _Rows:
    """Rows of the batch buffers for the current layout (see :meth:`PymunkEngine._rows`)."""

    version: int = -1
    chassis: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    control: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    sorted_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uintp))
    id_order: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    robot_of: dict = field(default_factory=dict)  # chassis body id -> robot row


class PymunkEngine(Engine):
    """Rigid-body dynamics with pymunk (every feature but the swarm's): the default engine.

    2D rigid-body dynamics (Chipmunk): forces, pushing, stalling, joints, carried parts. z is
    up and only used by the files; the floor's four edges are static walls (their inner faces
    are the edges). Boxes are rectangles; cylinders and spheres are circles (diameter = their
    length); mass 0 is static. Movable objects slide with floor friction (μ = 0.5): a pivot
    joint and a gear joint to a static ground body, ``max_bias`` 0, force capped at μ·m·g,
    torque at that force times half the object's length (the way ARGoS models floor friction
    on Chipmunk). Use it for everything the others are not for.
    """

    label = "pymunk"
    description = "rigid-body dynamics (pymunk/Chipmunk): pushing, stalling, joints, carried parts"
    # 2D: no free bodies, no meshes or height fields
    features = FEATURES - {"swarm", "batch", "copies", "flight", "arms", "scenery"}
    default = True

    def __init__(self, floor: FloorSpec) -> None:
        super().__init__(floor)
        self.space = pymunk.Space()
        self.space.iterations = ITERATIONS
        self.ground = pymunk.Body(body_type=pymunk.Body.STATIC)
        self.space.add(*pb.boundary(floor))
        self._robots: list[pb.Robot] = []
        self._version = 0  # bumped on every body added or removed
        self._rows = _Rows()
        self._bodies: list = []  # the bodies in batch row order (see _table)
        self._state: np.ndarray | None = None  # every body's state, cached until it changes
        self._get, self._set, self._arbiters = batch.Buffer(), batch.Buffer(), batch.Buffer()
        self._moving: tuple[int, list] = (-1, [])  # (version, shapes of moving_geometry)

    # -- layout -----------------------------------------------------------------------------------

    def add_object(self, spec: ObjectSpec) -> pb.Object:
        self.check_object(spec)
        shape_spec = pb.object_shape(spec)
        body = pb.body(spec.mass, (shape_spec,), "static" if spec.static else "dynamic")
        body.position, body.angle = spec.position[:2], spec.yaw
        shapes = (pb.shape(body, shape_spec, 0),)
        joints = () if spec.static else pb.floor_joints(self.ground, body, spec.mass,
                                                       FLOOR_FRICTION, max(spec.size[:2]) / 2)
        self.space.add(body, *shapes, *joints)
        self._changed()
        return pb.Object(body, shapes, joints, spec.static)

    def remove_object(self, handle: pb.Object) -> None:
        self.space.remove(handle.body, *handle.shapes, *handle.joints)
        self._changed()

    def add_assembly(self, assembly: Assembly, group: int) -> Handles:
        self.check_assembly(assembly)
        handles, items = Handles(), []
        for spec in assembly.bodies:
            body = pb.body(spec.mass, spec.shapes, spec.kind)
            body.position, body.angle = spec.position, spec.yaw
            items += [body, *(pb.shape(body, s, group) for s in spec.shapes)]
            if spec.floor_friction > 0 and spec.kind == "dynamic":
                reach = max(pb.reach(s) for s in spec.shapes) if spec.shapes else 0.1
                items += pb.floor_joints(self.ground, body, spec.mass, spec.floor_friction, reach)
            handles.bodies[spec.key] = body
        for spec in assembly.joints:
            joint = pb.joint(spec, handles.bodies, self.ground)
            items += [joint.pivot, *joint.extra]
            handles.joints[spec.key] = joint
        for member in assembly.members:
            robot = pb.Robot(handles.bodies[member.body], None)
            if member.drive:
                robot.control = pymunk.Body(body_type=pymunk.Body.KINEMATIC)
                robot.control.position, robot.control.angle = robot.body.position, robot.body.angle
                items += [robot.control, *pb.drive_joints(robot.control, robot.body, member)]
            handles.robots[member.name] = robot
        self.space.add(*items)
        handles.items = items
        self._changed()
        return handles

    def remove_assembly(self, handles: Handles) -> None:
        self.space.remove(*handles.items)
        self._changed()

    def set_robots(self, robots: list, drives: list[str]) -> None:
        self._robots = list(robots)
        self._changed()

    def _changed(self) -> None:
        self._version += 1
        self._state = None

    # -- run-time constraints ----------------------------------------------------------------------

    def attach(self, a, b, kind: str, anchor: tuple[float, float]) -> pb.Attachment:
        """A pivot joint at ``anchor`` (world, m), plus for ``weld`` a gear joint holding the
        relative angle: real constraints the solver keeps, so a held object still collides
        and drags on the floor. The two bodies no longer collide with each other."""
        if kind not in ATTACH_KINDS:
            raise SimulationError(f"attach kind must be one of {', '.join(ATTACH_KINDS)}")
        ba, bb = _body_of(a), _body_of(b)
        pin = pymunk.PivotJoint(ba, bb, tuple(anchor))
        constraints = [pin]
        if kind == "weld":
            constraints.append(pymunk.GearJoint(ba, bb, bb.angle - ba.angle, 1.0))
        for c in constraints:
            c.collide_bodies = False
        self.space.add(*constraints)
        return pb.Attachment(tuple(constraints))

    def detach(self, handle: pb.Attachment) -> None:
        self.space.remove(*handle.constraints)

    # -- stepping ---------------------------------------------------------------------------------

    def step(self, dt: float) -> None:
        self.space.step(dt)
        self._state = None

    def _read(self) -> np.ndarray:
        """Every body's state (B, 6): x, y, angle, vx, vy, angular velocity (cached)."""
        if self._state is None:
            self._get.clear()
            batch.get_space_bodies(self.space, _STATE, self._get)
            self._state = np.frombuffer(self._get.float_buf(), dtype=np.float64).reshape(-1, 6)
            self._state = self._state.copy()
        return self._state

    def _table(self) -> _Rows:
        """Rows of the robots' chassis and control bodies in the batch buffers."""
        if self._rows.version == self._version:
            return self._rows
        self._get.clear()
        batch.get_space_bodies(self.space, _F.BODY_ID, self._get)
        ids = np.frombuffer(self._get.int_buf(), dtype=np.uintp)
        row = {int(i): k for k, i in enumerate(ids)}
        by_id = {b.id: b for b in self.space.bodies}
        self._bodies = [by_id[int(i)] for i in ids]  # batch row -> body
        chassis_ids = np.array([r.body.id for r in self._robots], dtype=np.uintp)
        order = np.argsort(chassis_ids)  # robots by chassis id, to map arbiters
        self._rows = _Rows(self._version,
                           np.array([row[r.body.id] for r in self._robots], dtype=np.int64),
                           np.array([row[r.control.id] if r.control else -1
                                     for r in self._robots], dtype=np.int64),
                           chassis_ids[order], order,
                           {int(i): k for k, i in enumerate(chassis_ids)})
        self._state = None  # the buffer was reused for the ids
        return self._rows

    def robot_state(self) -> np.ndarray:
        rows = self._table()
        return self._read()[rows.chassis]

    def drive(self, rows: np.ndarray, forward: np.ndarray, turn: np.ndarray) -> None:
        table = self._table()
        state = self._read()
        if len(rows) <= _FEW:  # numpy's cos and sin, the products in Python (IEEE's product,
            # numpy's multiply's bits): no arrays made for a few robots
            yaw = state[:, 2].take(table.chassis[rows])  # a third of state[rows, 2]'s cost
            cos, sin = np.cos(yaw).tolist(), np.sin(yaw).tolist()
            velocity = [(f * c, f * s, w)
                        for f, c, s, w in zip(forward.tolist(), cos, sin, turn.tolist())]
            self._write_few(table.control[rows].tolist(), state, velocity)
            return
        yaw = state[table.chassis[rows], 2]
        velocity = np.empty((len(yaw), 3))
        np.multiply(forward, np.cos(yaw), out=velocity[:, 0])
        np.multiply(forward, np.sin(yaw), out=velocity[:, 1])
        velocity[:, 2] = turn
        self._write_controls(table.control[rows], velocity)

    def set_velocity(self, rows: np.ndarray, velocity: np.ndarray) -> None:
        self._write_controls(self._table().control[rows], velocity)

    def _write_controls(self, control_rows: np.ndarray, velocity: np.ndarray) -> None:
        """Set the control bodies' twists; every other body keeps its velocity."""
        state = self._read()
        if len(control_rows) <= _FEW:  # a few robots: body by body beats the batch copy
            self._write_few(control_rows.tolist(), state, velocity.tolist())
            return
        out = state[:, 3:6].copy()
        keep = control_rows >= 0
        out[control_rows[keep]] = velocity[keep]
        # One buffer, reused: a new pymunk.batch.Buffer every step is never freed by pymunk.
        self._set.set_float_buf(np.ascontiguousarray(out, dtype=np.float64).ravel())
        batch.set_space_bodies(self.space, _VELOCITY, self._set)
        state[:, 3:6] = out

    def _write_few(self, control_rows: list, state: np.ndarray, velocity: list) -> None:
        """:meth:`_write_controls` body by body: ``velocity`` (vx, vy, w) of each row, m/s and
        rad/s, world frame, into the control bodies and the cached ``state``."""
        for row, (vx, vy, w) in zip(control_rows, velocity):
            if row >= 0:
                body = self._bodies[row]
                body.velocity, body.angular_velocity = (vx, vy), w
                state[row, 3], state[row, 4], state[row, 5] = vx, vy, w  # no tuple -> array

    def reset_rows(self, rows: np.ndarray, state: np.ndarray) -> None:
        """See :meth:`Engine.reset_rows`: the chassis is moved and given the velocity, its
        control body put on it at rest (bodies of other parts are not moved)."""
        state = np.asarray(state, dtype=np.float64).reshape(len(rows), 6)
        for k, (x, y, yaw, vx, vy, w) in zip(np.asarray(rows).tolist(), state.tolist()):
            robot = self._robots[k]
            robot.body.position, robot.body.angle = (x, y), yaw
            robot.body.velocity, robot.body.angular_velocity = (vx, vy), w
            if robot.control is not None:
                robot.control.position, robot.control.angle = (x, y), yaw
                robot.control.velocity, robot.control.angular_velocity = (0.0, 0.0), 0.0
            self.space.reindex_shapes_for_body(robot.body)
        self._state = None

    def contacts(self, pose: np.ndarray) -> np.ndarray:
        table = self._table()
        out = np.zeros((len(self._robots), 2))
        self._arbiters.clear()
        batch.get_space_arbiters(self.space, _CONTACT, self._arbiters)
        found = self._arbiters.int_buf()
        if not len(found) or not len(self._robots):  # no pair touching: no array made
            return out
        ids = np.frombuffer(found, dtype=np.uintp).reshape(-1, 2)
        points = np.frombuffer(self._arbiters.float_buf(), dtype=np.float64).reshape(-1, 2)
        if len(ids) <= _FEW_PAIRS:
            return _few_contacts(ids.tolist(), points.tolist(), table.robot_of, pose, out)
        sorted_ids, order = table.sorted_ids, table.id_order
        for column in (0, 1):
            # searchsorted gives >= 0: the upper bound is all clip(0, n - 1) did
            pos = np.minimum(np.searchsorted(sorted_ids, ids[:, column]), len(order) - 1)
            hit = sorted_ids[pos] == ids[:, column]
            if not hit.any():  # no robot on this side of any pair (a robot against a wall)
                continue
            mark_sides(out, order[pos[hit]], points[hit], pose)
        return out

    def poses(self, handles: list) -> np.ndarray:
        bodies = [h.body if isinstance(h, pb.Object) else h for h in handles]
        return np.array([(b.position.x, b.position.y, b.angle) for b in bodies],
                        dtype=float).reshape(-1, 3)

    def joint_state(self, handles: list) -> np.ndarray:
        return np.array([(j.b.angle - j.a.angle - j.rest, j.b.angular_velocity
                          - j.a.angular_velocity) for j in handles], dtype=float).reshape(-1, 2)

    def joint_force(self, handles: list, dt: float) -> np.ndarray:
        return np.array([j.force(dt) for j in handles], dtype=float)

    def set_motor_rates(self, handles: list, rates: np.ndarray) -> None:
        for joint, rate in zip(handles, rates):
            # Chipmunk's simple motor holds a.w - b.w at its rate: the minus makes ``rate`` the
            # rate of b relative to a, as joint_state reports it.
            joint.motor.rate = -float(rate)

    # -- geometry for sensing -----------------------------------------------------------------------

    def static_geometry(self):
        circles, segments = [], []
        for shape in self.space.shapes:
            if shape.body.body_type == pymunk.Body.STATIC:
                pb.shape_geometry(shape, circles, segments)
        return as_geometry(circles, segments)

    def moving_geometry(self):
        if self._moving[0] != self._version:  # which shapes, once per layout: a swarm's
            chassis = {id(r.body) for r in self._robots}  # chassis are many, the rest few
            self._moving = (self._version, [
                s for s in self.space.shapes
                if s.body.body_type == pymunk.Body.DYNAMIC and id(s.body) not in chassis])
        if not self._moving[1]:
            return _NO_GEOMETRY
        circles, segments = [], []
        for shape in self._moving[1]:
            pb.shape_geometry(shape, circles, segments)
        return as_geometry(circles, segments)


def _body_of(handle) -> pymunk.Body:
    """The pymunk body behind an object, robot or assembly-body handle."""
    return handle if isinstance(handle, pymunk.Body) else handle.body


def _few_contacts(ids: list, points: list, robot_of: dict, pose: np.ndarray,
                  out: np.ndarray) -> np.ndarray:
    """:meth:`PymunkEngine.contacts` for a few pairs (``ids``: body ids a, b; ``points``: the
    contact point on a, m), with Python floats: the same subtractions, products and sum as
    the arrays', so the same bits, and the cosines and sines from numpy as there."""
    for column in (0, 1):
        hits = [(robot_of[pair[column]], points[k]) for k, pair in enumerate(ids)
                if pair[column] in robot_of]
        if not hits:  # no robot on this side of any pair (a robot against a wall)
            continue
        rows = [r for r, _ in hits]
        yaw = pose[rows, 2]
        at = pose[rows, :2].tolist()
        for (r, (px, py)), (x, y), c, s in zip(hits, at, np.cos(yaw).tolist(),
                                               np.sin(yaw).tolist()):
            out[r, 0 if (px - x) * c + (py - y) * s >= 0 else 1] = 1.0
    return out
