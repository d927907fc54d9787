"""The pymunk engine's parts (:mod:`coopsim.physics.pymunk.engine`): the handles it gives out,
and the bodies, shapes and constraints it builds from specs.

Units SI (m, kg, s, rad); positions in the floor's frame, shape offsets and anchors in their
body's frame. A body's moment of inertia is the sum of its shapes' moments, its mass spread over
them by area. Sliding on the floor and the differential drive are velocity constraints with
``max_bias`` 0 and capped forces (the engine's module docstring says why).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pymunk

from ...model.robot_type import JointSpec, ShapeSpec
from ...model.specs import FloorSpec, GRAVITY, ObjectSpec

FLOOR_FRICTION = 0.5  # Coulomb coefficient between movable objects and the floor
WALL_THICKNESS = 1.0  # m, the invisible boundary walls just outside the floor


@dataclass(eq=False)
class Object:
    """An object's pymunk parts."""

    body: pymunk.Body
    shapes: tuple
    joints: tuple = ()
    static: bool = True


@dataclass(eq=False)
class Joint:
    """A joint's constraints and the rest angle of b relative to a (its zero)."""

    a: pymunk.Body
    b: pymunk.Body
    pivot: pymunk.Constraint
    motor: pymunk.SimpleMotor | None = None
    rest: float = 0.0
    extra: list = field(default_factory=list)  # limit, motor and spring constraints
    spring: pymunk.DampedSpring | None = None  # a sprung joint's spring

    def force(self, dt: float) -> float:
        """The force the joint carried in the last step, N: a sprung joint's spring force
        (+ stretched: b pulls a towards the slide's inner end), else the hinge's impulse / dt."""
        if self.spring is None:
            return self.pivot.impulse / dt
        s = self.spring
        stretch = (s.a.local_to_world(s.anchor_a) - s.b.local_to_world(s.anchor_b)).length
        return s.stiffness * (stretch - s.rest_length)


@dataclass(eq=False)
class Attachment:
    """The constraints of one :meth:`~coopsim.physics.pymunk.engine.PymunkEngine.attach`."""

    constraints: tuple


@dataclass(eq=False)
class Robot:
    """A robot's chassis and its control body (None when it is not driven)."""

    body: pymunk.Body
    control: pymunk.Body | None


def joint(spec: JointSpec, bodies: dict, ground: pymunk.Body) -> Joint:
    """The constraints of an assembly's joint between two of its ``bodies`` (by key; ``a``
    empty: the ``ground``): a pivot, with a limit and a motor when asked, or a sprung slide."""
    a = bodies[spec.a] if spec.a else ground
    b = bodies[spec.b]
    if spec.kind == "sprung":
        return _sprung(a, b, spec)
    pivot = pymunk.PivotJoint(a, b, spec.anchor_a, spec.anchor_b)
    made = Joint(a, b, pivot, rest=b.angle - a.angle)
    if spec.kind == "revolute" and spec.limits is not None:
        lo, hi = spec.limits
        made.extra.append(pymunk.RotaryLimitJoint(a, b, made.rest + lo, made.rest + hi))
    if spec.kind == "revolute" and spec.motor:
        made.motor = pymunk.SimpleMotor(a, b, 0.0)
        made.motor.max_force = spec.max_torque
        made.extra.append(made.motor)
    return made


def object_shape(spec: ObjectSpec) -> ShapeSpec:
    """An object's one shape: a box (length, width, m) or a circle (radius, m)."""
    if spec.shape == "box":
        return ShapeSpec("box", size=(spec.size[0], spec.size[1]))
    return ShapeSpec("circle", radius=spec.radius)


def _area(s: ShapeSpec) -> float:
    if s.kind == "circle":
        return math.pi * s.radius ** 2
    if s.kind == "box":
        return s.size[0] * s.size[1]
    v = np.asarray(s.vertices, dtype=float)
    return 0.5 * abs(float(np.dot(v[:, 0], np.roll(v[:, 1], 1)) - np.dot(v[:, 1],
                                                                           np.roll(v[:, 0], 1))))


def reach(s: ShapeSpec) -> float:
    """Farthest point of a shape from its body's origin, m."""
    off = math.hypot(*s.offset)
    if s.kind == "circle":
        return off + s.radius
    if s.kind == "box":
        return off + math.hypot(*s.size) / 2
    return max(math.hypot(x, y) for x, y in s.vertices)


def _moment(mass: float, s: ShapeSpec) -> float:
    if s.kind == "circle":
        return pymunk.moment_for_circle(mass, 0, s.radius, s.offset)
    return pymunk.moment_for_poly(mass, _vertices(s), s.offset)


def _vertices(s: ShapeSpec) -> list:
    if s.kind == "box":
        hl, hw = s.size[0] / 2, s.size[1] / 2
        return [(-hl, -hw), (hl, -hw), (hl, hw), (-hl, hw)]
    return [tuple(v) for v in s.vertices]


