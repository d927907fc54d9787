"""The host of rules (ARGoS's loop functions): built from a scenario's ``[RULE_n]`` sections,
called before and after every step on the stepper thread."""

from __future__ import annotations

from ..model.driver import Rule
from ..model.errors import CoopsimError, SimulationError
from ..model.plugins import RULES
from ..model.specs import RuleSetting

class RuleError(SimulationError):
    """A rule raised; the message names the rule."""


class RuleHost:
    """The rules of one run, in section order.

    Args:
        scenario: Its ``rules`` are built (labels and values validated) and checked against it.

    Raises:
        RegistryError, ParameterError, SimulationError: an unknown rule, a bad value, or a
            scenario the rule cannot work with.
    """

    def __init__(self, scenario) -> None:
        self.rules = []
        labels = {s.label for s in scenario.rules}
        # Scenario sections that bring their rule ([EVENT_n], [MONITORS]): each rule says
        # which (Rule.section), so the host names none of them
        auto = tuple(RuleSetting(label) for label, cls in RULES.items()
                     if cls.section and getattr(scenario, cls.section, None)
                     and label not in labels)
        for setting in scenario.rules + auto:
            cls = RULES.get(setting.label)
            rule = cls(cls.values(dict(setting.settings)))
            rule.check(scenario)
            self.rules.append(rule)
        self.ended = ""

    def before(self, sim) -> None:
        """Every rule's ``before_step`` (those that keep the base one, which does nothing,
        are not called: a guarded call a rule a step)."""
        for rule in self.rules:
            if type(rule).before_step is not _NO_BEFORE:
                _guard(rule, lambda: rule.before_step(sim))

    def after(self, sim, snap) -> None:
        """Every rule's ``after_step``; the first rule that ends the run gives the reason."""
        for rule in self.rules:
            _guard(rule, lambda: rule.after_step(sim, snap))
            if rule.ended and not self.ended:
                self.ended = f"{rule.label}: {rule.ended}"

    def fields(self) -> dict:
        """Rule label -> its fields (a label used twice gets ``#2``, ``#3``...); a rule that
        declares an :attr:`~coopsim.model.driver.Rule.overlay` has it as field ``overlay``."""
        out: dict = {}
        for rule in self.rules:
            key, n = rule.label, 2
            while key in out:
                key, n = f"{rule.label}#{n}", n + 1
            fields = rule.fields()
            out[key] = {"overlay": rule.overlay, **fields} if rule.overlay else fields
        return out


_NO_BEFORE = Rule.before_step


def _guard(rule, call) -> None:
    try:
        call()
    except CoopsimError as exc:
        raise RuleError(f"rule {rule.label}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 -- a plugin's bug becomes a paused run, not a crash
        raise RuleError(f"rule {rule.label} raised {type(exc).__name__}: {exc}") from exc
