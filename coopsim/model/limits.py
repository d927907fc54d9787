"""Limits of the names and numbers a world is built from: ONE table for files, ``/sim`` and the
viewer, so every path refuses the same values with the same sentence.

Names (robots, the names robot types derive from them, objects) match :data:`NAME_PATTERN`, are
at most :data:`NAME_MAX` characters, and a robot's never is one of :data:`RESERVED_NAMES` (the
ports the simulator serves itself: ``/sim``, ``/playback``, ``/nameserver``), in any case.

Numbers: :data:`FIELDS` maps every numeric field of an object, robot, target and floor to its
:class:`Limit`. Units are SI (m, kg) and the yaw is in radians; files give the yaw in degrees and
the message shows both. The ranges keep the physics sound: a 1e-300 m box or a 5e-324 kg crate
would be accepted by the engine and then fail every step.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable

from .errors import ParameterError

NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
NAME_MAX = 64
#: Top-level port names the simulator registers itself; no robot may be named so (any case).
RESERVED_NAMES = ("sim", "playback", "nameserver", "external")  # external: protocol 11
#: Most steps one step command takes (``/sim`` and ``/playback`` step, ROS 2's ``/coopsim/step``).
MAX_STEPS = 1_000_000


def shown(value, *bounds: float) -> str:
    """A refused number as an error sentence shows it: ``%g`` (six significant digits), with
    more digits only where six would read as one of the ``bounds`` it broke or land on a
    bound's other side: 2200.0001 against the bound 2200 prints ``2200.0001``, not ``2200``
    (a value that is not refused would never print as its bound either). NaN and inf print as
    ``nan`` and ``inf``.

    Args:
        value: The number, in the unit the sentence states.
        bounds: The limits it is compared with (inf allowed), same unit.
    """
    v = float(value)
    text = f"{v:g}"
    if not math.isfinite(v):
        return text
    for digits in range(7, 18):  # 17 significant digits read back as the same float
        read = float(text)
        if all((read > b) - (read < b) == (v > b) - (v < b) for b in bounds):
            return text
        text = f"{v:.{digits}g}"
    return text


@dataclass(frozen=True)
class Limit:
    """An inclusive range ``low``..``high`` in ``unit``.

    Attributes:
        zero: 0 is allowed besides the range (mass: 0 = static).
        integer: The value must be a whole number (colour components).
        degrees: Also state the range and value in degrees (the yaw).
    """

    low: float
    high: float
    unit: str = ""
    zero: bool = False
    integer: bool = False
    degrees: bool = False

    def problem(self, value) -> str:
        """Why ``value`` is refused, as ``must be ..., got ...`` ("" when it is fine)."""
        try:
            v = float(value)
        except (TypeError, ValueError, OverflowError):
            return f"must be a number, got {value!r}"
        fine = math.isfinite(v) and ((self.low <= v <= self.high) or (self.zero and v == 0))
        if fine and (not self.integer or v == int(v)):
            return ""
        return f"must be {self.span()}, got {self._show(v)}"

    def span(self) -> str:
        """What a value must be, as error sentences and the reference say it."""
        unit = f" {self.unit}" if self.unit else ""
        kind = "an integer " if self.integer else ""
        span = f"{kind}between {self.low:g} and {self.high:g}{unit}"
        if self.degrees:
            span += f" ({math.degrees(self.low):g} to {math.degrees(self.high):g} degrees)"
        return f"0 (static) or {span}" if self.zero else span

    def _show(self, v: float) -> str:
        unit = f" {self.unit}" if self.unit else ""
        text = f"{shown(v, self.low, self.high, *((0.0,) if self.zero else ()))}{unit}"
        if self.degrees and math.isfinite(v):
            text += f" ({math.degrees(v):g} degrees)"
        return text


#: The most objects one world holds: its world file's (a map's walls included, up to
#: coopsim.formats.maps.MAX_WALLS), its scenario's and those inserted while it runs together.
#: Every object is a body the engine steps and a row of every state message.
MAX_OBJECTS = 25_000


def too_many_objects(count: int) -> str:
    """Why a world of ``count`` objects is refused ("" when it is not)."""
    if count > MAX_OBJECTS:
        return f"a world holds at most {MAX_OBJECTS} objects, this one would hold {count}"
    return ""


SIZE = Limit(0.001, 1000.0, "m")
MASS = Limit(0.001, 10000.0, "kg", zero=True)
# a link's mass in a description file: a tiny or zero one is repaired with a warning
# (description/inertia.py: a 1 mg antenna as shipped), the top bound is every mass's
LINK_MASS = Limit(0.0, MASS.high, "kg")
POSITION = Limit(-10000.0, 10000.0, "m")
YAW = Limit(-2 * math.pi, 2 * math.pi, "rad", degrees=True)
COLOR = Limit(0, 255, integer=True)
FLOOR_EXTENT = Limit(0.01, 20000.0, "m")
FLOOR_HEIGHT = Limit(0.0, 1000.0, "m")

#: Every numeric field, by the label its messages use (files name their keys the same way).
FIELDS: dict[str, Limit] = {
    **{f"size {n}": SIZE for n in ("length", "width", "height")},
    **{f"position {n}": POSITION for n in ("x", "y", "z")},
    "yaw": YAW,
    "mass": MASS,
    **{f"color {n}": COLOR for n in "RGB"},
    "floor length": FLOOR_EXTENT, "floor width": FLOOR_EXTENT, "floor height": FLOOR_HEIGHT,
}


def field_problem(label: str, value) -> str:
    """``"<label> must be ..., got ..."`` when ``value`` is outside the field's range, else ""."""
    why = FIELDS[label].problem(value)
    return f"{label} {why}" if why else ""


