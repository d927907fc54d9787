"""Per-kind checks of the robots of example-robot-data, shared by the table's script
(``experiments/robot_table.py``, docs/robots.md) and the tests that run it on one robot per
kind (tests/experiments/test_robot_table.py).

Each check is ``check(urdf: str) -> Check``: it loads the file through coopsim's own loader
(in process, no network) and measures one figure against an independent oracle. :data:`CHECKS`
maps a kind (:func:`experiments.robotchecks.kinds.kind_of`) to its check; a kind without one
gets the FK check alone (every tree's kinematics is checked against Pinocchio's).
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
    """Kind -> its check (a module that is missing leaves its kind to the FK check)."""
    from . import fk
    found = {"fk": fk.check}
    for kind, module in (("wheeled", "wheeled"), ("multirotor", "multirotor"),
                         ("legged", "legged"), ("humanoid", "humanoid"), ("hand", "hand")):
        try:
            found[kind] = __import__(f"{__name__}.{module}", fromlist=["check"]).check
        except ImportError:
            continue
    return found


CHECKS = _checks()
