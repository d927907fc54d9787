"""Per-kind state tables (coopsim.model.kernel, coopsim.sim.states) and the noise in one draw
(coopsim.sim.sensing.draw_noise): state kept by robot name over layout changes, started afresh
by a reset; every kind's noise from one key a step, the same for the same seed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coopsim.model.kernel import KindState, StateField
from coopsim.model.noise_kernels import normals, uniforms
from coopsim.sim.sensing import ParamArrays, draw_noise
from coopsim.sim.simulation import Simulation, make_rng
from coopsim.sim.states import StateTables

from helpers import box, robot, scenario, step_by_hand, target

ROOT = Path(__file__).resolve().parents[2]
FIELDS = (StateField("v", (3,), 1.5), StateField("t"))


def test_state_tables_keep_each_robot_s_state_by_name_over_a_layout_change():
    tables = StateTables(("a", "b", "c"))
    kind = tables.kinds["k"] = KindState(FIELDS, 3)
    assert kind.arrays["v"].shape == (3, 3) and (kind.arrays["v"] == 1.5).all()
    kind.arrays["v"][:] = np.arange(9.0).reshape(3, 3)
    kind.arrays["t"][:] = [10.0, 20.0, 30.0]
    kind.seen[:] = True
    tables.layout(("c", "new", "a"))          # b removed, a new robot, the rows moved
    kind = tables.get("k")
    assert kind.arrays["v"].tolist() == [[6.0, 7.0, 8.0], [1.5, 1.5, 1.5], [0.0, 1.0, 2.0]]
    assert kind.arrays["t"].tolist() == [30.0, 0.0, 10.0]
    assert kind.seen.tolist() == [True, False, True]
    same = tables.get("k")
    tables.layout(("c", "new", "a"))          # the same layout: the very same arrays
    assert tables.get("k") is same
    tables.restart(["a"])                     # a contained robot starts over
    assert kind.seen.tolist() == [True, False, False] and kind.arrays["t"][2] == 0.0


def _plan(*kinds):
    """A sensing plan's entries as draw_noise reads them: (label, k, lossy, rows)."""
    plan = [(label, None, rows, None, False, False, True, k, lossy)
            for label, k, lossy, rows in kinds]
    due = [(rows, ParamArrays({}), True) for _, _, _, rows in kinds]
    return plan, due


def test_the_noise_of_every_kind_is_one_draw_split_in_the_plan_s_order():
    plan, due = _plan(("a", 2, True, np.arange(3)), ("b", 0, False, np.arange(5)),
                      ("c", 4, False, np.arange(2)), ("d", 0, True, np.arange(4)))
    blocks = draw_noise(plan, due, make_rng(7))
    key = int(make_rng(7).bit_generator.random_raw())  # the step's one key
    normal, uniform = normals(key, 3 * 2 + 2 * 4), uniforms(key, 3 + 4)
    assert set(blocks) == {"a", "c", "d"}          # "b" takes nothing
    assert np.array_equal(blocks["a"][0], normal[:6].reshape(3, 2))
    assert np.array_equal(blocks["c"][0], normal[6:].reshape(2, 4))
    assert blocks["c"][1] is None and blocks["d"][0] is None
    assert np.array_equal(blocks["a"][1], uniform[:3])
    assert np.array_equal(blocks["d"][1], uniform[3:])
    assert not blocks["a"][0].flags.writeable       # views of the one draw, read-only
    again = draw_noise(plan, due, make_rng(7))      # the same seed: the same split, bit for bit
    assert all(np.array_equal(again[k][i], blocks[k][i]) for k in blocks for i in (0, 1)
               if blocks[k][i] is not None)
    assert draw_noise(*_plan(("b", 0, False, np.arange(5))), make_rng(7)) == {}


class Counted:
    """The run's generator, counting its calls by name (the same draws)."""

    def __init__(self, rng):
        self.rng, self.calls = rng, []

    def __getattr__(self, name):
        self.calls.append(name)
        return getattr(self.rng, name)


def _noisy_run(seed: int, steps: int = 5, counted: list | None = None):
    bots = [robot(f"r{i}", -2.0 + i, 0.0, params=[("sonar", "noise", 0.01),
                                                   ("sonar", "lost", 30.0),
                                                   ("target", "noise", 0.02)])
            for i in range(3)]
    sim = Simulation(scenario(bots, [box("W", 3.0, 0.0)], [target("red", 0.0, 2.0)], seed=seed),
                     engine="kinematic")
    for _ in range(steps):
        sim.rng = Counted(sim.rng)
        step_by_hand(sim, 1)
        if counted is not None:
            counted.append(sorted(sim.rng.calls))
        sim.rng = sim.rng.rng
    return sim.snapshot


def test_a_noisy_run_is_the_same_for_the_same_seed_and_draws_its_noise_once_a_step():
    calls = []
    a, b, c = _noisy_run(3, counted=calls), _noisy_run(3), _noisy_run(4)
    # two kinds with noise, one with lost data: one key a step for the normals and the lost
    assert calls == [["bit_generator"]] * 5
    for label in ("sonar", "target"):
        assert np.array_equal(a.readings[label], b.readings[label])
    assert not np.array_equal(a.readings["sonar"], c.readings["sonar"])


STATE_SCRIPT = '''
import json, sys
import numpy as np
from coopsim.model.kernel import StateField
from coopsim.model.module import Module
from coopsim.model.plugins import MODULES
from coopsim.model.specs import RobotSpec
from coopsim.sim.simulation import Simulation
sys.path.insert(0, "tests")
from helpers import chassis_type, robot, scenario, step_by_hand

class Counter(Module):
    """Counts the steps each robot measured (a per-kind state table)."""
    label = "counter"
    fields = ("n",)
    state_fields = (StateField("n"), StateField("x", (2,), -1.0))

    @classmethod
    def sense(cls, frame, rows, p, prev):
        st = frame.state(cls.label)
        st.arrays["n"][rows] += 1.0
        st.arrays["x"][rows] = frame.pose[rows, :2]
        st.seen[rows] = True
        return st.arrays["n"][rows, None].copy()

MODULES.register("counter")(Counter)
chassis_type("counterbot", ("motors", "counter"))
sim = Simulation(scenario([robot("a", -1, 0, type="counterbot"),
                           robot("b", 1, 0, type="counterbot")]), engine=sys.argv[1])
step_by_hand(sim, 3)
sim.world.remove_robot("a")
sim.world.add_robot(RobotSpec("counterbot", "c", (0.0, 2.0, 0.0), 0.0))
sim.relayout()
step_by_hand(sim, 2)
out = {"after": {n: sim.snapshot.reading(n, "counter")[0] for n in ("b", "c")},
       "names": list(sim.states.names)}
sim.reset()
step_by_hand(sim, 1)
out["reset"] = {n: sim.snapshot.reading(n, "counter")[0] for n in ("a", "b")}
print(json.dumps(out))
'''


@pytest.mark.slow
def test_a_module_s_state_table_follows_its_robots_by_name_and_a_reset_starts_it_over():
    done = subprocess.run([sys.executable, "-c", STATE_SCRIPT, "kinematic"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    # the initial measurement counts as one, then 3 + 2 steps; c joined before the last 2
    assert got["after"] == {"b": 6.0, "c": 2.0}
    assert got["names"] == ["b", "c"]
    assert got["reset"] == {"a": 2.0, "b": 2.0}
