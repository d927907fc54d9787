"""Run examples/plugin-kernel's beacon scenario for a number of steps and print what the test
checks, one JSON object: the step's path (fused with stages, or plain), the robots' poses and
every reading of the plugin's kinds and of gps at each step; with ``plain``, every kind on the
plain path (its own kernel, composing off). Run with coopsim-beacon
registered (installed, or its entry points on sys.path: tests/examples/test_plugin_kernel.py).

Usage: python kernel_probe.py SCENARIO STEPS [plain]
"""

from __future__ import annotations

import json
import sys

from coopsim.formats.files import load
from coopsim.model.plugins import MODULES
from coopsim.sim import fused
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper


def main() -> None:
    path, steps = sys.argv[1], int(sys.argv[2])
    fused.ENABLED = sys.argv[3:] != ["plain"]
    sim = Simulation(load(path), seed=1, engine="kinematic")
    st = Stepper(sim, mode="lockstep")
    for name in sim.snapshot.robots:
        st.slots.put(name, "motors", (0.3, 0.25), attach=False)
    out = {"origin": MODULES.origin("beacon").package, "path": sim.step_path, "steps": []}
    snap = sim.snapshot  # the readings at the start, then each step's
    for k in range(steps + 1):
        if k:
            snap = st.tick()
        out["steps"].append({"pose": snap.poses.tolist(),
                             **{k: snap.readings[k].tolist()
                                for k in ("beacon", "chime", "gps", "compass", "odometry")}})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
