"""``/sim load`` of a scenario with a robot from a description file: a bad
file is an error reply with its file:line (error 8) and the run stays as it was; a description
outside the run's data folders is error 6; a good one loads and ``/sim state`` shows its
imported type as a robot's type."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("mujoco")

from coopsim.net import protocol as p  # noqa: E402

from nethelpers import Peer, live, lookup  # noqa: E402
from helpers import robot, scenario  # noqa: E402

LOAD, STATE = 22, 23
DATA = Path(__file__).resolve().parent.parent / "data" / "descriptions"


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    root = tmp_path_factory.mktemp("load43")
    data = root / "data"
    data.mkdir()
    for name in ("tiny_arm.urdf", "tiny_arm.scenario", "floor.world"):
        shutil.copy(DATA / name, data / name)
    urdf = (DATA / "tiny_arm.urdf").read_text()
    # a lie, not a rounding: inverted limits are refused (a zero mass is repaired)
    (data / "bad.urdf").write_text(urdf.replace('lower="-1.5" upper="1.5"',
                                                'lower="1.5" upper="-1.5"'))
    (data / "bad.scenario").write_text((DATA / "tiny_arm.scenario").read_text()
                                       .replace("tiny_arm.urdf", "bad.urdf"))
    (root / "out.urdf").write_text(urdf)
    (data / "out.scenario").write_text((DATA / "tiny_arm.scenario").read_text()
                                       .replace("tiny_arm.urdf", "../out.urdf"))
    spec = scenario(robots=[robot("r1")])
    with live(spec, paused=True, data_dirs=(str(data),), engine="mujoco") as run:
        peer = Peer(lookup(run.network.endpoint, "/sim"))
        yield peer, data
        peer.close()


def test_a_bad_description_is_an_error_reply_with_its_line(sim):
    peer, data = sim
    error, text, command, *_ = peer.ask(LOAD, str(data / "bad.scenario"))
    assert (error, command) == (p.FAILED, LOAD)
    line = next(n for n, t in enumerate((data / "bad.urdf").read_text().splitlines(), 1)
                if 'upper="-1.5"' in t)
    assert text.startswith(f"{data / 'bad.urdf'}:{line}: joint 'shoulder': lower limit 1.5 is "
                           "above the upper -1.5")
    assert peer.ok(STATE)[0] == 0


def test_a_description_outside_the_data_folders_is_error_6(sim):
    peer, data = sim
    error, text, *_ = peer.ask(LOAD, str(data / "out.scenario"))
    assert error == p.NOT_ALLOWED and "description '../out.urdf' is outside" in text


def test_a_good_description_loads_and_the_state_shows_its_type(sim):
    peer, data = sim
    error, text, *_ = peer.ask(LOAD, str(data / "tiny_arm.scenario"))
    assert error == 0, text
    state = json.loads(peer.ok(STATE)[1])
    assert [(r["name"], r["type"]) for r in state["robots"]] == [("arm1", "tiny_arm")]
