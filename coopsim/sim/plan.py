"""The step as a plan: what each phase of a step runs, worked out once per layout or parameter
change, never per step.

A :class:`StepPlan` names the phases in order (commands, actuators, physics, sensors, rules), the
module kinds that act (those with commands that some robot carries: their rows and parameter
arrays) and the kinds that sense (:meth:`coopsim.sim.sensing.Sensors.plan`: rows, parameter
arrays, whether a rate masks their rows, the noise each draws), and whether the step is
composed (the kinds' kernels in one compiled call each side of the physics:
:mod:`coopsim.sim.compose`, chosen by :mod:`coopsim.sim.fused`), with the kinds of Python
code as stages before and after it, or the plain path. A kind that declares compiled kernels
(:class:`~coopsim.model.capabilities.ModuleKernel`) is computed by them on every path (the base
``Module`` runs them). On the plain path the core
makes a number of Python calls that grows with the module kinds of the world, never with its robots:
one ``actuate`` per acting kind, one ``sense``/``measure`` per sensing kind, one generator call
for all the noise. What no module asks for (ray geometry, contacts) is never built
(:meth:`~coopsim.model.module.Frame.defer`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.plugins import MODULES
from .fused import choose

#: The phases of one step, in the order :meth:`coopsim.sim.stepper.Stepper.tick` runs them.
PHASES = ("command", "actuate", "physics", "sense", "rules")


@dataclass(frozen=True)
class StepPlan:
    """One layout's and parameter set's step.

    Attributes:
        key: What it was worked out for (the parameter table and its layout and epoch).
        actuators: (label, module, rows, values, every) of each kind with commands that some
            robot carries, in registry order: ``rows`` the robots carrying it (ascending),
            ``values`` its parameter arrays on those rows, ``every`` whether every robot does
            (its command table is then handed over without a gather).
        sensing: The sensing plan's entries (:meth:`coopsim.sim.sensing.Sensors.plan`).
        fused: The composed step the step takes (:func:`coopsim.sim.fused.choose`: the
            calls of the kinds' kernels, :mod:`coopsim.sim.compose`), or None: the plain
            path, one call per kind per phase.
        path: Which path and why, one line: ``composed (gps, compass, ...)``, with ``+
            stages (x, ...)`` when kinds of Python code run around it, or ``plain (no module
            has a kernel)`` (``coopsim run`` prints it once).
        before: The acting entries of the kinds the call leaves out (run before it).
        after: The sensing entries of the kinds the call leaves out (measured after it).
        phases: :data:`PHASES`.
    """

    key: tuple
    actuators: tuple
    sensing: tuple
    fused: object = None
    path: str = ""
    before: tuple = ()
    after: tuple = ()
    phases: tuple = PHASES

    @classmethod
    def build(cls, key: tuple, params, commands, n: int, sensors, world) -> "StepPlan":
        """The plan for parameter table ``params`` (its rows and values), the command tables'
        labels ``commands``, ``n`` robots, and ``sensors``'s sensing plan for ``world``."""
        acting = []
        for label in commands:
            rows = params.rows.get(label)
            if rows is not None and len(rows):
                acting.append((label, MODULES.get(label), rows, params.values[label],
                               len(rows) == n))
        sensing = tuple(sensors.plan(params, world))
        found, path, before, after = choose(tuple(acting), sensing, world)
        return cls(key, tuple(acting), sensing, found, path, before, after)


