"""One source, two hosts: the showcases' drivers run in-process (the scenarios' driver lines)
and as network controllers (the clients/python scripts, given with ``--controller``), and in
lockstep both take exactly the same path. The showcases run cut short: the transport teams
avoid an obstacle each and deliver their bars (graded PASS), the triangle breaks for the gate."""

from __future__ import annotations

import numpy as np
import pytest

from coopsim.app.controllers import parse_override
from coopsim.app.run import Run, RunOptions
from coopsim.formats.files import load

from helpers import finishes
from usecasehelpers import FORMATION_SHORT, NETWORK, TRANSPORT_SHORT, run_to_end, stepper

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.mark.parametrize("name, path", [("transport", TRANSPORT_SHORT),
                                        ("formation", FORMATION_SHORT)])
def test_in_process_and_network_controllers_take_the_same_path(name, path):
    inproc, ended = run_to_end(stepper(path))
    spec = load(str(path))
    options = RunOptions(port=0, controller=tuple(parse_override(c) for c in NETWORK[name]))
    with Run(spec, options) as run:
        assert not any(r.driver for r in run.stepper.sim.world.robots)  # all over the network
        assert len(run.controllers.procs) == len(spec.robots) * (2 if name == "transport" else 1)
        run.start()
        assert finishes(run.stepper), "the networked run did not finish"
        net = run.stepper.snapshot
        assert run.stepper.finished == ended
        assert not run.controllers.failed and all(
            code == 0 for code in run.controllers.exited().values())
    assert net.step == inproc.step
    assert net.rules == inproc.rules
    if name == "transport":
        assert ended.startswith("transport: PASS: every bar delivered"), ended
    else:
        assert ended == "duration 16 s reached" and inproc.rules["formation"]["breaks"] >= 1
    assert net.robots == inproc.robots
    np.testing.assert_allclose(net.poses, inproc.poses, rtol=0, atol=1e-9)
    travelled = np.hypot(*(inproc.poses[:, :2] - stepper(path).snapshot.poses[:, :2]).T)
    assert travelled.min() > 1.0  # every robot went somewhere
