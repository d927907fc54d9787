"""A world whose STL holds more triangles than MuJoCo's STL reader takes:
``coopsim check``, start-up and ``/sim load`` all refuse it up front with ``file:line``, and
nothing a load does ends the running world (a load that fails leaves the old world stepping).
"""

from __future__ import annotations

import dataclasses
import struct

import numpy as np
import pytest

pytest.importorskip("mujoco")

from coopsim.formats.files import load  # noqa: E402
from coopsim.description.meshes import MAX_STL_TRIANGLES  # noqa: E402
from coopsim.model.errors import CoopsimError  # noqa: E402
from coopsim.net import protocol as p  # noqa: E402
from coopsim.sim.simulation import Simulation  # noqa: E402
from coopsim.sim.stepper import Stepper  # noqa: E402

from helpers import robot, scenario  # noqa: E402
from nethelpers import Peer, live, lookup  # noqa: E402
from rechelpers import run_cli  # noqa: E402
from scenery_helpers import write_world  # noqa: E402

TRIANGLES = 250_000  # over MuJoCo's 200,000 and under the documented 1,000,000 of an OBJ
LOAD, STATUS, STEP = 22, 1, 4
WORLD = "[FLOOR]\nsize 10 10 0.1\n\n[MESH_1]\nfile big.stl\nposition 3 0 0\n"
SCENARIO = ("[WORLD]\nfile big.world\n\n[ROBOT_1]\ntype turtlebot3\nname tb\nposition 0 0 0\n\n"
            "[SETTINGS]\nengine mujoco\ndt 0.02\nduration 1\n")


def write_big_stl(path, count: int = TRIANGLES):
    """A binary STL of ``count`` thin triangles standing in a 1 m square (numpy: quick)."""
    rec = np.zeros(count, dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    k = np.arange(count)
    base = np.stack([(k % 500) / 500.0, (k // 500) / 500.0, np.zeros(count)], axis=1)
    rec["v"][:, 0], rec["v"][:, 1] = base, base + (0.002, 0, 0)
    rec["v"][:, 2] = base + (0, 0.002, 0.5)
    path.write_bytes(b"\0" * 80 + struct.pack("<I", count) + rec.tobytes())
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bigstl")
    write_big_stl(folder / "big.stl")
    (folder / "big.world").write_text(WORLD)
    (folder / "big.scenario").write_text(SCENARIO)
    write_world(folder)  # t.world: a small STL, an OBJ and a height field that load
    return folder


@pytest.mark.slow
def test_check_refuses_the_stl_at_the_line_naming_it(folder):
    out = run_cli("check", str(folder / "big.scenario"))
    assert out.returncode == 2, out.stdout + out.stderr
    text = out.stdout + out.stderr
    assert f"big.world:5: mesh 'big.stl'" in text
    assert f"an STL holds at most {MAX_STL_TRIANGLES} triangles" in text and "250000" in text


@pytest.mark.slow
def test_start_up_refuses_it_with_exit_2_before_building_anything(folder):
    out = run_cli("run", "--headless", "--port", "0", str(folder / "big.scenario"),
                  timeout=120)
    assert out.returncode == 2, out.stderr
    assert "big.world:5: mesh 'big.stl'" in out.stderr and "Traceback" not in out.stderr


def test_a_live_load_is_refused_and_the_running_world_steps_on(folder):
    spec = scenario(robots=[robot("r1")])
    with live(spec, paused=True, data_dirs=(str(folder),), engine="mujoco") as run:
        peer = Peer(lookup(run.network.endpoint, "/sim"))
        try:
            error, text, *_ = peer.ask(LOAD, str(folder / "big.scenario"))
            assert error == p.FAILED and "big.world:5: mesh 'big.stl'" in text, text
            before = peer.ok(STATUS)[3][0]
            assert peer.ok(STEP, params=(3,))[3][0] == before + 3  # the old world steps on
            assert run.stepper.error == "" and list(run.stepper.snapshot.robots) == ["r1"]
        finally:
            peer.close()


def test_a_world_mujoco_refuses_is_refused_by_build_and_the_old_run_goes_on(folder):
    """Past the file checks (a spec made in code), MuJoCo's own refusal comes from
    Simulation.build, before the running world is touched; a reset that fails part-way leaves
    the old run as it was."""
    small = load(folder / "t.world")
    big = dataclasses.replace(small.meshes[0], path=str(folder / "big.stl"),
                              triangles=TRIANGLES)
    bad = dataclasses.replace(scenario(robots=[robot("r2")]),
                              world=dataclasses.replace(small, meshes=(big,)))
    stepper = Stepper(Simulation(scenario(robots=[robot("r1")]), engine="mujoco"),
                      mode="lockstep")
    stepper.tick()
    sim = stepper.sim
    with pytest.raises(CoopsimError, match="number of faces"):
        sim.build(bad)
    with pytest.raises(CoopsimError, match="number of faces"):
        sim.reset(bad)
    assert sim.scenario.robots[0].name == "r1" and sim.step == 1
    stepper.tick()  # the old run steps on
    assert list(stepper.snapshot.robots) == ["r1"] and stepper.snapshot.step == 2