def first_problem(fields: Iterable[tuple[str, object]]) -> str:
    """The first :func:`field_problem` of (label, value) pairs, or ""."""
    for label, value in fields:
        why = field_problem(label, value)
        if why:
            return why
    return ""


def check_fields(fields: Iterable[tuple[str, object]]) -> None:
    """Raise ParameterError with the first field outside its range."""
    why = first_problem(fields)
    if why:
        raise ParameterError(why)


def name_problem(name: str, what: str = "robot name", reserved: bool = True) -> str:
    """Why ``name`` cannot name a robot (or, with ``reserved`` False, an object); "" if it can."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        return (f"{what} must be letters, digits, '_' or '-', starting with a letter, "
                f"got {name!r}")
    if len(name) > NAME_MAX:
        return f"{what} must be at most {NAME_MAX} characters, got {len(name)}"
    if reserved and name.lower() in RESERVED_NAMES:
        return f"{what} must not be {name!r}: the simulator serves /{name.lower()} itself"
    return ""


def check_name(name: str, what: str = "robot name", reserved: bool = True) -> None:
    """Raise ParameterError when :func:`name_problem` finds one."""
    why = name_problem(name, what, reserved)
    if why:
        raise ParameterError(why)


def pose_fields(position, yaw) -> list[tuple[str, object]]:
    """(label, value) pairs of a position (x, y, z) and yaw, for :func:`check_fields`."""
    return [*zip(("position x", "position y", "position z"), position), ("yaw", yaw)]


def color_fields(color) -> list[tuple[str, object]]:
    """(label, value) pairs of an (R, G, B) colour."""
    return list(zip(("color R", "color G", "color B"), color))


def check_object_spec(spec) -> None:
    """Name, size, pose, mass and colour of an :class:`~coopsim.model.specs.ObjectSpec`.

    Raises:
        ParameterError: the first field outside its range, or a bad name.
    """
    check_name(spec.name, "object name", reserved=False)
    sizes = zip(("size length", "size width", "size height"), spec.size)
    check_fields([*sizes, *pose_fields(spec.position, spec.yaw), ("mass", spec.mass),
                  *color_fields(spec.color)])


def check_robot_fields(spec) -> None:
    """Name, pose and colour of a :class:`~coopsim.model.specs.RobotSpec` (the names its type
    derives are checked by coopsim.model.validate.check_robot_spec, which builds it)."""
    check_name(spec.name)
    check_fields([*pose_fields(spec.position, spec.yaw), *color_fields(spec.color)])


def check_target_spec(spec) -> None:
    """Position of a :class:`~coopsim.model.specs.TargetSpec`."""
    check_fields(zip(("position x", "position y", "position z"), spec.position))
