"""Form checking: what the user typed into a manager or a control, turned into one ``/sim`` request.

Nothing here draws or sends. A form that does not check out raises :class:`FormError` with a
sentence the panel shows next to the form, and nothing goes to the simulation. The rules are the
server's own, from the same table (:mod:`coopsim.model.limits`: names, sizes, masses, poses,
colours), checked here so the user hears about a typo at once, in the server's words; the server
still has the last word (e.g. "off the floor").
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..model.errors import CoopsimError
from ..model.limits import field_problem, name_problem, shown
from ..net.protocol import PLAYBACK_COMMANDS, SIM_COMMANDS
from ..model.specs import COLORS, SHAPES

SIM_IDS = {c.name: c.id for c in SIM_COMMANDS.values()}
PLAYBACK_IDS = {c.name: c.id for c in PLAYBACK_COMMANDS.values()}
TARGET_COLORS = tuple(COLORS)
MAX_SPEED_FACTOR = 1000.0  # the stepper's own limit


class FormError(CoopsimError):
    """A form holds a value that cannot be sent.

    Attributes:
        field: The field at fault ("" for the whole form).
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


@dataclass(frozen=True)
class Request:
    """One request for ``/sim`` (or ``/playback``), by command name.

    Attributes:
        command: Command name in protocol.SIM_COMMANDS (or PLAYBACK_COMMANDS).
        text, params, data: The message's fields.
        service: ``/sim`` or ``/playback``.
    """

    command: str
    text: str = ""
    params: tuple[int, ...] = ()
    data: tuple[float, ...] = ()
    service: str = "/sim"

    @property
    def id(self) -> int:
        """The command id."""
        table = SIM_IDS if self.service == "/sim" else PLAYBACK_IDS
        return table[self.command]


def number(values: Mapping[str, str], key: str, lo: float = -math.inf, hi: float = math.inf,
           above: bool = False) -> float:
    """The float in field ``key``.

    Args:
        values: Field texts by key.
        key: The field.
        lo, hi: Allowed range (inclusive; ``above`` makes the lower bound exclusive).

    Raises:
        FormError: not a finite number, or outside the range.
    """
    text = values.get(key, "").strip()
    try:
        value = float(text)
    except ValueError:
        raise FormError(key, f"{key}: {text!r} is not a number" if text
                        else f"{key}: enter a number") from None
    if not math.isfinite(value):
        raise FormError(key, f"{key}: must be a finite number")
    if (value <= lo if above else value < lo) or value > hi:
        low = f"> {lo:g}" if above else f">= {lo:g}"
        span = low if hi == math.inf else f"{low} and <= {hi:g}"
        raise FormError(key, f"{key}: must be {span}, not {shown(value, lo, hi)}")
    return value


def name(values: Mapping[str, str], key: str = "name") -> str:
    """A one-word name (names travel in the text field, separated by spaces).

    Raises:
        FormError: empty or containing white space.
    """
    text = values.get(key, "").strip()
    if not text:
        raise FormError(key, f"{key}: enter a name")
    if any(ch.isspace() for ch in text) or text.startswith("/"):
        raise FormError(key, f"{key}: one word without spaces, not {text!r}")
    return text


def limited(values: Mapping[str, str], key: str, label: str, scale: float = 1.0) -> float:
    """The float in field ``key`` times ``scale``, within the range of the model's field
    ``label`` (the message is the server's).

    Raises:
        FormError: not a finite number, or outside the range.
    """
    value = number(values, key) * scale
    why = field_problem(label, value)
    if why:
        raise FormError(key, why)
    return value


def network_name(values: Mapping[str, str], what: str = "robot name") -> str:
    """A robot's (or, with ``what`` "object name", an object's) name by the model's one rule:
    the pattern, the length and, for robots, the reserved names.

    Raises:
        FormError: it breaks the rule.
    """
    text = name(values)
    why = name_problem(text, what, reserved=what == "robot name")
    if why:
        raise FormError("name", why)
    return text


