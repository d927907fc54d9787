"""The ``[TASK]`` section of a scenario (docs/files.md): reward and episode ends for learning,
built on the ``[MONITORS]`` metrics::

    [TASK]
    reward      -1 dist             # WEIGHT METRIC [ROBOT]: WEIGHT * metric each step
    reward      10 reached robot1   # this term counts for robot1 only
    terminate   ended               # a rule ended the run
    terminate   reached >= 1        # METRIC OP VALUE (OP: < <= > >=)
    truncate    20                  # s of sim time
"""

from __future__ import annotations

from dataclasses import replace

from ..model.errors import ScenarioError
from ..model.task import OPERATORS, EndTerm, RewardTerm, TaskSpec
from ..model.validate import members
from .sections import Bad, Key, Section, about, fixed, number, real

_IDENT_FIRST = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"


def _metric_name(tok: str) -> str:
    if not tok or tok[0] not in _IDENT_FIRST or not tok.replace("_", "a").isalnum():
        raise Bad(f"metric name must be an identifier, got {tok!r}")
    return tok


def _reward(key: str, tokens: list, rest: str) -> RewardTerm:
    """``reward WEIGHT METRIC [ROBOT]``."""
    if len(tokens) not in (2, 3):
        raise Bad(f"reward needs 2 or 3 values (weight metric [robot]), got {len(tokens)}")
    with about("reward weight"):
        weight = number(tokens[0])
    return RewardTerm(weight, _metric_name(tokens[1]), tokens[2] if len(tokens) == 3 else "")


def _terminate(key: str, tokens: list, rest: str) -> EndTerm:
    """``terminate ended`` or ``terminate METRIC OP VALUE``."""
    if tokens == ["ended"]:
        return EndTerm()
    if len(tokens) != 3:
        raise Bad("terminate needs 'ended' or 3 values (metric op value), "
                  f"got {len(tokens)}")
    if tokens[1] not in OPERATORS:
        raise Bad(f"terminate operator must be one of {' '.join(OPERATORS)}, got {tokens[1]!r}")
    with about("terminate value"):
        value = number(tokens[2])
    return EndTerm(_metric_name(tokens[0]), tokens[1], value)


TASK_KEYS = {
    "reward": Key(_reward, repeat=True),
    "terminate": Key(_terminate, repeat=True),
    "truncate": Key(fixed(("s",), real("> 0", lambda v: v > 0)),
                    doc="default: [SETTINGS] duration, else never"),
}


def build_task(section: Section, path) -> TaskSpec:
    """The TaskSpec of a ``[TASK]`` section (terms keep their lines)."""
    rewards = tuple(replace(v, line=n) for k, v, n in section.entries if k == "reward")
    ends = tuple(replace(v, line=n) for k, v, n in section.entries if k == "terminate")
    return TaskSpec(rewards, ends, section.get("truncate"), section.line)


def check_task(scenario) -> None:
    """Check the task against the scenario: every metric is a ``[MONITORS]`` metric, every
    robot a robot of the scenario.

    Raises:
        ScenarioError: at the line of the first problem.
    """
    task = getattr(scenario, "task", None)
    if task is None:
        return
    known = {m.name for m in scenario.monitors.metrics} if scenario.monitors else set()
    robots = members(scenario)
    for term in sorted(task.rewards + task.ends, key=lambda t: t.line):
        if term.metric and term.metric not in known:
            raise ScenarioError(term.line, f"unknown metric {term.metric!r} (the [MONITORS] "
                                           f"metrics: {', '.join(sorted(known)) or 'none'})")
        if getattr(term, "robot", "") and term.robot not in robots:
            raise ScenarioError(term.line, f"no robot named {term.robot!r}")
