"""One client can no longer end everyone's run, over real sockets on the
real engines: the writes that made a Crazyflie's world diverge (``rotors.kf 0.01``,
``rotors.max_speed 1e5``) are refused with error 4 and the bound in the sentence, from the
robot's port and from /sim; the stiffest airframe the bound accepts, sent one propeller at full
speed, tumbles and is contained: the run goes on, the other Crazyflie hovers on, and
``/sim state`` names the tumbling one (its robot entry's ``diverged``)."""

from __future__ import annotations

import json

import pytest

from coopsim.formats.files import load
from coopsim.net import protocol as p
from coopsim.plugins.robots.crazyflie import Crazyflie

from nethelpers import Peer, live, lookup, wait_until

PARAM_SET, SET_ROTORS = 13, 3000
SIM_RESUME, SIM_STATE, SIM_SET_PARAM = 3, 23, 25
CF = Crazyflie.defaults["rotors"]
WEIGHT = Crazyflie.MASS * 9.81  # N


def ratio(kf: float, top: float) -> str:
    """The Crazyflie's thrust-to-weight as the refusal prints it."""
    return f"{4.0 * kf * top * top / WEIGHT:.6g}"


def _scenario(tmp_path, engine: str):
    (tmp_path / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
    path = tmp_path / "two.scenario"
    path.write_text("\n".join([
        "[WORLD]", "file w.world", "[SETTINGS]", f"engine {engine}", "dt 0.005",
        "mode realtime", "seed 3", "[ROBOT_1]", "type crazyflie", "name cf1",
        "position -1 0 3", "[ROBOT_2]", "type crazyflie", "name cf2", "position 1 0 1",
        "driver flight shape hover height 1"]) + "\n")
    return load(str(path))


def _state(sim: Peer) -> dict:
    reply = sim.ok(SIM_STATE)
    return json.loads(reply[1])


def _robot(doc: dict, name: str) -> dict:
    return next(r for r in doc["robots"] if r["name"] == name)


@pytest.mark.parametrize("engine", ["mujoco", "aerial"])
def test_a_client_cannot_end_the_run_nor_disturb_the_other_crazyflie(tmp_path, engine):
    if engine == "mujoco":
        pytest.importorskip("mujoco")
    with live(_scenario(tmp_path, engine), paused=True) as run:
        cf1 = Peer(lookup(run.network.endpoint, "/cf1"))
        sim = Peer(lookup(run.network.endpoint, "/sim"))
        reply = cf1.ask(PARAM_SET, "rotors.kf", data=[0.01])
        assert reply[0] == p.OUT_OF_RANGE == 4, reply
        said = f"thrust-to-weight 4 kf max_speed^2 / (m g) = {ratio(0.01, CF['max_speed'])} "
        assert said in reply[1], reply[1]
        assert "is outside [1, 20]" in reply[1] and f"mass {Crazyflie.MASS:g} kg" in reply[1]
        reply = cf1.ask(PARAM_SET, "rotors.max_speed", data=[1e5])
        assert reply[0] == 4 and f"= {ratio(CF['kf'], 1e5)} " in reply[1], reply
        assert "[1, 20]" in reply[1]
        reply = sim.ask(SIM_SET_PARAM, "cf1 rotors.kf", data=[0.01])  # the operator's too
        assert reply[0] == 4 and "[1, 20]" in reply[1], reply
        assert cf1.ok(12, "rotors.kf")[4] == [CF["kf"]], "the refused writes changed nothing"
        # the stiffest airframe within the bound, one propeller at full speed: it tumbles
        cf1.ok(PARAM_SET, "rotors.kf", data=[19.5 * WEIGHT / (4.0 * CF["max_speed"] ** 2)])
        cf1.ok(SET_ROTORS, data=[CF["max_speed"], 0.0, 0.0, 0.0])
        sim.ok(SIM_RESUME)
        doc = wait_until(lambda: (lambda d: d if "diverged" in _robot(d, "cf1") else None)(
            _state(sim)), timeout=120)
        mark = _robot(doc, "cf1")["diverged"]
        assert mark["count"] >= 1 and "its angular rate reached" in mark["why"], mark
        assert set(mark) == {"count", "step", "time", "first", "why"}
        wait_until(lambda: _state(sim)["time"] > mark["time"] + 1.5, timeout=120)
        doc = _state(sim)
        assert doc["error"] == "" and doc["finished"] == "", doc["error"]
        assert "diverged" not in _robot(doc, "cf2")
        assert abs(_robot(doc, "cf2")["z"] - 1.0) < 0.05  # it hovers on
        assert _robot(doc, "cf1")["z"] < 0.1  # at rest after its containment: it fell
        for peer in (cf1, sim):
            peer.close()
