"""The code in docs/plugins.md works: its module, robot type, driver and rule are registered in
a fresh process and run in a simulation together, and the module's observation space reaches a
learner (a doc that disagrees with the code is a bug)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test starts a Python process

ROOT = Path(__file__).resolve().parents[2]

RUN = '''
import dataclasses, sys
from coopsim.model.plugins import DRIVERS, MODULES, ROBOT_TYPES, RULES
from coopsim.model.specs import DriverSetting, RuleSetting
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper
sys.path.insert(0, "tests")
from helpers import box, robot, scenario

MODULES.register("nearest")(Nearest)
ROBOT_TYPES.register("scout")(Scout)
DRIVERS.register("keep_away")(KeepAway)
RULES.register("stop_after_bumps")(StopAfterBumps)

a = dataclasses.replace(robot("a", 0, 0, type="scout"), drivers=(DriverSetting("keep_away",
                        (("gap", 3.0),)),))
b = robot("b", 0.8, 0.0, type="scout")
spec = dataclasses.replace(scenario([a, b], [box("W", -1.0, 0, size=(0.3, 4))]),
                           rules=(RuleSetting("stop_after_bumps", (("limit", 1),)),))
stepper = Stepper(Simulation(spec), mode="lockstep")
from coopsim.env.mapping import agent_map
amap = agent_map(stepper.sim.world, "a", ("nearest",))   # a learner's view: the module's hooks
assert amap.high[0].tolist() == [3.0, 3.141592653589793] and amap.motion == "motors", amap
d0 = stepper.snapshot.reading("a", "nearest")[0]
assert abs(d0 - 0.8) < 1e-9, d0
stepper.start(max_steps=4000)
assert stepper.wait_finished(60)
snap = stepper.snapshot
stepper.stop()
assert "bumps at t =" in stepper.finished, stepper.finished
assert snap.rules["stop_after_bumps"]["bumps"] >= 1
assert snap.reading("a", "nearest")[0] > d0   # it backed away from b before the wall
print("ok", stepper.finished)
'''


def test_the_plugins_doc_code_runs():
    text = (ROOT / "docs" / "plugins.md").read_text()
    # the page's whole examples start at the margin; an indented block is a sketch in a list
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) == 4  # module, robot type, driver, rule
    code = "\n".join(blocks) + RUN
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok")
