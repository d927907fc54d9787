"""Probes of the coopsim-arm plugin, run by tests/examples/test_plugin_arm.py with the python of
a temporary venv where coopsim and the plugin are installed (not the test's own interpreter).

Each subcommand prints one JSON object on stdout:

* ``reach SCENARIO``: start a lockstep Run of 5 s in this process, let the in-process ``reach``
  driver work, then read arm1's tip, joints and the targets over the network.
* ``drive ENDPOINT``: drive arm2 of a running simulation over the network: joint angles with
  the Python client, a bad command, then the ``reach`` driver hosted by ``run_controller``.
"""

from __future__ import annotations

import json
import sys

from coopsim.client import Client, RemoteError, run_controller

ANGLES = (0.6, -0.9, 0.7)  # rad, arm2's pose for the forward-kinematics check
GOAL = (0.5, 0.4)  # m, world frame: where run_controller's reach takes arm2's tip


def reach(path: str) -> dict:
    """Run the scenario 5 s in lockstep; arm1's driver reaches for the red target."""
    from coopsim.app.run import Run, RunOptions, load_scenario_or_world

    options = RunOptions(mode="lockstep", duration=5.0, port=0, controllers=False)
    with Run(load_scenario_or_world(path), options) as live:
        live.start()
        assert live.stepper.wait_finished(60.0), "the run did not reach its duration"
        with Client(live.network.endpoint) as client:
            arm = client.robot("arm1")
            return {"tip": list(arm.effector.read()), "joints": list(arm.arm_joints.read()),
                    "targets": client.sim().targets(), "status": client.sim().status(),
                    "base": client.sim().robots()["arm1"]}


def drive(endpoint: str) -> dict:
    """Set arm2's joints, try an angle past a limit, then reach GOAL with run_controller."""
    from coopsim_arm.reach import Reach

    out = {}
    with Client(endpoint) as client:
        bot = client.robot("arm2")
        out["modules"] = bot.module_labels
        out["base"] = client.sim().robots()["arm2"]
        for _ in bot.loop(steps=300):  # lockstep: 300 steps of 0.01 s with the command
            bot.arm_joints.set_positions(*ANGLES)
        out["joints"], out["tip"] = list(bot.arm_joints.read()), list(bot.effector.read())
        try:
            bot.arm_joints.set_positions(3.0, 0.0, 0.0)
            out["bad"] = None
        except RemoteError as exc:
            out["bad"] = [exc.code, exc.text]
        bot.detach()  # the refused command attached nothing, but leave lockstep to be sure
    out["iterations"] = run_controller(Reach, "arm2", {"x": GOAL[0], "y": GOAL[1]}, steps=600,
                                       nameserver=endpoint)
    with Client(endpoint) as client:
        out["reached"] = list(client.robot("arm2").effector.read())
    return out


if __name__ == "__main__":
    command, arg = sys.argv[1], sys.argv[2]
    print(json.dumps({"reach": reach, "drive": drive}[command](arg)))
