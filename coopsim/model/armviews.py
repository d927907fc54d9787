"""The views the core makes for the arm kinds' kernels (``joints``, ``tool``, ``force``,
``gripper``): every robot's arm state, its arm's chain, its wrist wrench and what it holds.

Each view has a row per robot (the kernels index it by their ``rows``), made once a step
from the engine's access (:class:`~coopsim.model.module.PhysicsAccess`) or once a layout
(the chain, the held board), the same arrays on the plain path
(:data:`coopsim.model.kernel.COMPUTED`) and in a composed call (:mod:`coopsim.sim.compose`):

* ``arm``: (N, MAX_JOINTS, 3) each arm joint's angle (rad), rate (rad/s) and drive torque
  (N m) in the last step; NaN rows: no arm, 0 beyond an arm's joints.
* ``arm_chain``: (dof (N,), A, B, C (N, MAX_JOINTS, 3, 3), origins (N, MAX_JOINTS, 3), tool
  (N, 3), mount turn (N, 3, 3), mount (N, 3)): each robot's arm as the forward kinematics
  takes it (:func:`coopsim.model.ikkernel.chain_constants`: per joint R_j(q) = A_j +
  sin(q) B_j + cos(q) C_j; the joint origins and the tool point, m; the arm's base in its
  body's frame); dof 0 and zeros: no arm.
* ``wrench``: (N, 6) the wrist's force (N) and torque (N m), tool frame; NaN rows: no arm.
* ``held``: (N, 2) 1 and the held object's mass (kg, NaN: not found), or 0 and 0.
"""

from __future__ import annotations

import math

import numpy as np

from .arm import MAX_JOINTS

_ALL: list = [np.zeros(0, np.int64)]


def every_row(n: int) -> np.ndarray:
    """(n,) the rows 0..n-1 (one array per count)."""
    found = _ALL[0]
    if len(found) != n:
        found = _ALL[0] = np.arange(n, dtype=np.int64)
    return found


def _frozen(arr: np.ndarray) -> np.ndarray:
    """``arr`` made read-only (an array of this module's own)."""
    arr.setflags(write=False)
    return arr


def _read_only(arr: np.ndarray) -> np.ndarray:
    """A read-only view of ``arr`` (the engine's own array stays writable)."""
    arr = arr.view()
    arr.flags.writeable = False
    return arr


#: The views' shapes and types when a call reads none of them (the types of one that does)
NO_ARM = _frozen(np.zeros((0, MAX_JOINTS, 3)))
NO_WRENCH = _frozen(np.zeros((0, 6)))
NO_HELD = _frozen(np.zeros((0, 2)))
NO_CHAIN = tuple(_frozen(a) for a in (
    np.zeros(0), np.zeros((0, MAX_JOINTS, 3, 3)), np.zeros((0, MAX_JOINTS, 3, 3)),
    np.zeros((0, MAX_JOINTS, 3, 3)), np.zeros((0, MAX_JOINTS, 3)), np.zeros((0, 3)),
    np.zeros((0, 3, 3)), np.zeros((0, 3))))

_CHAIN: list = [(None, NO_CHAIN)]  # (the tuple of ArmSpecs it was made for, the view)


def arm_chain(arms: tuple) -> tuple:
    """The ``arm_chain`` view of ``arms`` (an ArmSpec or None per robot: the engine access's
    tuple, the same one while the layout stays), made once for that tuple."""
    kept = _CHAIN[0]
    if kept[0] is arms:
        return kept[1]
    from .ikkernel import chain_constants  # (compiled code: imported when first made)

    n = len(arms)
    dof = np.zeros(n)
    a, b, c = (np.zeros((n, MAX_JOINTS, 3, 3)) for _ in range(3))
    origins, tool = np.zeros((n, MAX_JOINTS, 3)), np.zeros((n, 3))
    turn, mount = np.zeros((n, 3, 3)), np.zeros((n, 3))
    for r, arm in enumerate(arms):
        if arm is None:
            continue
        ca, cb, cc, co, _, ct = chain_constants(arm)
        d = arm.dof
        dof[r] = d
        a[r, :d], b[r, :d], c[r, :d], origins[r, :d], tool[r] = ca, cb, cc, co, ct
        cy, sy = math.cos(arm.mount_yaw), math.sin(arm.mount_yaw)
        turn[r] = ((cy, -sy, 0.0), (sy, cy, 0.0), (0.0, 0.0, 1.0))
        mount[r] = np.asarray(arm.mount, float)
    view = tuple(_frozen(x) for x in (dof, a, b, c, origins, tool, turn, mount))
    if isinstance(arms, tuple):  # immutable: its view stays its view
        _CHAIN[0] = (arms, view)
    return view


_HELD: list = [(None, None, None, NO_HELD)]  # (board, names, objects, the view)


def held(board, names: tuple, objects: tuple) -> np.ndarray:
    """The ``held`` view: what each robot ``names`` holds by the run's ``held`` board (robot
    name -> object name; a new mapping whenever a grasp changes) among ``objects`` (their
    specs), made once per board, robots and objects."""
    kept = _HELD[0]
    if kept[0] is board and kept[1] is names and kept[2] is objects:
        return kept[3]
    out = np.zeros((len(names), 2))
    if board:
        mass = {o.name: o.mass for o in objects}
        for r, name in enumerate(names):
            found = board.get(name)
            if found is not None:
                out[r] = 1.0, mass.get(found, math.nan)
    _HELD[0] = (board, names, objects, _frozen(out))
    return out


def views(access, names: tuple, wanted, board=None, objects: tuple = ()) -> tuple:
    """(``arm``, ``arm_chain``, ``wrench``, ``held``) of every robot ``names`` through the
    engine's ``access``: those in ``wanted`` made, the others empty."""
    rows = every_row(len(names))
    arm = _read_only(access.arm_state(rows)) if "arm" in wanted else NO_ARM
    chain = arm_chain(access.arms(rows)) if "arm_chain" in wanted else NO_CHAIN
    wrench = _read_only(np.asarray(access.wrist_wrench(rows), dtype=float)) \
        if "wrench" in wanted else NO_WRENCH
    hold = held(board, names, objects) if "held" in wanted else NO_HELD
    return arm, chain, wrench, hold


NAMES = ("arm", "arm_chain", "wrench", "held")