def body(mass: float, shapes: tuple, kind: str) -> pymunk.Body:
    """A ``static``, ``kinematic`` or dynamic body of ``mass`` kg, its moment that of its
    ``shapes`` (kg m^2)."""
    if kind == "static":
        return pymunk.Body(body_type=pymunk.Body.STATIC)
    if kind == "kinematic":
        return pymunk.Body(body_type=pymunk.Body.KINEMATIC)
    areas = [_area(s) for s in shapes]
    total = sum(areas) or 1.0
    moment = sum(_moment(mass * a / total, s) for a, s in zip(areas, shapes))
    return pymunk.Body(mass, moment)


def shape(body: pymunk.Body, s: ShapeSpec, group: int) -> pymunk.Shape:
    """The pymunk shape of ``s`` on ``body`` (offset in the body's frame, m); shapes of one
    non-zero ``group`` never collide with each other (one robot's parts)."""
    if s.kind == "circle":
        shape = pymunk.Circle(body, s.radius, s.offset)
    elif s.kind == "box" and s.offset == (0.0, 0.0):
        shape = pymunk.Poly.create_box(body, s.size)
    else:
        shape = pymunk.Poly(body, _vertices(s), pymunk.Transform.translation(*s.offset))
    shape.friction, shape.elasticity = s.friction, s.elasticity
    if group:
        shape.filter = pymunk.ShapeFilter(group=group)
    return shape


def _sprung(a: pymunk.Body, b: pymunk.Body, spec: JointSpec) -> Joint:
    """A hinge at ``spec.anchor_a`` on a that slides along b's x axis, ``spec.travel`` m each
    way about ``spec.anchor_b``, held at the middle by a spring (critically damped for a's
    mass). The spring runs from the hinge towards b's origin, so it stretches when a is pulled
    outwards (the slide's outer end)."""
    (bx, by), travel = spec.anchor_b, spec.travel
    inward = -1.0 if bx > 0 else 1.0  # towards b's origin along its x axis
    groove = pymunk.GrooveJoint(b, a, (bx - travel, by), (bx + travel, by), spec.anchor_a)
    length = max(abs(bx), 4 * travel)
    spring = pymunk.DampedSpring(b, a, (bx + inward * length, by), spec.anchor_a, length,
                                 spec.stiffness, 2.0 * math.sqrt(spec.stiffness * a.mass))
    return Joint(a, b, groove, rest=b.angle - a.angle, extra=[spring], spring=spring)


def floor_joints(ground: pymunk.Body, body: pymunk.Body, mass: float, mu: float,
                  reach: float) -> tuple:
    """Floor friction on ``body``: a pivot and a gear joint to ``ground`` that correct velocity
    only, capped at mu m g (N) and mu m g ``reach`` (N m, ``reach`` in m)."""
    friction = mu * mass * GRAVITY
    pivot = pymunk.PivotJoint(ground, body, (0, 0), (0, 0))
    pivot.max_bias, pivot.max_force = 0.0, friction
    gear = pymunk.GearJoint(ground, body, 0.0, 1.0)
    gear.max_bias, gear.max_force = 0.0, friction * reach
    return pivot, gear


def drive_joints(control: pymunk.Body, body: pymunk.Body, member) -> tuple:
    """The drive: a pivot and a gear joint dragging ``body`` after its kinematic ``control``
    body, capped at the member's ``max_force`` (N) and ``max_torque`` (N m)."""
    pivot = pymunk.PivotJoint(control, body, (0, 0), (0, 0))
    pivot.max_bias, pivot.max_force = 0.0, member.max_force
    gear = pymunk.GearJoint(control, body, 0.0, 1.0)
    gear.max_bias, gear.max_force = 0.0, member.max_torque
    return pivot, gear


def boundary(floor: FloorSpec) -> list:
    """Static boxes just outside the floor's four edges; their inner faces are the edges."""
    body = pymunk.Body(body_type=pymunk.Body.STATIC)
    hl, hw, t = floor.length / 2, floor.width / 2, WALL_THICKNESS
    boxes = [
        (-hl - t, -hw - t, hl + t, -hw), (-hl - t, hw, hl + t, hw + t),
        (-hl - t, -hw, -hl, hw), (hl, -hw, hl + t, hw),
    ]
    shapes = [pymunk.Poly(body, [(l, b), (r, b), (r, t_), (l, t_)]) for l, b, r, t_ in boxes]
    for shape in shapes:
        shape.friction = 0.6
    return [body, *shapes]


def shape_geometry(shape: pymunk.Shape, circles: list, segments: list) -> None:
    """Append a shape's outline in the world frame, m: a circle (x, y, r, group) or its
    polygon's edges (x0, y0, x1, y1, group)."""
    group = shape.filter.group
    if isinstance(shape, pymunk.Circle):
        x, y = shape.body.local_to_world(shape.offset)
        circles.append((x, y, shape.radius, group))
        return
    pts = [shape.body.local_to_world(v) for v in shape.get_vertices()]
    for a, b in zip(pts, pts[1:] + pts[:1]):
        segments.append((a[0], a[1], b[0], b[1], group))
