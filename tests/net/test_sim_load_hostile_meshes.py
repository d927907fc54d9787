"""``/sim load`` of scenarios naming hostile COLLADA files (docs/reliability.md *Mesh files*):
each answered with error 8 and the COLLADA file's ``file:line: what is wrong`` (100,000
nested nodes were error 10 with a RecursionError; a negative index and a NaN position
loaded), nothing of it loaded, and the running world steps on. The real-time factor during
such loads is measured by studies/sim_load_rate.py, not asserted here."""

from __future__ import annotations

import pytest

pytest.importorskip("mujoco")

import daehelpers as dae  # noqa: E402
from coopsim.net import protocol as p  # noqa: E402

from helpers import robot, scenario  # noqa: E402
from nethelpers import Peer, live, lookup  # noqa: E402

LOAD, STATUS, STEP = 22, 1, 4


def _hostile(folder):
    """(scenario, COLLADA file, the text of the line the fault is at, what is said)."""
    negative = dae.write(folder / "negative.dae",
                         dae.text(p=dae.CUBE_P.replace("0 2 1", "0 2 -1", 1)))
    nan = dae.write(folder / "nan.dae", dae.text(positions=dae.CUBE.replace("1 1 1", "1 nan 1")))
    cases = [(dae.nested(folder / "nested.dae"), "<node><node>",
              "COLLADA file has over 100000 tags (the limit)"),
             (negative, "<p>", "vertex index -1 is outside the 8 positions"),
             (nan, "<float_array", "<float_array> holds 'nan', not a finite decimal number")]
    return [(dae.scenario(folder, path.name), path, needle, why) for path, needle, why in cases]


@pytest.mark.slow
def test_hostile_meshes_are_error_8_at_their_line_and_the_world_steps_on(tmp_path):
    cases = _hostile(tmp_path)
    with live(scenario(robots=[robot("keep")]), paused=True, data_dirs=(str(tmp_path),),
              engine="mujoco") as run:
        peer = Peer(lookup(run.network.endpoint, "/sim"))
        try:
            for path, dae_file, needle, why in cases:
                error, text, *_ = peer.ask(LOAD, str(path), timeout=300)
                assert error == p.FAILED, text
                assert text.startswith(f"{dae_file}:{dae.line_of(dae_file, needle)}: {why}"), \
                    text
                before = peer.ok(STATUS)[3][0]
                assert peer.ok(STEP, params=(2,))[3][0] == before + 2  # the old world steps
                assert run.stepper.error == "" and list(run.stepper.snapshot.robots) == ["keep"]
        finally:
            peer.close()
