"""One source, two hosts: the showcases' drivers run in-process (the scenarios' driver lines)
and as network controllers (the clients/python scripts, given with ``--controller``), and in
lockstep both take exactly the same path."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from coopsim.app.controllers import parse_override
from coopsim.app.run import Run, RunOptions
from coopsim.formats.files import load

from usecasehelpers import FORMATION, NETWORK, TRANSPORT, run_to_end, stepper

SECONDS = 25.0


@pytest.mark.parametrize("name, path", [("transport", TRANSPORT), ("formation", FORMATION)])
def test_in_process_and_network_controllers_take_the_same_path(name, path):
    inproc, _ = run_to_end(stepper(path, duration=SECONDS))
    spec = load(str(path))
    spec = dataclasses.replace(spec, settings=dataclasses.replace(spec.settings,
                                                                  duration=SECONDS))
    options = RunOptions(port=0, controller=tuple(parse_override(c) for c in NETWORK[name]))
    with Run(spec, options) as run:
        assert not any(r.driver for r in run.stepper.sim.world.robots)  # all over the network
        assert len(run.controllers.procs) == len(spec.robots) * (2 if name == "transport" else 1)
        run.start()
        assert run.stepper.wait_finished(120), "the networked run did not finish"
        net = run.stepper.snapshot
        assert not run.controllers.failed and all(
            code == 0 for code in run.controllers.exited().values())
    assert net.step == inproc.step == round(SECONDS / 0.01)
    assert net.robots == inproc.robots
    np.testing.assert_allclose(net.poses, inproc.poses, rtol=0, atol=1e-9)
    travelled = np.hypot(*(inproc.poses[:, :2] - stepper(path).snapshot.poses[:, :2]).T)
    assert travelled.min() > 1.0  # every robot went somewhere
