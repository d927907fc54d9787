"""How kernels get compiled (coopsim.model.compiled): found from the code, keyed by every
source a kernel inlines (an edit of a helper recompiles each kernel using it, never a stale
one from the cache), loaded with a run so that no step compiles (the first run after an
install, its cache cold, compiles in the open: tests/app/test_release.py). Real processes;
waits on their exits, with only a generous bound on the whole."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coopsim.model import compiled
from coopsim.model.compiled import NOTICE

ROOT = Path(__file__).resolve().parents[2]
BOUND = 2400  # s: cold compiles on a loaded two-core machine


@compiled.jit(inline=True)
def _twice(x):
    return 2.0 * x


@compiled.jit()
def _uses_twice(x):
    return _twice(x) + 1.0


LIMIT = 3.0


@compiled.jit()
def _reads_limit(x):
    return min(x, LIMIT)


def test_the_kernel_modules_are_found_from_the_code():
    found = compiled.kernel_modules()
    for name in ("coopsim.raycast.jitcast", "coopsim.model.noise_kernels",
                 "coopsim.plugins.modules.kernels", "coopsim.physics.kinematic.kernels",
                 "coopsim.physics.aerial.kernels", "coopsim.env.copykernels"):
        assert name in found
    assert "coopsim.app.cli" not in found and "coopsim.client.client" not in found


def test_a_kernel_is_keyed_by_the_files_of_the_kernels_it_calls(tmp_path, monkeypatch):
    """sources_key follows a kernel's globals to the kernels it calls (and theirs): the text
    of their files is in the key, so an edit there gives another key."""
    key = _uses_twice._cache._index_key((), _uses_twice.targetctx.codegen())
    assert key[-2:] == (("nogil",), compiled.sources_key(_uses_twice.py_func))
    helper = tmp_path / "helper.py"
    helper.write_text("from coopsim.model.compiled import jit\n\n@jit(inline=True)\n"
                      "def inner(x):\n    return x + 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import helper as module

    def outer(x):
        return module.inner(x)

    before = compiled.sources_key(outer)
    compiled._DIGESTS.pop(str(helper), None)
    helper.write_text(helper.read_text().replace("1.0", "2.0"))
    compiled._DIGESTS.pop(str(helper), None)
    assert compiled.sources_key(outer) != before


def test_a_constant_read_from_the_module_is_in_the_key(monkeypatch):
    """numba freezes a global's value into the machine code: the value is keyed."""
    before = compiled.sources_key(_reads_limit.py_func)
    monkeypatch.setattr(sys.modules[__name__], "LIMIT", 4.0)
    assert compiled.sources_key(_reads_limit.py_func) != before
    assert _uses_twice(2.0) == 5.0


NO_NEW_VERSION = """
import sys

from coopsim.app.bench import swarm_scenario
from coopsim.formats.files import load
from coopsim.model import compiled
from coopsim.plugins.modules import kernels
from coopsim.sim import fused as fused_step
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

compiled.load_pending()
kinds = ("gps_sense", "compass_sense", "motors_actuate", "motors_sense", "velocity_actuate",
         "velocity_sense", "odometry_sense", "target_sense", "bumper_sense", "sonar_sense")


def versions():
    return {k: len(getattr(kernels, k).signatures) for k in kinds}


assert all(versions().values()), versions()  # loaded with the loaders, before any world
grew = []
for n in (1, 3):
    for engine, fused in (("kinematic", True), ("pymunk", True), ("kinematic", False)):
        fused_step.ENABLED = fused  # False: every kind by its own kernel (plain path)
        for kind, module, command in (("single", "motors", (0.3, 0.25)),
                                      ("holonomic", "velocity", (0.3, 0.1, 0.2, 0, 0, 0))):
            st = Stepper(Simulation(swarm_scenario(n, robot_type=kind), engine=engine),
                         mode="lockstep")
            for name in st.sim.snapshot.robots:
                st.slots.put(name, module, command, attach=False)
            before = versions()  # the world made: its plan's calls compiled with it
            for _ in range(20):
                st.tick()
            if versions() != before:
                grew.append((n, engine, fused, kind, before, versions()))
st = Stepper(Simulation(load(sys.argv[1]), engine="aerial"), mode="lockstep")
before = versions()
for _ in range(20):  # the flight pass's altimeter casts against the 3D scene
    st.tick()
if versions() != before:
    grew.append(("crazyflie", before, versions()))
assert not grew, grew
print("ok")
"""


