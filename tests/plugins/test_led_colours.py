"""LED colours from files: ``param leds.color`` (every LED) and ``leds.colorN`` (one LED) light
them at load and after a reset, until a controller sets them; other robots' cameras see them;
bad colours are refused at their line (exit 2) and over the network (error 4, the range)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from coopsim.formats.files import load
from coopsim.model.plugins import MODULES
from coopsim.plugins.modules.leds import pack, unpack
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

from nethelpers import Peer, live, lookup
from rechelpers import run_cli

LEDS = MODULES.get("leds")
RED, BLUE = pack(255, 0, 0), pack(0, 0, 255)

SCENARIO = """[WORLD]
file        leds.world

[ROBOT_1]
type        epuck
name        lit
position    0 0 0
param       leds.color {color}
param       leds.color2 255

[ROBOT_2]
type        epuck
name        watcher
position    0.5 0 180
param       camera.fov 360

[SETTINGS]
dt          0.02
mode        lockstep
seed        1
"""


def _write(folder, color="16711680"):
    (folder / "leds.world").write_text("[FLOOR]\nsize        4 4 0.05\n")
    path = folder / "leds.scenario"
    path.write_text(SCENARIO.format(color=color))
    return path


def test_file_colours_show_until_a_controller_sets_them_and_again_after_a_reset(tmp_path):
    st = Stepper(Simulation(load(_write(tmp_path))), mode="lockstep")
    st.tick()
    shown = st.snapshot.reading("lit", "leds").tolist()
    assert shown == [RED, RED, BLUE] + [RED] * 5
    blobs = st.snapshot.extra["camera"].seen["watcher"]  # the watcher's camera sees both
    assert sorted(unpack(blobs[:, :3].astype(int) @ [65536, 256, 1]).tolist()) == [
        [0, 0, 255], [255, 0, 0]]
    set_each = next(c for c in LEDS.commands if c.name == "set_each")
    LEDS.act(set_each, st.sim, "lit", SimpleNamespace(text="", data=(0, 255, 0)))
    st.tick()
    assert st.snapshot.reading("lit", "leds").tolist() == [pack(0, 255, 0)] + [0.0] * 7
    st.sim.set_param("lit", "leds", "color", 0)  # the controller's colours still win
    st.tick()
    assert st.snapshot.reading("lit", "leds")[0] == pack(0, 255, 0)
    st.reset()
    st.tick()
    assert st.snapshot.reading("lit", "leds").tolist() == [RED, RED, BLUE] + [RED] * 5
    st.sim.set_param("lit", "leds", "color2", -1)  # an event or param_set, before any set
    st.tick()
    assert st.snapshot.reading("lit", "leds").tolist() == [RED] * 8


@pytest.mark.slow
@pytest.mark.parametrize("color, what", [
    ("16777216", "parameter color = 16777216 is out of range [0, 16777215]"),
    ("-1", "parameter color = -1 is out of range [0, 16777215]"),
    ("1.5", "parameter color takes an int, not 1.5"),
    ("red", "param value must be a number or true/false, got 'red'")])
def test_a_bad_colour_in_a_file_is_its_line_and_exit_2(tmp_path, color, what):
    path = _write(tmp_path, color)
    done = run_cli("check", str(path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{path}:8: " in done.stderr and what in done.stderr, done.stderr


@pytest.mark.slow
def test_run_refuses_a_bad_colour_the_same_way_and_loads_nothing(tmp_path):
    path = _write(tmp_path, "16777216")
    done = run_cli("run", str(path), "--headless", "--port", "0", "--duration", "0.1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{path}:8: parameter color = 16777216 is out of range" in done.stderr
    assert "name server" not in done.stderr  # nothing started


def test_a_bad_colour_over_the_network_is_error_4_with_the_range(tmp_path):
    spec = load(_write(tmp_path))
    from dataclasses import replace

    from coopsim.model.specs import Settings
    spec = replace(spec, settings=replace(spec.settings, mode="realtime"))
    assert isinstance(spec.settings, Settings)
    with live(spec, paused=True) as run:
        peer = Peer(lookup(run.network.endpoint, "/lit/leds"))
        try:
            refused = peer.ask(13, "leds.color", data=[2.0 ** 24])
            assert refused[0] == 4 and "[0, 16777215]" in refused[1]
            refused = peer.ask(13, "leds.color3", data=[-2.0])
            assert refused[0] == 4 and "[-1, 16777215]" in refused[1]
            assert peer.ok(12, "leds.color")[4] == [float(RED)]  # nothing changed
        finally:
            peer.close()
