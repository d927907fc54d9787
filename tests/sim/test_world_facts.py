"""Rules and modules see what the world holds, not only where: every snapshot carries each
object's spec (mass, kind, colour) beside its pose, and every sensing frame the targets'
colours and the objects' specs, on both engines. A plugin module and rule are registered in a
fresh process (as a package's entry points would) and report what they saw."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = '''
import json, sys
import numpy as np
from dataclasses import replace
from coopsim.model.driver import Rule
from coopsim.model.module import Module
from coopsim.model.plugins import MODULES, ROBOT_TYPES, RULES
from coopsim.model.specs import RuleSetting
from coopsim.plugins.robots.single import Single, chassis
from coopsim.model.robot_type import Assembly
from coopsim.sim.simulation import Simulation
sys.path.insert(0, "tests")
from helpers import box, cylinder, robot, scenario, step_by_hand, target

SEEN = {}

class Looker(Module):
    label = "looker"
    fields = ("n",)

    @classmethod
    def sense(cls, frame, rows, p, prev):
        SEEN["targets"] = list(frame.target_colors)
        SEEN["objects"] = [(o.name, o.shape, o.mass, list(o.color)) for o in frame.objects]
        return np.full((len(rows), 1), float(len(frame.objects)))

class LookBot(Single):
    label = "lookbot"
    modules = ("motors", "looker")

    @classmethod
    def build(cls, spec):
        body, member = chassis(spec.name, "chassis", spec.position[0], spec.position[1],
                               spec.yaw, cls.modules)
        return Assembly((member,), (body,))

class Heavy(Rule):
    label = "heavy"
    kg = None

    def after_step(self, sim, snap):
        self.kg = sum(s.mass for s in snap.object_specs if s.shape == "box")

    def fields(self):
        return {"box_kg": self.kg}

MODULES.register("looker")(Looker)
ROBOT_TYPES.register("lookbot")(LookBot)
RULES.register("heavy")(Heavy)
engine = sys.argv[1]
crate = replace(box("CRATE", 2.0, 0.0, mass=3.5 if engine == "pymunk" else 0.0),
                color=(200, 30, 30))
spec = replace(scenario([robot("r1", type="lookbot")],
                        [crate, cylinder("POST", -2.0, 1.0)],
                        [target("red", 1.0, 1.0), target("blue", -1.0, -1.0)]),
               rules=(RuleSetting("heavy"),))
sim = Simulation(spec, engine=engine)
step_by_hand(sim, 1)
snap = sim.snapshot
print(json.dumps({"seen": SEEN, "specs": [[s.name, s.shape, s.mass, list(s.color)]
                                          for s in snap.object_specs],
                  "crate": snap.object_spec("CRATE").mass, "rule": snap.rules["heavy"],
                  "targets": [t.color for t in snap.targets],
                  "reading": snap.reading("r1", "looker").tolist()}))
'''

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.mark.parametrize("engine", ["pymunk", "kinematic"])
def test_objects_and_targets_are_seen_with_mass_kind_and_colour(engine):
    done = subprocess.run([sys.executable, "-c", SCRIPT, engine], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    mass = 3.5 if engine == "pymunk" else 0.0
    objects = [["CRATE", "box", mass, [200, 30, 30]], ["POST", "cylinder", 0.0, [150, 150, 150]]]
    assert got["seen"] == {"targets": ["red", "blue"], "objects": objects}
    assert got["specs"] == objects and got["crate"] == mass
    assert got["rule"] == {"box_kg": mass} and got["targets"] == ["red", "blue"]
    assert got["reading"] == [2.0]