@pytest.mark.slow
def test_the_loaders_compile_every_version_a_step_uses():
    """The loaders and the making of a world compile every version of the kernels its steps
    pass (read-only or not, strided or not): ticks of 1 and 3 robots on both engines, and of
    a Crazyflie on the
    aerial engine, compile none. In a process
    of its own: this one's kernels have versions other tests made."""
    done = subprocess.run([sys.executable, "-c", NO_NEW_VERSION,
                           str(ROOT / "scenarios" / "crazyflie_hover.scenario")],
                          capture_output=True, text=True, timeout=BOUND)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


READINGS = """
import hashlib, sys
import numpy as np
from coopsim.formats.files import load
from coopsim.sim.simulation import Simulation
from coopsim.sim.stepper import Stepper

for path, engine in ((sys.argv[1], "kinematic"), (sys.argv[1], "pymunk"),
                     (sys.argv[2], "aerial")):
    st = Stepper(Simulation(load(path), seed=1, engine=engine), mode="lockstep")
    for _ in range(3):
        snap = st.tick()
    for label in sys.argv[3].split(","):
        if label in snap.readings:
            data = np.ascontiguousarray(snap.readings[label]).tobytes()
            print(engine, label, hashlib.sha256(data).hexdigest()[:16], st.sim.step_path)
"""


@pytest.mark.slow
def test_a_refused_cold_run_says_one_line(tmp_path):
    """A scenario refused before anything is built, the cache cold: the error is the only
    line (nothing compiles for it)."""
    bad = tmp_path / "bad.scenario"
    bad.write_text("[WORLD]\nfile nowhere.world\n")
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")  # cold: nothing compiled yet
    result = subprocess.run([sys.executable, "-m", "coopsim", "run", str(bad), "--headless",
                             "--no-controllers", "--port", "0"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=BOUND)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert str(bad) in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_an_edited_helper_recompiles_every_kind_that_uses_it(tmp_path):
    """A copy of the package with its kernel cache (the suite's warm-up filled it; the
    sources' times kept) runs noisy sensors (the composed step on the kinematic, pymunk and
    aerial engines: each draws with ``noise_kernels.normal``, the composed calls inline it),
    loading every kernel from the copied cache; then ``normal`` is edited and the same runs
    repeat with the same cache: every noisy reading changes (a kernel loaded stale from the
    cache would give the old bits). The first run after an install, its cache cold:
    tests/app/test_release.py."""
    folder = tmp_path / "install"
    shutil.copytree(ROOT / "coopsim", folder / "coopsim")  # copy2: the files' times kept
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "NUMBA_CACHE_DIR")}
    env["PYTHONPATH"] = str(folder)
    args = [sys.executable, "-c", READINGS, str(ROOT / "scenarios" / "learn_goal.scenario"),
            str(ROOT / "scenarios" / "crazyflie_hover.scenario"), "sonar,imu"]

    def readings() -> tuple[dict, str]:
        done = subprocess.run(args, capture_output=True, text=True, timeout=BOUND, env=env,
                              cwd=folder)
        assert done.returncode == 0, done.stderr[-3000:]
        out = {}
        for line in done.stdout.splitlines():
            engine, label, digest, path = line.split(" ", 3)
            out[engine, label] = (path, digest)
        return out, done.stderr

    before, said = readings()
    if not os.environ.get("NUMBA_CACHE_DIR"):  # the cache beside the sources came along
        assert NOTICE.strip() not in said, said  # keyed by the sources' text, not their place
    source = folder / "coopsim" / "model" / "noise_kernels.py"
    text = source.read_text()
    edited = text.replace("        return -x if (z >> S8) & _U(1) else x\n",
                          "        return (-x if (z >> S8) & _U(1) else x) * 1.5\n")
    assert edited != text
    source.write_text(edited)
    after, said = readings()
    assert NOTICE.strip() in said, said
    noisy = (("kinematic", "sonar"), ("pymunk", "sonar"), ("aerial", "imu"))
    assert set(noisy) <= set(before) and set(before) == set(after)
    assert {k: v[0] for k, v in before.items()} == {k: v[0] for k, v in after.items()}
    assert "composed" in before["kinematic", "sonar"][0]
    assert "composed" in before["aerial", "imu"][0]
    for key in noisy:
        assert before[key][1] != after[key][1], (key, before, after)


def test_load_pending_runs_each_loader_once():
    calls = []
    warm = compiled.warmer(lambda: calls.append(1))
    compiled.load_pending()
    compiled.load_pending()
    assert warm.ready and calls == [1]
    assert np.isfinite(_uses_twice(1.0))