def color255(rgb: Sequence[float]) -> tuple[int, int, int]:
    """A colour picker's 0..1 floats as 0..255 ints."""
    if len(rgb) < 3 or not all(math.isfinite(v) and 0 <= v <= 1 for v in rgb[:3]):
        raise FormError("color", "color: three values within 0..1")
    return tuple(int(round(v * 255)) for v in rgb[:3])


def choice(value: str, options: Sequence[str], key: str) -> str:
    """``value`` when it is one of ``options``."""
    if value not in options:
        raise FormError(key, f"{key}: one of {', '.join(options)}, not {value!r}")
    return value


def object_request(action: str, values: Mapping[str, str], shape: str,
                   rgb: Sequence[float]) -> Request:
    """``insert_object`` or ``update_object`` from the Object manager's fields.

    Fields: name, length, width, height (m), x, y, z (m), yaw (degrees), mass (kg; 0 = static),
    each within coopsim.model.limits.
    """
    obj = network_name(values, "object name")
    choice(shape, SHAPES, "shape")
    size = [limited(values, k, f"size {k}") for k in ("length", "width", "height")]
    pos = [limited(values, k, f"position {k}") for k in ("x", "y", "z")]
    yaw = limited(values, "yaw", "yaw", math.pi / 180)
    mass = limited(values, "mass", "mass")
    return Request(f"{action}_object", f"{obj} {shape}", color255(rgb),
                   (*size, *pos, yaw, mass))


def robot_request(action: str, values: Mapping[str, str], rtype: str,
                  rgb: Sequence[float]) -> Request:
    """``insert_robot`` or ``update_robot`` from the Robot manager's fields.

    Fields: name (the model's rule for robot names), x, y, z (m), yaw (degrees).
    """
    robot = network_name(values)
    if not rtype.strip() or any(ch.isspace() for ch in rtype.strip()):
        raise FormError("type", "type: choose a robot type")
    pos = [limited(values, k, f"position {k}") for k in ("x", "y", "z")]
    yaw = limited(values, "yaw", "yaw", math.pi / 180)
    return Request(f"{action}_robot", f"{robot} {rtype.strip()}", color255(rgb), (*pos, yaw))


def target_request(action: str, values: Mapping[str, str], color: str,
                   index: int | None = None) -> Request:
    """``insert_target`` or ``update_target`` (of target ``index``) from the Target manager."""
    choice(color, TARGET_COLORS, "color")
    pos = tuple(limited(values, k, f"position {k}") for k in ("x", "y", "z"))
    if action == "update":
        if index is None:
            raise FormError("", "choose the target to update in the list first")
        return Request("update_target", color, (index,), pos)
    return Request("insert_target", color, (), pos)


def speed_request(text: str) -> Request:
    """``set_speed``: a factor 0..1000 (0 = as fast as possible)."""
    return Request("set_speed", data=(number({"speed": text}, "speed", 0.0, MAX_SPEED_FACTOR),))


def file_request(path: str, suffixes: Sequence[str]) -> Request:
    """``load`` of a file the simulation can read (sent as an absolute path).

    Raises:
        FormError: empty path, no such file, or not one of ``suffixes``.
    """
    text = os.path.expanduser(path.strip())
    if not text:
        raise FormError("path", "path: enter a file name")
    if not text.endswith(tuple(suffixes)):
        raise FormError("path", f"path: a {' or '.join(suffixes)} file, not {path.strip()!r}")
    if not os.path.isfile(text):
        raise FormError("path", f"path: no such file: {text}")
    return Request("load", os.path.abspath(text))


def recording_path(path: str) -> str:
    """An existing recording file, as an absolute path.

    Raises:
        FormError: empty, missing, or not an .mcap file.
    """
    text = os.path.expanduser(path.strip())
    if not text:
        raise FormError("path", "path: enter a recording file name")
    if not text.endswith(".mcap"):
        raise FormError("path", f"path: a .mcap recording, not {path.strip()!r}")
    if not os.path.isfile(text):
        raise FormError("path", f"path: no such file: {text}")
    return os.path.abspath(text)
