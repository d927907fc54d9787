"""examples/plugin-kernel (coopsim-beacon): a plugin module kind computed by a compiled kernel
(the ModuleKernel contract, docs/plugins.md) and one of Python code only, registered through
entry points, in a world of built-in kinds.

The quick tests register the package the way an installed one is found (its entry points in a
``dist-info`` folder on ``sys.path``, importlib.metadata's own lookup) and run it in a fresh
process; the slow one ``pip install``s it into a new venv and runs ``coopsim check`` and
``coopsim run`` there. The expected readings come from this file's own arithmetic.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import venv as pyvenv
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "plugin-kernel"
SCENARIO = PLUGIN / "scenarios" / "beacon.scenario"
PROBE = Path(__file__).with_name("kernel_probe.py")
BEACON = (1.0, 1.0)  # m, beacon.scenario's
RING = 1.5  # m, bot1's chime ring


def registered(tmp: Path) -> Path:
    """A folder that, on ``sys.path``, registers coopsim-beacon's entry points as installed
    (read from its pyproject.toml's tables)."""
    info = tmp / "coopsim_beacon-0.1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: coopsim-beacon\n"
                                   "Version: 0.1.0\n")
    text = (PLUGIN / "pyproject.toml").read_text()
    groups = []
    for group in ("coopsim.modules", "coopsim.robot_types"):
        head = f'[project.entry-points."{group}"]'
        block = text.split(head, 1)[1].split("\n[", 1)[0]
        lines = [line.replace('"', "").replace(" = ", "=").strip()
                 for line in block.splitlines() if "=" in line]
        groups.append(f"[{group}]\n" + "\n".join(lines))
    (info / "entry_points.txt").write_text("\n\n".join(groups) + "\n")
    return tmp


def probe(tmp: Path, steps: int, fused: bool = True) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(registered(tmp)), str(PLUGIN), str(ROOT)]))
    result = subprocess.run([sys.executable, str(PROBE), str(SCENARIO), str(steps),
                             *(() if fused else ("plain",))],
                            capture_output=True, text=True, env=env, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


def test_a_kernel_kind_is_composed_with_the_built_ins_and_a_python_kind_is_a_stage(tmp_path):
    """The plugin's kernel kind runs inside the composed call with the built-ins', its Python
    kind as a stage around it (no demotion); the kernel's readings are the beacon's geometry,
    its state (closest) kept between steps; the Python kind's its own."""
    found = probe(tmp_path, 40)
    assert found["origin"] == "coopsim-beacon"
    assert found["path"].startswith("composed (motors, beacon"), found["path"]
    assert found["path"].endswith("+ stages (chime)"), found["path"]
    closest = [math.inf, math.inf]
    for step in found["steps"]:
        pose, beacon = np.array(step["pose"]), np.array(step["beacon"])
        dx, dy = BEACON[0] - pose[:, 0], BEACON[1] - pose[:, 1]
        # bot2: no noise, the plain arithmetic; bot1: noise 0.01 m
        assert beacon[1, 0] == pytest.approx(math.hypot(dx[1], dy[1]), abs=1e-12)
        bearing = math.remainder(math.atan2(dy[1], dx[1]) - pose[1, 2], 2 * math.pi)
        assert beacon[1, 1] == pytest.approx(bearing, abs=1e-9)
        assert beacon[0, 0] == pytest.approx(math.hypot(dx[0], dy[0]), abs=0.1)
        assert beacon[0, 0] != math.hypot(dx[0], dy[0])  # its noise is drawn
        for i in (0, 1):
            closest[i] = min(closest[i], beacon[i, 0])
            assert beacon[i, 2] == closest[i]
        assert step["chime"][0][0] == float(math.hypot(*pose[0, :2]) <= RING)


def test_the_stages_give_the_plain_paths_bits(tmp_path):
    """The same run with every kind on the plain path (composing off): every reading the same
    bits, the noise of the kernel kind included (its block of the step's one draw)."""
    fused, plain = probe(tmp_path, 30), probe(tmp_path, 30, fused=False)
    assert plain["path"].startswith("plain")
    assert fused["steps"] == plain["steps"]


@pytest.mark.slow
def test_pip_installs_it_and_coopsim_runs_it(tmp_path):
    """``pip install`` of the example into a new venv (coopsim's dependencies linked), then
    ``coopsim list``, ``check`` and a headless lockstep ``run`` of its scenario there."""
    from venvhelpers import link_dependencies, share_dependencies

    where = tmp_path / "venv"
    pyvenv.create(where, with_pip=False, symlinks=True)
    python = where / "bin" / "python"
    share_dependencies(python, link_dependencies(tmp_path / "deps"))
    result = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                             "-q", "--no-compile", "--disable-pip-version-check",
                             "-e", str(ROOT), "-e", str(PLUGIN)],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "PYTHONPATH")}
    coopsim = where / "bin" / "coopsim"
    listed = subprocess.run([str(coopsim), "list"], capture_output=True, text=True, env=env,
                            timeout=600)
    assert listed.returncode == 0 and "beacon" in listed.stdout and "beaconbot" in listed.stdout
    checked = subprocess.run([str(coopsim), "check", str(SCENARIO)], capture_output=True,
                             text=True, env=env, timeout=600)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    found = subprocess.run([str(python), str(PROBE), str(SCENARIO), "5"], capture_output=True,
                           text=True, env=env, timeout=1800)
    assert found.returncode == 0, found.stderr[-3000:]
    assert json.loads(found.stdout.splitlines()[-1])["path"].endswith("+ stages (chime)")
