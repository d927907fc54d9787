"""A third-party module written from docs/plugins.md alone works in 2D and 3D: the doc's
``Drift`` (per-kind state in ``state_fields``, its noise from ``noise_draws``) is registered in a
fresh process, as a package's entry point would, and run on the kinematic engine (a 2D chassis)
and on mujoco (a free 3D body): its state persists by robot, its noise is the step's one draw,
the same for the same seed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test starts a Python process

ROOT = Path(__file__).resolve().parents[2]

RUN = '''
import json, sys
import numpy as np
from coopsim.model.plugins import MODULES, ROBOT_TYPES
from coopsim.model.robot_type import Assembly, BodySpec, MemberSpec, RobotType, ShapeSpec
from coopsim.sim.simulation import Simulation
sys.path.insert(0, "tests")
from helpers import chassis_type, robot, scenario, step_by_hand

MODULES.register("drift")(Drift)
chassis_type("drifter", ("motors", "drift"))

class Hover(RobotType):
    """A free 3D body carrying the module (gravity alone moves it)."""
    label, modules, footprint = "hover", ("drift",), 0.25

    @classmethod
    def build(cls, spec):
        body = BodySpec("frame", "dynamic", 1.5, (ShapeSpec("circle", radius=0.25),),
                        spec.position[:2], spec.yaw, free=True, z=1.0, height=0.1)
        return Assembly((MemberSpec(spec.name, "frame", ("drift",), 0.25),), (body,))

ROBOT_TYPES.register("hover")(Hover)
engine, kind = sys.argv[1], sys.argv[2]

def run(noise):
    bots = [robot(n, x, 0.0, type=kind, params=[("drift", "walk", 0.01),
                                                ("drift", "noise", noise)])
            for n, x in (("a", -1.0), ("b", 1.0))]
    sim = Simulation(scenario(bots, seed=5), engine=engine)
    step_by_hand(sim, 5)
    snap = sim.snapshot
    return snap, sim

snap, sim = run(0.0)
clean = [(snap.reading(n, "drift") - snap.poses[snap.index[n], :2]).tolist() for n in ("a", "b")]
steps = sim.states.get("drift").arrays["steps"].tolist()
noisy1, noisy2 = run(0.05)[0], run(0.05)[0]
same = all(np.array_equal(noisy1.reading(n, "drift"), noisy2.reading(n, "drift"))
           for n in ("a", "b"))
moved = float(np.abs(noisy1.reading("a", "drift") - noisy1.poses[noisy1.index["a"], :2] - 0.06).max())
print(json.dumps({"clean": clean, "steps": steps, "same": same, "noise": moved,
                  "3d": snap.pose3d is not None}))
'''


@pytest.mark.parametrize("engine, kind", [("kinematic", "drifter"), ("mujoco", "hover")])
def test_the_doc_s_module_with_state_and_noise_works_in_2d_and_3d(engine, kind):
    text = (ROOT / "docs" / "plugins.md").read_text()
    block = next(b for b in re.findall(r"```py\n(.*?)```", text, flags=re.S)
                 if "class Drift(Module)" in b)
    code = "\n".join(line[2:] for line in block.splitlines()) + RUN  # the bullet's indent
    done = subprocess.run([sys.executable, "-c", code, engine, kind], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    # measured at the start and after each of 5 steps: 6 drifts of 0.01 m, kept per robot
    assert got["steps"] == [6.0, 6.0]
    assert sum(got["clean"], []) == pytest.approx([0.06] * 4, abs=1e-12)
    assert got["same"] and 0.0 < got["noise"] < 0.5   # the same seed: the same noise
    assert got["3d"] == (engine == "mujoco")
