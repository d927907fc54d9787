"""examples/learning/ at tiny sizes: CMA-ES evolution over batched worlds on a real Dask
LocalCluster, then the champion unchanged as a network controller against ``coopsim run``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

# Installed or not, without importing them: they run in the example's processes only, and
# importing them here cost every worker's collection ~1.4 s of CPU (cma pulls SciPy's stats,
# matplotlib's pyplot; distributed pulls Dask).
_MISSING = [name for name in ("cma", "distributed", "gymnasium") if find_spec(name) is None]
if _MISSING:
    pytest.skip(f"needs {', '.join(_MISSING)} (the learning extra)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "learning"
sys.path.insert(0, str(EXAMPLE))

from neuro import Network  # noqa: E402


def test_the_network_is_the_same_on_arrays_and_one_reading():
    net = Network(Network.size(3) * [0.1], hidden=3)
    one = net([2.0] * 5 + [0.3] * 6)
    many = net([[[2.0] * 5 + [0.3] * 6] * 4] * 2)
    assert many.shape == (2, 4, 2) and (many == one).all()
    with pytest.raises(ValueError, match="3 hidden units has 44 weights"):
        Network([0.0] * 5, hidden=3)


@pytest.mark.slow
def test_evolve_then_deploy_the_champion_over_the_network(tmp_path):
    out = tmp_path / "evo"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "evolve.py"), "--generations", "2", "--popsize", "4",
         "--chunk", "2", "--steps", "15", "--workers", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "8/8" in done.stderr and "champion fitness" in done.stderr  # the progress bar
    rows = (out / "fitness.csv").read_text().splitlines()
    assert rows[0] == "generation,best,mean,champion" and len(rows) == 3
    assert (out / "fitness.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    champion = json.loads((out / "champion.json").read_text())
    assert len(champion["weights"]) == Network.size(0) and champion["max_speed"] == 0.6
    assert champion["fitness"] == max(float(r.split(",")[3]) for r in rows[1:])
    # the very network, as a network controller of r1 in lockstep; r1 has no driver of its own
    run = subprocess.run(
        [sys.executable, "-m", "coopsim", "run", str(ROOT / "scenarios" / "learn_avoid.scenario"),
         "--headless", "--mode", "lockstep", "--duration", "1", "--port", "0",
         "--controller", f"r1={EXAMPLE / 'deploy.py'} {out / 'champion.json'}"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "duration 1 s reached" in run.stdout + run.stderr
    mean = re.search(r"^monitors\.fwd1\s+\S+\s+(\S+)", run.stdout + run.stderr, re.M)
    assert mean is not None, run.stdout
    # the same network in the Gymnasium environment drives r1 the same way, step for step
    assert float(mean.group(1)) == pytest.approx(_in_process(out / "champion.json", 20),
                                                 abs=2e-4)


def _in_process(champion: Path, steps: int) -> float:
    """r1's mean forward speed under the network over ``steps`` steps, in-process, m/s."""
    import gymnasium

    import coopsim.env  # noqa: F401

    net = Network.load(champion)
    env = gymnasium.make("coopsim/Scenario-v0", robot="r1", observe=["sonar"],
                         scenario=str(ROOT / "scenarios" / "learn_avoid.scenario")).unwrapped
    obs, _ = env.reset()
    speeds = []
    for _ in range(steps):
        obs, _, _, _, info = env.step(net(obs["sonar"]))
        speeds.append(info["metrics"]["fwd1"])
    assert max(speeds) > 0.01  # it drove
    return sum(speeds) / steps


@pytest.mark.slow
def test_the_pettingzoo_coverage_example_trains_a_shared_policy(tmp_path):
    out = tmp_path / "cov"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "coverage_team.py"), "--generations", "2", "--popsize",
         "3", "--steps", "15", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "6/6" in done.stderr
    rows = (out / "returns.csv").read_text().splitlines()
    best = max(float(r.split(",")[1]) for r in rows[1:])
    policy = json.loads((out / "policy.json").read_text())
    assert policy["team_return"] == best > 0.0  # the spread is positive every step
    assert (out / "final.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
