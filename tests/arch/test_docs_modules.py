"""What a client author reads about the modules, engines and arms is what the code does (issue
45, item 10): docs/robots.md's module table has a row for every built-in module naming each of
its commands and parameters, both engine lists name every engine, the mujoco row's substep rule
is the engine's, the motion-reply paragraph lists every motion command, the grab reach, mocap's
noise and set_thrust_attitude's ranges are the declared ones."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

import coopsim.plugins  # noqa: F401 -- registers the built-in modules, engines and types
from coopsim.model.plugins import ENGINES, MODULES, ROBOT_TYPES

ROOT = Path(__file__).resolve().parents[2]
ROBOTS = (ROOT / "docs/robots.md").read_text()
PROTOCOL = (ROOT / "docs/protocol.md").read_text()
BUILT_IN = {label: m for label, m in MODULES.items()
            if m.__module__.startswith("coopsim.plugins.modules.")}


def _module_rows() -> dict[str, str]:
    section = ROBOTS.split("\n## Modules")[1].split("\n## ")[0]
    return {m[1]: m[0] for m in re.finditer(r"^\| `(\w+)` \|.*$", section, re.M)}


def _named(param: str, row: str) -> bool:
    """``param`` is in backticks in ``row``, or in a numbered range (`angle0`..`angle7`)."""
    if f"`{param}`" in row:
        return True
    stem, digits = re.fullmatch(r"(\D+)(\d*)", param).groups()
    return bool(digits) and any(int(lo) <= int(digits) <= int(hi) for lo, hi in
                                re.findall(rf"`{stem}(\d+)`\.\.`{stem}(\d+)`", row))


@pytest.mark.parametrize("label", sorted(BUILT_IN))
def test_the_module_table_names_every_command_and_parameter_of(label):
    row = _module_rows().get(label)
    assert row, f"docs/robots.md's module table has no row for {label}"
    rates = ROBOTS.split("**Update rates.**")[1].split("\n\n")[0]
    for command in BUILT_IN[label].commands:
        assert f"`{command.name}` {command.id}" in row, (label, command.name)
    for spec in BUILT_IN[label].params:
        if spec.name == "rate" and f"`{label}`" in rates:
            continue  # the update-rate paragraph names it for every sensor it lists
        assert _named(spec.name, row), (label, spec.name)


def test_both_engine_lists_name_every_engine():
    files = next(line for line in (ROOT / "docs/files.md").read_text().splitlines()
                 if line.startswith("| `engine`"))
    table = ROBOTS.split("## The world")[1].split("\n## ")[0]
    for label in ENGINES:
        assert f"`{label}`" in files, label
        assert re.search(rf"^\| `{label}`( \(default\))? \|", table, re.M), label


def test_the_mujoco_rows_substep_rule_is_the_engines():
    pytest.importorskip("mujoco")
    from coopsim.model.specs import FloorSpec
    from coopsim.physics.mujoco_engine import MAX_SUBSTEP, MujocoEngine

    row = next(line for line in ROBOTS.splitlines() if line.startswith("| `mujoco` |"))
    assert f"n = ceil(dt / {MAX_SUBSTEP * 1000:g} ms)" in row
    engine = MujocoEngine(FloorSpec(4.0, 4.0))
    words = {2: "two", 3: "three", 4: "four", 1: "one", 20: "twenty"}
    for dt, n in ((0.02, 4), (0.01, 2), (0.012, 3), (0.002, 1), (0.1, 20)):
        engine.step(dt)
        assert engine.model.opt.timestep == pytest.approx(dt / n), dt
        assert re.search(rf"{dt:g} s[^,]*? {words[n]}", row), (dt, n)
    assert "a gripper is refused" not in row and "grasps" in row


def test_the_motion_reply_paragraph_lists_every_motion_command():
    para = PROTOCOL.split("### Motion replies and lockstep")[1].split("\n\n")[1]
    listed = set()
    for lo, hi in re.findall(r"(\d+)-(\d+)", para):
        listed |= set(range(int(lo), int(hi) + 1))
    motion = {c.id for m in BUILT_IN.values() for c in m.commands if c.kind == "motion"}
    assert listed == motion


def test_grab_reach_mocap_noise_and_attitude_ranges_are_the_declared_ones():
    from coopsim.plugins.modules.rotors import SANITY_RATE

    arm_reach = ROBOT_TYPES.get("irb120").defaults["gripper"]["reach"]
    ground = next(p.default for p in MODULES.get("gripper").params if p.name == "reach")
    tutorial = (ROOT / "docs/tutorial.md").read_text()
    assert f"`gripper.reach`, {arm_reach:g} m on the arms" in tutorial
    grab = next(line for line in PROTOCOL.splitlines() if line.startswith("| 1000 | gripper"))
    assert f"(default {ground:g})" in grab and f"(default {arm_reach:g} for these types)" in grab
    noise = {p.name: p.default for p in MODULES.get("mocap").params}
    mocap = next(line for line in PROTOCOL.splitlines() if line.startswith("| 3200 | mocap"))
    assert noise["noise"] == noise["angle_noise"] == 0 and "exact by default" in mocap
    attitude = next(line for line in PROTOCOL.splitlines() if line.startswith("| 3002 |"))
    assert f"±{math.pi / 2:.4f}" in attitude and f"[−{SANITY_RATE:g}, {SANITY_RATE:g}] rad/s" \
        in attitude
    rates = next(line for line in PROTOCOL.splitlines() if line.startswith("| 3001 |"))
    for kind in ("crazyflie", "quadrotor"):
        rotors = ROBOT_TYPES.get(kind).defaults["rotors"]
        top = 4 * rotors["kf"] * rotors["max_speed"] ** 2
        assert f"{top:.3g} N for a `{kind}`" in rates, (kind, top)
