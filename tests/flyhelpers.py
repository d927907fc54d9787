"""A bare flying body for tests of what shows 3D worlds (stream, viewer, plots): a robot type
without rotors or modules, so a test needs only the ``mujoco`` engine."""

from __future__ import annotations

FLYER = "test_flyer"


def flyer_type() -> str:
    """Register (once) and return the label of a 1.5 kg, 0.5 m free body (a quadrotor's size)
    starting at its section's z, which gravity alone moves."""
    from coopsim.model.plugins import ROBOT_TYPES
    from coopsim.model.robot_type import Assembly, BodySpec, MemberSpec, RobotType, ShapeSpec

    def build(cls, spec):
        body = BodySpec("frame", "dynamic", 1.5, (ShapeSpec("circle", radius=0.25),),
                        spec.position[:2], spec.yaw, free=True, z=spec.position[2],
                        height=0.1)
        return Assembly((MemberSpec(spec.name, "frame", (), 0.25),), (body,))

    if FLYER not in ROBOT_TYPES:
        ROBOT_TYPES.register(FLYER)(type(FLYER, (RobotType,), {
            "label": FLYER, "modules": (), "footprint": 0.25, "build": classmethod(build)}))
    return FLYER
