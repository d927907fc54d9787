"""``events``: a scenario's timed events (``[EVENT_n]``), carried out between two steps.

A rule, because a rule already has what events need: it is called on the stepper thread
between two steps (``before_step``), its fields reach ``/sim state`` and every recorded step,
and its ``check`` runs when the scenario loads. The simulation hosts it by itself whenever the
scenario has events (docs/files.md); only the layout reset lives in the simulation.

An event at time T is carried out before the first step that starts within half a step of T:
with a constant dt, between step k and step k + 1 where k = floor(T / dt + 1/2). A dt change
keeps the events' times, not their step numbers.
"""

from __future__ import annotations

import logging

from ...model.driver import Rule
from ...model.errors import ParameterError
from ...model.validate import check_events, matching_targets

log = logging.getLogger(__name__)

_EARLY = 0.5 - 1e-6  # steps: an event is due once its time is less than half a step away


class Events(Rule):
    """Carries out the scenario's ``[EVENT_n]`` sections at their times.

    Fields: ``events``, one ``{name, at, done, step, time}`` per event in time order (``step``
    and ``time``: when it was carried out, null while pending), and ``applied``: the events
    carried out just before this step.
    """

    label = "events"
    section = "events"  # a scenario with [EVENT_n] sections brings this rule
    timeline = "events"  # the field the viewer's replay bar and the Foxglove log read
    description = "timed events of the scenario ([EVENT_n]: parameters, reset, insert, remove)"

    def __init__(self, params) -> None:
        super().__init__(params)
        self.scenario = None
        self.events: tuple = ()
        self.done: list[tuple[int, float] | None] = []
        self.applied: list[str] = []

    def check(self, scenario) -> None:
        check_events(scenario)
        self.scenario = scenario
        self.events = scenario.events
        self.done = [None] * len(self.events)

    def before_step(self, sim) -> None:
        self.applied = []
        for i, event in enumerate(self.events):
            if self.done[i] is None and (event.time - sim.time) / sim.dt < _EARLY:
                self._apply(sim, event)
                self.done[i] = (sim.step, sim.time)
                self.applied.append(event.name)

    def _apply(self, sim, event) -> None:
        if event.resets:
            sim.restore_layout()
        layout = False
        for action in event.actions:
            if action.kind == "param":
                _set_param(sim, event, action)
            elif action.kind in ("insert", "remove"):
                self._change(sim.world, action)
                layout = True
        if layout:
            sim.relayout()

    def _change(self, world, action) -> None:
        if action.target is None and action.kind == "insert":
            spec = next(o for o in self.scenario.world.objects + self.scenario.objects
                        if o.name == action.name)
            world.add_object(spec)
        elif action.target is None:
            world.remove_object(action.name)
        elif action.kind == "insert":
            world.add_target(action.target)
        else:
            for index in reversed(matching_targets(world.targets, action.target, action.exact)):
                world.remove_target(index)

    def fields(self) -> dict:
        return {"events": [{"name": e.name, "at": e.time, "done": d is not None,
                            "step": None if d is None else d[0],
                            "time": None if d is None else d[1]}
                           for e, d in zip(self.events, self.done)],
                "applied": list(self.applied)}


def _set_param(sim, event, action) -> None:
    """Carry out one ``param`` action; a value the module refuses together with the robot's
    values now (a client changed another since ``coopsim check`` saw the file: an airframe's
    thrust-to-weight) is left out with a warning: the run goes on."""
    try:
        sim.set_param(action.robot, action.module, action.name, action.value)
    except ParameterError as exc:
        log.warning("[%s] at %g s: %s.%s.%s %s not set: %s", event.name, event.time,
                    action.robot, action.module, action.name, action.value, exc)
