"""External robots held on the ``mujoco`` engine (docs/in-the-loop.md "How the body
follows"): a body whose pose comes from outside keeps its free joint (or its floor joints), and
for the step it is held it is put at the streamed pose with the velocity that carries it to the
next one, and its joints get a huge armature. The armature is added to the body's own rows of
MuJoCo's mass matrix, so whatever force acts on it (gravity, a simulated robot's contact, the
gyroscopic term) moves it by about a millionth of what it would move a free body: a simulated
robot collides with it as with something immovable, and the body ends the step where the
stream says (within nanometres; the next step puts it exactly there again). Setting the armature
needs no recompile (``dof_armature`` is read by every step's mass matrix); a recompile (a
layout change) resets it, and the next hold sets it again (see :func:`_heavy` for MuJoCo's
precomputed diagonal).
"""

from __future__ import annotations

import numpy as np

from ...model import held

#: Armature added to each joint of a held body: kg on its slides, kg m^2 on its rotations.
ARMATURE = 1e6


def hold(model, data, bodies: list, states: np.ndarray) -> None:
    """Put each of ``bodies`` (:class:`~coopsim.physics.mujoco.build.Body`, robots' chassis)
    at its row of ``states`` ((n, 13): pose, world linear velocity, body-frame angular
    velocity) and make it immovable for the step: a free body at the full pose, a ground body
    (slides x, y and hinge z) at its planar part (it stays on the floor, level)."""
    for body, s in zip(bodies, np.asarray(states, dtype=float).reshape(-1, 13)):
        if body.kind == "free":
            data.qpos[body.qadr:body.qadr + 7] = s[:7]
            data.qvel[body.dadr:body.dadr + 6] = s[7:13]
            dofs = 6
        elif body.kind == "ground":
            body.place(data, held.planar(s)[0])
            dofs = 3
        else:  # welded to the world: nothing moves it anyway
            continue
        _heavy(model, slice(body.dadr, body.dadr + dofs))


def _heavy(model, dofs: slice) -> None:
    """Give the joints ``dofs`` the armature :data:`ARMATURE` (once: a later call finds it
    there). MuJoCo 4 keeps a "simple" body's mass matrix diagonal from ``dof_M0``, armature
    included at compile time, so that gets the difference too (the other bodies' matrix is
    built each step from ``dof_armature``)."""
    more = ARMATURE - model.dof_armature[dofs]
    if more.any():
        model.dof_M0[dofs] += more
        model.dof_armature[dofs] = ARMATURE
