"""The ``[TASK]`` section of a scenario as specs: what a learner is rewarded for and when an
episode ends (docs/files.md, docs/learning.md). Built on the ``[MONITORS]`` metrics: every term
names a metric; the environments in :mod:`coopsim.env` evaluate them after each step.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Comparison operators a ``terminate METRIC OP VALUE`` line may use.
OPERATORS = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class RewardTerm:
    """``reward WEIGHT METRIC [ROBOT]``: ``WEIGHT * metric`` is added to the step's reward of
    ``robot`` (every agent when ""). A metric that is NaN this step adds 0.

    Attributes:
        weight: Factor (reward units per metric unit). metric: A ``[MONITORS]`` metric name.
        robot: The agent it counts for ("" = every agent). line: Line in the scenario file.
    """

    weight: float
    metric: str
    robot: str = ""
    line: int = 0


@dataclass(frozen=True)
class EndTerm:
    """``terminate ended`` (a rule ended the run) or ``terminate METRIC OP VALUE``.

    Attributes:
        metric: A ``[MONITORS]`` metric name, or "" for ``ended``.
        op: One of :data:`OPERATORS` ("" for ``ended``). value: The threshold.
        line: Line in the scenario file.
    """

    metric: str = ""
    op: str = ""
    value: float = 0.0
    line: int = 0

    def holds(self, metric: float, ended: str) -> bool:
        """Whether the episode terminates, given this term's metric value and why a rule
        ended the run ("" while it goes on). A NaN metric never terminates."""
        if not self.metric:
            return bool(ended)
        if metric != metric:  # NaN
            return False
        return {"<": metric < self.value, "<=": metric <= self.value,
                ">": metric > self.value, ">=": metric >= self.value}[self.op]


@dataclass(frozen=True)
class TaskSpec:
    """The ``[TASK]`` section.

    Attributes:
        rewards: Reward terms, summed (file order). ends: Termination terms (any one ends).
        truncate: Sim time after which an episode is truncated, s (None: never by time).
        line: Line of the section header.
    """

    rewards: tuple[RewardTerm, ...] = ()
    ends: tuple[EndTerm, ...] = ()
    truncate: float | None = None
    line: int = 0
