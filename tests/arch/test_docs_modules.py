"""The figures a client author reads in the prose about engines and arms are what the code does:
every engine is named in both engine lists and has its reference section, the mujoco
engine docstring's substep rule is the engine's, the
motion-reply paragraph lists every motion command, the grab reach, mocap's noise and
set_thrust_attitude's ranges are the declared ones (in the modules' docstrings: each module's
commands and parameters are in the generated reference, docs/reference/modules.md)."""

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


def test_both_engine_lists_name_every_engine():
    files = next(line for line in (ROOT / "docs/files.md").read_text().splitlines()
                 if line.startswith("| `engine`"))
    world = ROBOTS.split("## The world")[1].split("\n## ")[0]
    reference = (ROOT / "docs/reference/plugins.md").read_text()  # each engine's docstring
    for label in ENGINES:
        assert f"`{label}`" in files, label
        assert f"`{label}`" in world, label
        assert f"\n### {label}\n" in reference.split("## Engines")[1], label


def test_the_mujoco_docstrings_substep_rule_is_the_engines():
    pytest.importorskip("mujoco")
    from coopsim.model.specs import FloorSpec
    from coopsim.physics.mujoco.engine import MAX_SUBSTEP, MujocoEngine

    row = " ".join(MujocoEngine.__doc__.split())  # the engine's reference (its docstring)
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
    # each command's wire description is its module's docstring (*On the wire*, the generated
    # module reference)
    wire = {label: " ".join(MODULES.get(label).__doc__.split()).split("On the wire")[1]
            for label in ("gripper", "mocap", "rotors")}
    grab = wire["gripper"].split("``grab`` (1000)")[1]
    assert f"(default {ground:g})" in grab and f"(default {arm_reach:g} for these types)" in grab
    noise = {p.name: p.default for p in MODULES.get("mocap").params}
    mocap = wire["mocap"].split("``read`` (3200)")[1]
    assert noise["noise"] == noise["angle_noise"] == 0 and "exact by default" in mocap
    attitude = wire["rotors"].split("``set_thrust_attitude`` (3002)")[1]
    assert f"±{math.pi / 2:.4f}" in attitude and f"[−{SANITY_RATE:g}, {SANITY_RATE:g}] rad/s" \
        in attitude
    rates = wire["rotors"].split("``set_thrust_rates`` (3001)")[1].split("- ``")[0]
    for kind in ("crazyflie", "quadrotor"):
        rotors = ROBOT_TYPES.get(kind).defaults["rotors"]
        top = 4 * rotors["kf"] * rotors["max_speed"] ** 2
        assert f"{top:.3g} N for a ``{kind}``" in rates, (kind, top)
