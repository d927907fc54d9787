"""``target``: distance and relative angle to every target, in scenario order (a stand-in for
a colour camera)."""

from __future__ import annotations

from ...model.commands import UNKNOWN_NAME, Command
from ...model.errors import ProtocolError
from ...model.module import Module
from . import kernels
from .common import lost, noise, rate


class Target(Module):
    """Per target: distance (m) and angle from the heading (rad, + to the left)."""

    label = "target"
    description = "per target: distance (m) and angle from the heading (rad, + to the left)"
    params = (noise("m and rad", 1.0), lost(), rate())
    commands = (
        Command(300, "read", "target", kind="read",
                doc="distance (m), angle (rad) per target; text: the targets' colours"),
        Command(301, "read_color", "target", text="req", kind="read",
                doc="distance (m), angle (rad) to the first target of the colour in text"),
    )

    per_target = 2  # distance, angle

    @classmethod
    def field_names(cls, n_targets):
        return tuple(f"{k}{i}" for i in range(n_targets) for k in ("distance", "angle"))

    # distance and angle to every target, its noise and lost data: one compiled call
    kernel_views = ("pose", "targets")
    kernel_sense = kernels.target_sense
    kernel_rowwise = True

    @classmethod
    def answer(cls, command, row, text, snap):
        colors = [t.color for t in snap.targets]
        if command.name == "read":
            return ",".join(colors), row.tolist()
        if text not in colors:
            raise ProtocolError(UNKNOWN_NAME, f"no {text!r} target (targets: "
                                              f"{', '.join(colors) or 'none'})")
        i = colors.index(text)
        return text, row[2 * i:2 * i + 2].tolist()
