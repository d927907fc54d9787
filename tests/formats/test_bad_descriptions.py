"""Descriptions that lie (*Bad input*): a COLLADA mesh of 10 M triangles, a joint with
inverted limits, a rotor axis of zero length (a joint's in the file, a ``rotor`` line's in the
scenario) and a link tree with two roots. Each, in real files: ``coopsim check`` and
``coopsim run`` (real processes) exit 2 with ``file:line: why`` and no traceback, and ``/sim
load`` of it over a live run that is stepping is an error reply with the same words, the run
stepping on with its robots as they were (nothing half-loaded). The same files without the lie
pass (the harness can pass)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from rechelpers import run_cli

DATA = Path(__file__).resolve().parent.parent / "data" / "descriptions"
ARM = (DATA / "tiny_arm.urdf").read_text()
BOX = ('<collision><origin xyz="0 0 0.1"/><geometry><box size="0.04 0.04 0.2"/></geometry>'
       '</collision>')
CUBE = '<collision><geometry><mesh filename="cube.dae"/></geometry></collision>'
FLYER = ('<?xml version="1.0"?>\n<robot name="flyer">\n  <link name="body">\n    <inertial>'
         '<mass value="1.0"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/>'
         '</inertial>\n    <collision><geometry><box size="0.3 0.3 0.05"/></geometry>'
         '</collision>\n  </link>\n</robot>\n')
ROTORS = ("rotor 0.15 0.15 0 0 0 1 cw\nrotor -0.15 0.15 0 0 0 1 ccw\n"
          "rotor -0.15 -0.15 0 0 0 1 cw\nrotor 0.15 -0.15 0 0 0 1 ccw\n")
ROTOR_JOINT = ('<link name="rotor_0"><inertial><mass value="0.01"/><inertia ixx="1e-6" ixy="0" '
               'ixz="0" iyy="1e-6" iyz="0" izz="1e-6"/></inertial></link>\n<joint '
               'name="rotor_0_joint" type="continuous"><parent link="base_link"/><child '
               'link="rotor_0"/>\n<axis xyz="{axis}"/></joint>\n</robot>')
WAIT = 120.0  # s: a hang guard only (a run that stopped stepping fails here)


def _lies() -> dict:
    """Name -> (good URDF, the lie's URDF, extra section lines, the lie's file, the text of
    the line it is at, what the message says)."""
    many = (DATA / "cube.dae").read_text().replace('count="12"', 'count="10000000"')
    return {
        "10M triangles": (ARM.replace(BOX, CUBE, 1), ARM.replace(BOX, CUBE, 1), "", many,
                          "cube.dae", "mesh has over 1000000 triangles"),
        "inverted limits": (ARM, ARM.replace('lower="-2.0" upper="2.0"',
                                             'lower="2.0" upper="-2.0"'), "", None,
                            'upper="-2.0"', "joint 'elbow': lower limit 2 is above the upper -2"),
        "zero joint axis": (ARM.replace("</robot>", ROTOR_JOINT.format(axis="0 0 1")),
                            ARM.replace("</robot>", ROTOR_JOINT.format(axis="0 0 0")), "", None,
                            'axis xyz="0 0 0"', "joint 'rotor_0_joint': the axis is zero"),
        "zero rotor line": (FLYER, FLYER, ROTORS.replace("-0.15 0.15 0 0 0 1", "-0.15 0.15 0 0 0 "
                                                         "0"), None,
                            "rotor -0.15 0.15 0 0 0 0", "the thrust axis 0 0 0 has no length"),
        "two roots": (ARM, ARM.replace("</robot>", '<link name="stray"/>\n</robot>'), "", None,
                      'name="stray"', "links 'base_link' and 'stray' both have no parent joint"),
    }


LIES = _lies()


def _files(folder: Path, name: str, lie: bool) -> tuple[Path, Path, int]:
    """(scenario, the file the lie is in, its line) of ``LIES[name]`` (or its good twin) in
    ``folder``."""
    good, bad, extra, dae, needle, _ = LIES[name]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "floor.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    shutil.copy(DATA / "cube.dae", folder / "cube.dae")
    if lie and dae is not None:
        (folder / "cube.dae").write_text(dae)
    urdf = bad if lie else good
    (folder / "robot.urdf").write_text(urdf)
    flyer = name == "zero rotor line"
    keys = (extra if lie else ROTORS) if flyer else "tool tool\n"
    text = (f"[WORLD]\nfile floor.world\n\n[ROBOT_1]\ndescription robot.urdf\nname r1\n"
            f"position 0.5 0 {1 if flyer else 0}\n{keys}\n[SETTINGS]\nengine mujoco\n")
    scenario = folder / "s.scenario"
    scenario.write_text(text)
    where = scenario if flyer else folder / "robot.urdf"
    lines = where.read_text().splitlines()
    return scenario, where, next((n for n, t in enumerate(lines, 1) if needle in t), 0)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LIES))
def test_check_and_run_exit_2_at_the_lies_line_and_pass_without_it(tmp_path, name):
    pytest.importorskip("mujoco")
    pytest.importorskip("collada")
    scenario, where, line = _files(tmp_path / "bad", name, lie=True)
    for args in (("check", str(scenario)),
                 ("run", str(scenario), "--headless", "--duration", "0.05")):
        done = run_cli(*args, timeout=300)
        out = done.stdout + done.stderr
        assert done.returncode == 2, (args, out)
        assert "Traceback" not in out, out
        assert f"{where}:{line}: " in out and LIES[name][5] in out, out
    good, _, _ = _files(tmp_path / "good", name, lie=False)
    done = run_cli("check", str(good), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def stepping(tmp_path_factory):
    """A live mujoco run that steps on its own (real time, sped up), every lie's files in
    its data folder."""
    pytest.importorskip("mujoco")
    pytest.importorskip("collada")
    from coopsim.net import protocol as p  # noqa: F401 -- the server's codes

    from helpers import robot, scenario
    from nethelpers import Peer, live, lookup

    data = tmp_path_factory.mktemp("lies")
    for k, name in enumerate(LIES):
        _files(data / f"lie{k}", name, lie=True)
    spec = scenario(robots=[robot("keep")], mode="realtime")
    with live(spec, data_dirs=(str(data),), engine="mujoco") as run:
        peer = Peer(lookup(run.network.endpoint, "/sim"))
        yield peer, data
        peer.close()


def _state(peer) -> dict:
    return json.loads(peer.ok(23)[1])


@pytest.mark.parametrize("k,name", list(enumerate(LIES)))
def test_sim_load_of_a_lie_is_an_error_reply_and_the_run_steps_on(stepping, k, name):
    from coopsim.net import protocol as p

    peer, data = stepping
    scenario, where, line = _files(data / f"lie{k}", name, lie=True)
    before = _state(peer)
    error, text, command, *_ = peer.ask(22, str(scenario), timeout=300)
    assert (error, command) == (p.FAILED, 22), text
    assert text.startswith(f"{where}:{line}: ") and LIES[name][5] in text, text
    after = _state(peer)
    assert [r["name"] for r in after["robots"]] == [r["name"] for r in before["robots"]] \
        == ["keep"]
    assert not after["error"] and not after["paused"]
    give_up = time.monotonic() + WAIT
    while _state(peer)["step"] <= after["step"]:  # it steps on
        assert time.monotonic() < give_up, "the run stopped stepping"
        time.sleep(0.05)
