"""One point of a sweep: its scenario resolved, its key, and its run (headless, lockstep,
in-process with drivers: a :class:`Simulation` stepped by ``Stepper.tick``, no network).

This module imports no Dask: a worker process imports it to run :func:`run_point`, and the
benchmarks step points with it directly.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import time
import traceback
from dataclasses import dataclass, replace

from ..model.metrics import STATS, monitor_summary
from ..model.specs import DriverSetting, ParamSetting, ScenarioSpec
from ..model.validate import members


@dataclass(frozen=True)
class PointTask:
    """What a worker needs to run one point and one seed.

    Attributes:
        key: The point's key (:func:`point_key`).
        values: Axis name -> value (the results' axis columns).
        scenario: The resolved scenario.
        seed: The run's seed; duration: sim time to run, s.
        metrics: Metric names whose summary the row keeps.
        record: MCAP file to record to ("" = no recording).
    """

    key: str
    values: dict
    scenario: ScenarioSpec
    seed: int
    duration: float
    metrics: tuple[str, ...] = ()
    record: str = ""


def resolve(scenario: ScenarioSpec, axes, values: dict) -> ScenarioSpec:
    """``scenario`` with every axis set to its value in ``values``: a module parameter is one
    more ``param`` line of its robot section (a later line wins), a driver parameter one more
    pair of its driver, a setting a changed ``[SETTINGS]`` field."""
    robots = list(scenario.robots)
    settings = scenario.settings
    lines = [f"# sweep point: {', '.join(f'{k} = {v}' for k, v in values.items())}"]
    for axis in axes:
        value = values[axis.name]
        if axis.kind == "setting":
            settings = replace(settings, **{axis.param: value})
            continue
        spec, member = members(replace(scenario, robots=tuple(robots)))[axis.robot]
        i = next(k for k, r in enumerate(robots) if r.name == spec.name)
        if axis.module == "driver":
            robots[i] = replace(spec, drivers=tuple(
                _with(d, axis.param, value, member.name, spec.name) for d in spec.drivers))
        else:
            robots[i] = replace(spec, params=spec.params + (
                ParamSetting(axis.module, axis.param, value),))
    text = scenario.text + ("\n" if scenario.text and not scenario.text.endswith("\n") else "")
    return replace(scenario, robots=tuple(robots), settings=settings,
                   text=text + "\n".join(lines) + "\n")


def _with(driver: DriverSetting, name: str, value, member: str, section: str) -> DriverSetting:
    if driver.member not in ("", member, member[len(section) + 1:]):
        return driver
    return replace(driver, settings=driver.settings + ((name, value),))


#: The version of :func:`point_description`'s text: raised only when what makes a run changes
#: meaning (so that old rows must not count as done), never for a change of coopsim's code.
KEY_FORMAT = 1
_COMMENT = re.compile(r"(^|\s)#.*")  # as the file grammar's (formats/sections.py)


def point_key(scenario: ScenarioSpec, seed: int, duration: float, values: dict | None = None
              ) -> str:
    """The point's key: the first 24 hex digits of the SHA-256 of
    :func:`point_description` (UTF-8)."""
    text = point_description(scenario, seed, duration, values)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def point_description(scenario: ScenarioSpec, seed: int, duration: float,
                      values: dict | None = None) -> str:
    """The canonical text a point's key hashes (docs/sweeps.md, *Keys*): the key format, the
    base scenario's and its world's texts normalized (comments, blank lines and runs of white
    space dropped; the ``[WORLD] file`` path left out, so moving files keeps keys), each axis
    value as ``NAME = VALUE`` in the sweep's order, the seed and the duration (s). Python
    objects are never printed into it: a field added to a spec does not change any key."""
    lines = [f"coopsim point key {KEY_FORMAT}", "scenario:"]
    if scenario.text:
        lines += _normalized(scenario.text)
    else:  # a scenario built in code has no text: its fields are all there is
        lines.append(repr(_plain(replace(scenario, path="", name=""))))
    lines += ["world:", *_normalized(scenario.world.text)]
    lines += ["axes:", *(f"{name} = {_value(v)}" for name, v in (values or {}).items())]
    lines += [f"seed: {int(seed)}", f"duration: {float(duration)!r}"]
    return "\n".join(lines) + "\n"


def _normalized(text: str) -> list[str]:
    """The lines of a file that mean something: no comments, no blank lines, one space
    between words, and no ``file`` line in ``[WORLD]`` (a path)."""
    out, section = [], ""
    for raw in text.splitlines():
        line = " ".join(_COMMENT.sub("", raw).split())
        if line.startswith("["):
            section, _, line = line[1:].partition("]")
            out.append(f"[{section}]")
            line = line.strip()
        if line and not (section == "WORLD" and line.split()[0] == "file"):
            out.append(line)
    return out


def _value(value) -> str:
    """An axis value in the description: true/false, an integer, a float's shortest repr."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _plain(obj):
    """Dataclasses as nested tuples of (field, value), floats by repr: a stable text."""
    if dataclasses.is_dataclass(obj):
        return (type(obj).__name__,) + tuple((f.name, _plain(getattr(obj, f.name)))
                                             for f in dataclasses.fields(obj))
    if isinstance(obj, (list, tuple)):
        return tuple(_plain(v) for v in obj)
    return obj


def run_point(task: PointTask) -> dict:
    """Run one point headless in lockstep and return its results row (never raises: a run
    that raises gives a row with status ``error`` and the error in ``error``)."""
    from ..sim.simulation import Simulation
    from ..sim.stepper import Stepper

    row = {"key": task.key, **task.values, "seed": task.seed, "status": "ok", "error": "",
           "steps": 0, "sim_time": 0.0, "wall_time": 0.0, "ended": "",
           "recording": task.record}
    row.update({f"{m}.{s}": float("nan") for m in task.metrics for s in STATS})
    start = time.perf_counter()
    recorder = None
    try:
        sim = Simulation(task.scenario, seed=task.seed)
        stepper = Stepper(sim, mode="lockstep", speed=0)
        if task.record:
            recorder = _recorder(task, sim, stepper)
        while stepper.snapshot.time < task.duration - 1e-9 and not sim.ended:
            stepper.tick()
        snap = stepper.snapshot
        row.update(steps=snap.step, sim_time=snap.time, ended=sim.ended)
        summary, _ = monitor_summary(snap.rules, _monitors_rule())
        for m in task.metrics:
            for s in STATS:
                value = summary.get(m, {}).get(s)
                row[f"{m}.{s}"] = float("nan") if value is None else float(value)
    except Exception as exc:  # noqa: BLE001 -- a failing point is a row, the sweep goes on
        row.update(status="error", error=f"{type(exc).__name__}: {exc}",
                   traceback=traceback.format_exc(limit=8))
    finally:
        if recorder is not None:
            recorder.close()
    row["wall_time"] = time.perf_counter() - start
    return row


def _recorder(task: PointTask, sim, stepper):
    from ..recording.writer import Recorder

    settings = replace(task.scenario.settings, seed=task.seed, duration=task.duration,
                       mode="lockstep", engine=sim.engine)  # the engine it ran on, by label
    return Recorder(task.record, task.scenario, settings, task.seed, sim.dt).attach(stepper)


def _monitors_rule() -> str:
    """The label of the rule a ``[MONITORS]`` section brings (Rule.section), "" for none."""
    from ..model.plugins import RULES

    return next((label for label, cls in RULES.items() if cls.section == "monitors"), "")
