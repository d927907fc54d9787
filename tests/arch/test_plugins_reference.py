"""docs/plugins.md's reference section says what the code declares: every method a plugin
implements has the documented parameters, and every member of ``sim`` the section offers exists
with its parameters (a doc that disagrees with the code is a bug). The classes' fields are in
the generated reference (docs/reference/contract.md)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from coopsim.model import capabilities
from coopsim.model.driver import Rule
from coopsim.model.metric_kind import MetricKind
from coopsim.model.module import Module
from coopsim.model.robot_type import RobotType

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "docs" / "plugins.md").read_text()
SECTION = TEXT[TEXT.index("## Reference: the contract's classes"):]
SECTION = SECTION[:SECTION.index("\n## ", 10)]
BASES = {"RobotType": RobotType, "Module": Module, "Rule": Rule, "MetricKind": MetricKind,
         **{kind.__name__: kind for kind in capabilities.CAPABILITIES}}
CALL = re.compile(r"`(\w+)\.(\w+)\(([^)]*)\)`")


def subsections() -> dict[str, str]:
    """Heading line -> its text, for the section's ### parts."""
    parts = re.split(r"^(### .*)$", SECTION, flags=re.M)
    return {parts[k]: parts[k + 1] for k in range(1, len(parts) - 1, 2)}


def rows(text: str) -> list[list[str]]:
    """The cells of a markdown table's body rows."""
    lines = [ln for ln in text.splitlines() if ln.startswith("| ")]
    return [[c.strip() for c in ln.strip("|").split(" | ")] for ln in lines[1:]
            if not ln.startswith("|---")]


def documented_calls(heading: str) -> list[tuple[str, str, list[str]]]:
    body = subsections()[heading]
    out = []
    for row in rows(body):
        for cls, method, args in CALL.findall(row[0]):
            out.append((cls, method, [a.strip() for a in args.split(",") if a.strip()]))
    return out


def parameters(fn) -> list[str]:
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.name in ("self", "cls"):
            continue
        out.append(("*" if p.kind is p.VAR_POSITIONAL else "") + p.name)
    return out


def test_every_method_a_plugin_implements_has_the_documented_parameters():
    calls = documented_calls("### The methods a plugin implements")
    assert {(c, m) for c, m, _ in calls} >= {("Module", "act"), ("Module", "sense"),
                                             ("RobotType", "build"), ("Rule", "after_step")}
    for cls, method, args in calls:
        assert parameters(getattr(BASES[cls], method)) == args, f"{cls}.{method}"


def test_what_act_may_use_of_sim_exists_with_the_documented_parameters():
    from coopsim.sim.simulation import Simulation

    from helpers import robot, scenario

    sim = Simulation(scenario([robot("r1")]))
    body = subsections()["### What `act` and rules may use of `sim`"]
    members = [re.match(r"`(\w+)(?:\(([^)]*)\))?`", r[0]).groups() for r in rows(body)]
    assert {m for m, _ in members} >= {"snapshot", "attach", "detach", "extra"}
    for member, args in members:
        assert hasattr(sim, member), member
        if args is not None:
            assert parameters(getattr(sim, member)) == [a.strip() for a in args.split(",")], \
                member
