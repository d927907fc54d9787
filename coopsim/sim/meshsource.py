"""Which local mesh file a ``/sim`` ``mesh`` request (protocol 11) names: a world mesh by its
section name, or an imported robot's mesh by the robot's name and the file's name (its
basename, with folders where two of its files share one), both as the layout document gives
them. Only files the world or a robot's description already read
and checked are found; the request never carries a path (model/meshwire.py)."""

from __future__ import annotations

from ..model.errors import UnknownNameError
from ..model.plugins import ROBOT_TYPES
from ..model.scenery import MeshSpec


def mesh_source(world, words: list[str]) -> MeshSpec:
    """The mesh ``words`` name in ``world``: ``[MESH_NAME]`` or ``[ROBOT, FILE]``, as a
    MeshSpec (for a robot's mesh: its path, the rest defaulted; call on the stepper's thread).

    Raises:
        UnknownNameError: no such mesh, robot, or mesh file of that robot's description.
    """
    if len(words) == 1:
        for spec in getattr(world, "meshes", ()):
            if spec.name == words[0]:
                return spec
        raise UnknownNameError(f"the world has no mesh {words[0]!r} (the layout's "
                               "scenery.meshes[].name)")
    robot = next((r for r in world.robots if r.name == words[0]), None)
    if robot is None:
        raise UnknownNameError(f"no robot {words[0]!r}")
    description = getattr(ROBOT_TYPES.get(robot.type), "DESCRIPTION", None)
    names = {} if description is None else description.mesh_names()
    paths = [path for path, name in names.items() if name == words[1]]
    if not paths:
        raise UnknownNameError(f"{words[0]} has no mesh file {words[1]!r} (its links' "
                               "visuals[].file)")
    return MeshSpec(words[1], paths[0], (0.0, 0.0, 0.0))
