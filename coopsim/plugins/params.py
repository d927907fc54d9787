"""A shorthand the built-in drivers and rules share for their typed parameters."""

from __future__ import annotations

from ..model.params import ParamSpec


def number(name: str, description: str, default: float, lo: float, hi: float,
           unit: str = "") -> ParamSpec:
    """A ``float`` parameter: ``description`` says its unit, [lo, hi] its range."""
    return ParamSpec(name, "float", description, default, lo, hi, unit)
