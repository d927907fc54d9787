"""Typed module parameters (after AMSA): name, type, description, default, min, max.

A module declares its parameters as :class:`ParamSpec` tuples; each robot's module instance keeps
its values in a :class:`ParamValues`, which rejects unknown names, wrong types and values outside
[min, max] with a :class:`~coopsim.model.errors.ParameterError` and changes nothing in that case.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Union

from .errors import ParameterError, UnknownParameterError

Value = Union[float, int, bool, str]
TYPES = ("float", "int", "bool", "str")


@dataclass(frozen=True)
class ParamSpec:
    """Declaration of one parameter.

    Attributes:
        name: Identifier, unique within its module (``noise``, ``max_range``).
        type: ``float``, ``int``, ``bool`` or ``str`` (drivers and rules only: modules keep
            numbers, which travel as floats on the wire).
        description: One sentence, with the unit.
        default: Value at load and after reset.
        min: Smallest accepted value (ignored for bool).
        max: Largest accepted value (ignored for bool).
        unit: Unit symbol for listings ("m", "%", "m/s", "" when dimensionless).
        choices: For ``str`` parameters, the accepted words (empty: any word).
    """

    name: str
    type: str
    description: str
    default: Value
    min: float = -math.inf
    max: float = math.inf
    unit: str = ""
    choices: tuple[str, ...] = ()

    def coerce(self, value: object) -> Value:
        """Return ``value`` converted to this parameter's type, or raise ParameterError.

        Integers are accepted for floats (clients in some languages send 1.0 as 1); a float with
        no fractional part is accepted for an int; 0/1 and true/false are accepted for bool.
        """
        value = _convert(self, value)
        if self.type == "str":
            if self.choices and value not in self.choices:
                raise ParameterError(f"parameter {self.name} must be one of "
                                     f"{', '.join(self.choices)}, not {value!r}")
            return value
        if self.type != "bool" and not (self.min <= value <= self.max):
            raise ParameterError(
                f"parameter {self.name} = {value} is out of range [{self.min}, {self.max}]"
            )
        return value

    def validate(self) -> None:
        """Check the declaration: an identifier, a known type, a default it accepts.

        Raises:
            ValueError: what is wrong.
        """
        if not self.name.isidentifier() or self.type not in TYPES:
            raise ValueError(f"parameter {self.name!r}: bad name or type {self.type!r}")
        try:
            self.coerce(self.default)
        except ParameterError as exc:
            raise ValueError(f"parameter {self.name}: its default is not valid ({exc})") from None


def _convert(spec: ParamSpec, value: object) -> Value:
    if spec.type == "str":
        if not isinstance(value, str) or not value or len(value) > 200 or not value.isprintable():
            raise ParameterError(f"parameter {spec.name} takes a word, not {value!r}")
        return value
    if spec.type == "bool":
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "on", "off"):
            return value.lower() in ("true", "1", "on")
        if isinstance(value, (bool, int, float)) and value in (0, 1):
            return bool(value)
        raise ParameterError(f"parameter {spec.name} takes a bool (0/1, true/false), not {value!r}")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise ParameterError(
                f"parameter {spec.name} takes a {spec.type}, not {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterError(f"parameter {spec.name} takes a {spec.type}, not {value!r}")
    if not math.isfinite(value):
        raise ParameterError(f"parameter {spec.name} must be finite, not {value}")
    if spec.type == "int":
        if value != int(value):
            raise ParameterError(f"parameter {spec.name} takes an int, not {value}")
        return int(value)
    return float(value)


_TABLES: dict[int, tuple] = {}


def _tables(specs: Iterable[ParamSpec]) -> tuple[dict, dict]:
    """(name -> spec, name -> default) of a module's declarations, built once per declaration
    tuple and shared read-only: a 100,000-robot world makes 700,000 ParamValues.

    Keyed by the tuple's identity, the tuple kept in the entry so that its id is never reused.
    """
    entry = _TABLES.get(id(specs))
    if entry is not None and entry[0] is specs:
        return entry[1], entry[2]
    table = {s.name: s for s in specs}
    defaults = {s.name: s.default for s in table.values()}
    if isinstance(specs, tuple) and len(_TABLES) < 4096:
        _TABLES[id(specs)] = (specs, table, defaults)
    return table, defaults


class ParamValues:
    """Current values of one module instance's parameters.

    Args:
        specs: The module's declarations.
    """

    def __init__(self, specs: Iterable[ParamSpec]) -> None:
        self.specs, defaults = _tables(specs)
        self._values = dict(defaults)
        self.version = 0  # bumped on every change so batch arrays know to refresh

    def spec(self, name: str) -> ParamSpec:
        """Return the declaration of ``name``, or raise ParameterError naming the known ones."""
        try:
            return self.specs[name]
        except KeyError:
            known = ", ".join(self.specs) or "none"
            raise UnknownParameterError(f"unknown parameter {name!r} (known: {known})") from None

    def __getitem__(self, name: str) -> Value:
        try:
            return self._values[name]
        except KeyError:
            return self._values[self.spec(name).name]  # raises, naming the known ones

    def set(self, name: str, value: object) -> Value:
        """Validate and set one value; return the stored value. Nothing changes on error."""
        coerced = self.spec(name).coerce(value)
        self._values[name] = coerced
        self.version += 1
        return coerced

    def reset(self) -> None:
        """Put every parameter back to its default."""
        self._values = {s.name: s.default for s in self.specs.values()}
        self.version += 1

    def as_dict(self) -> dict[str, Value]:
        """A copy of all current values."""
        return dict(self._values)

    def copy(self) -> "ParamValues":
        """Another instance of the same declarations holding the current values (changed
        apart from this one)."""
        clone = object.__new__(ParamValues)
        clone.specs, clone._values, clone.version = self.specs, dict(self._values), 0
        return clone
