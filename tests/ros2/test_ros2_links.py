"""A robot from a description file over DDS (``coopsim run --ros2``, protocol 10's links): a
realtime run of example-robot-data's Panda on the mujoco engine; another process's DDS
participant (tests/ros2/ddspeer.py) reads ``/panda/joint_states`` (its 7 joints and its two
fingers by the file's names, at the home angles) and ``/tf``'s tree of the file's links under
``panda/base_link``, which composes to the contract's link poses (coopsim.model.linkposes)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cyclonedds", reason="the ros2 extra (cyclonedds) is not installed")
pytest.importorskip("mujoco")

from coopsim.formats.files import load  # noqa: E402
from coopsim.model.linkposes import link_poses, quat_mul, quat_rotate  # noqa: E402

from linkhelpers import HOME, panda_section  # noqa: E402
from nethelpers import live  # noqa: E402
from test_ros2_bridge import DdsPeer, domain  # noqa: E402

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster



def test_every_link_on_tf_and_every_joint_in_joint_states_over_dds(tmp_path):
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 3 3 0.1\n")
    (tmp_path / "p.scenario").write_text(f"""[WORLD]
file w.world
{panda_section(1, 0.0)}[SETTINGS]
engine mujoco
dt 0.002
mode realtime
seed 1
""")
    dom = domain()
    peer = DdsPeer(dom)
    try:
        with live(load(tmp_path / "p.scenario"), ros2=True, ros2_domain=dom) as run:
            peer("topics", expect=["rt/panda/joint_states", "rt/tf"])
            got = peer("joints", robot="panda", near=list(HOME), tol=2e-3)
            layout = run.stepper.call(run.stepper.sim.world.describe).result(10.0)
    finally:
        peer.close()
    assert got["name"] == [f"panda_joint{k}" for k in range(1, 8)] + [
        "panda_finger_joint1", "panda_finger_joint2"]
    tree = {t["child"]: t for t in got["tf"]}
    assert tree["panda/panda_link0"]["parent"] == "panda/base_link"
    assert tree["panda/panda_leftfinger"]["parent"] == "panda/panda_hand"
    # composing the chain to the hand gives the contract's pose of it (base at the origin)
    chain, link = [], "panda/panda_hand"
    while link in tree:
        chain.append(tree[link])
        link = tree[link]["parent"]
    xyz, quat = np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])
    for t in reversed(chain):
        xyz, quat = xyz + quat_rotate(quat, t["t"]), quat_mul(quat, t["q"])
    want = link_poses(layout["robots"][0], (0, 0, 0, 1, 0, 0, 0),
                      {f"link_q{k}": q for k, q in enumerate(got["position"], start=1)})
    np.testing.assert_allclose(xyz, want["panda_hand"][0], atol=1e-6)
    assert xyz[0] > 0.25 and 0.3 < xyz[2] < 0.7  # bent forward at the home angles
