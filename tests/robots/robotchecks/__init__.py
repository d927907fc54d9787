"""Per-kind checks of the robots of example-robot-data, shared by the table's script
(``tests/robots/robot_table.py``, docs/robots.md) and the tests that run it on one robot per
kind (tests/robots/test_robot_table.py).

Each check is ``check(urdf: str) -> Check``: it loads the file through coopsim's own loader
(in process, no network) and measures one figure against an independent oracle. :data:`CHECKS`
maps a kind (:func:`robotchecks.kinds.kind_of`) to its check; a kind without one
gets the FK check alone (every tree's kinematics is checked against Pinocchio's). The motion
checks (:mod:`.motion`) need ``tests/robots/`` on the path (``robot_motion``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    """One check's result.

    Attributes:
        figure: What was measured, as the table shows it (e.g. ``FK 0.001 mm / 0.0003°``).
        ok: Whether the figure meets its goal (None: not measured).
        note: Why not measured, or what the figure does not say.
    """

    figure: str
    ok: bool | None
    note: str = ""


def _checks() -> dict:
    """Kind -> its check: FK for every kind (``fk``), and the motion checks of
    ``tests/robots/robot_motion.py`` when it is there (:mod:`.motion`)."""
    from . import arm_move, fk
    found = {"fk": fk.check, "arm": arm_move.check}
    try:
        from . import motion
    except ImportError:
        return found
    found.update(wheeled=motion.wheeled, multirotor=motion.multirotor, legged=motion.legged,
                 humanoid=motion.held, hand=motion.held, bench=motion.held)
    return found


CHECKS = _checks()
