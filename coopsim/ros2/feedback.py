"""Shared control's feedback force on ROS 2: ``/squads/<squad>/feedback``, a
``geometry_msgs/WrenchStamped`` per squad under shared control (docs/in-the-loop.md).

The force (N) is the one ``/squads`` command 5 serves (:class:`coopsim.model.steering.Feedback`),
in the ``map`` frame (the world frame, ENU), the torque zero; the stamp is the sim time of the
step it was computed from (``Feedback.time``).
The live bridge publishes it for every snapshot its thread takes (every step while it keeps up);
recordings hold it (format 7), so a bag export (``coopsim export --ros2``) has it too.
"""

from __future__ import annotations

from .cdr import Writer

WRENCH = "geometry_msgs/WrenchStamped"
FRAME = "map"


def topic(squad: str) -> str:
    """The ROS topic of ``squad``'s feedback."""
    return f"/squads/{squad}/feedback"


def wrench(ns: int, force) -> bytes:
    """geometry_msgs/WrenchStamped at ``ns`` in the map frame: ``force`` (fx, fy, fz) N, no
    torque."""
    w = Writer()
    w.header(ns, FRAME)
    w.f64(*force, 0.0, 0.0, 0.0)
    return w.bytes()


def messages(snap, after: int = -1) -> list[tuple[str, bytes]]:
    """(topic, payload) of every squad's feedback computed after step ``after``, each stamped
    with the sim time of the step it was computed from (none when the run has no squad under
    shared control)."""
    board = snap.extra.get("feedback")
    if not board:
        return []
    return [(topic(name), wrench(round(fb.time * 1e9), fb.force))
            for name, fb in board.items() if fb.step > after]
