"""The release: ``python -m build`` makes an sdist and a wheel, ``twine check`` passes both
(their metadata and README render as PyPI shows them), and the wheel installed into a fresh
virtual environment, away from the clone, says its version, runs the bundled demo, checks a
bundled scenario and lists the plugins.

The fresh environment reaches the dependencies already installed here through a folder of
links to this environment's site-packages, coopsim's own entries left out (no network, no
second download), and gets coopsim only from the wheel (``pip install --no-deps``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

import pytest

from coopsim.model.compiled import NOTICE

from venvhelpers import link_dependencies, share_dependencies

pytestmark = pytest.mark.slow  # builds in a process, installs into a fresh venv

ROOT = Path(__file__).resolve().parents[2]
#: s of CPU a command and every process it starts may use (the demo's cold compile takes about
#: a tenth of it): a runaway still ends, and a loaded machine, however slow, fails nothing
CPU_LIMIT = 1200.0
#: s of wall a command's processes may go without using any CPU at all: a hang still ends
IDLE_LIMIT = 300.0
#: What a copy of the clone leaves out: environments, build products, caches, results.
LEFT_OUT = shutil.ignore_patterns(".venv", "venv", ".git", "test-artifacts", "node_modules",
                                  "build", "dist", "*.egg-info", "__pycache__", "*.parquet",
                                  "*-recordings", "*-plots", ".pytest_cache")
RECORDINGS = {"README.md", "sample.mcap", "transport.mcap", "formation.mcap"}  # committed ones


def _tree(root: int) -> tuple[float, set[int]]:
    """(s of CPU the live processes descended from ``root``, it included, have used with the
    children they have reaped; their pids)."""
    procs = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
                procs[int(entry)] = (int(fields[1]), sum(map(int, fields[11:15])))
            except (OSError, IndexError, ValueError):
                pass  # ended meanwhile
    tree, grown = {root}, True
    while grown:
        more = {pid for pid, (parent, _) in procs.items() if parent in tree} - tree
        tree |= more
        grown = bool(more)
    return sum(procs[pid][1] for pid in tree if pid in procs) / os.sysconf("SC_CLK_TCK"), tree


def _run(argv, cwd, env=None) -> subprocess.CompletedProcess:
    """Run a command to its end however loaded the machine: it fails when its processes have
    used :data:`CPU_LIMIT` s of CPU, or none for :data:`IDLE_LIMIT` s, not after a wall time
    (a cold compile at load 15 took longer than 600 s)."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    used, since = 0.0, time.monotonic()
    while True:
        try:
            out, err = proc.communicate(timeout=5.0)
            break
        except subprocess.TimeoutExpired:
            now, pids = _tree(proc.pid)
            if now > used:
                used, since = now, time.monotonic()
            if used > CPU_LIMIT or time.monotonic() - since > IDLE_LIMIT:
                for pid in pids:  # the whole tree: a child left would hold the pipes open
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                out, err = proc.communicate()
                pytest.fail(f"{argv}: {used:.0f} s of CPU, none for "
                            f"{time.monotonic() - since:.0f} s: stopped\n{out}\n{err}")
    done = subprocess.CompletedProcess(argv, proc.returncode, out, err)
    assert done.returncode == 0, f"{argv}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The sdist and the wheel ``python -m build`` makes of the clone (offline: the build uses
    this environment's setuptools and wheel instead of downloading them)."""
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    # built from a copy: the sdist step rewrites SOURCES.txt and entry_points.txt in the
    # tree's coopsim.egg-info, which tests running beside this one read plugins from
    source = tmp_path_factory.mktemp("source") / "coopsim"
    shutil.copytree(ROOT, source, ignore=_left_out)
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
         cwd=out)
    wheels, sdists = list(out.glob("coopsim-*.whl")), list(out.glob("coopsim-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, os.listdir(out)
    return wheels[0], sdists[0]


def _left_out(folder: str, names: list[str]) -> set[str]:
    """Names shutil.copytree leaves out of a copy of the clone (recordings: the committed)."""
    out = set(LEFT_OUT(folder, names))
    if Path(folder) == ROOT / "recordings":
        out |= {n for n in names if n not in RECORDINGS}
    return out


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory):
    """A fresh venv with the wheel installed: (its bin folder, an environment, a bare folder)."""
    wheel, _ = dist
    base = tmp_path_factory.mktemp("release")
    env_dir = base / "venv"
    venv.create(env_dir, with_pip=False, symlinks=True)
    python = env_dir / "bin" / "python"
    share_dependencies(python, link_dependencies(base / "deps"))
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
          "--no-index", "--quiet", str(wheel)], cwd=base)
    env = {k: v for k, v in os.environ.items()  # its kernel cache beside its own files
           if k not in ("DISPLAY", "PYTHONPATH", "VIRTUAL_ENV", "COOPSIM_NAMESERVER",
                        "NUMBA_CACHE_DIR")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return env_dir / "bin", env, elsewhere


def test_the_wheel_carries_the_bundled_content_and_the_sdist_its_sources(dist):
    wheel, sdist = dist
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("coopsim/_bundled/scenarios/demo.scenario",
                   "coopsim/_bundled/worlds/arena.world",
                   "coopsim/_bundled/recordings/sample.mcap",
                   "coopsim/_bundled/clients/python/wander.py",
                   "coopsim/_bundled/exercises/02_target.scenario"):
        assert needed in names
    assert any(n.endswith("/LICENSE") for n in names)
    listing = subprocess.run(["tar", "tzf", str(sdist)], capture_output=True, text=True).stdout
    for needed in ("setup.py", "LICENSE", "CHANGELOG.md", "scenarios/demo.scenario"):
        assert f"/{needed}" in listing


def test_twine_passes_the_wheel_and_the_sdist(dist):
    pytest.importorskip("twine")
    done = _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist)],
                cwd=dist[0].parent)
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_the_wheel_is_named_for_the_version(dist):
    import coopsim

    wheel, sdist = dist
    assert wheel.name.startswith(f"coopsim-{coopsim.__version__}-")
    assert sdist.name == f"coopsim-{coopsim.__version__}.tar.gz"


def test_the_installed_wheel_runs_from_its_own_files_away_from_the_clone(installed):
    bin_dir, env, elsewhere = installed
    where = _run([str(bin_dir / "python"), "-c", "import coopsim, coopsim.model.bundled as b; "
                  "print(coopsim.__file__); print(b.BUNDLED)"], cwd=elsewhere, env=env)
    package, bundled = where.stdout.split()
    assert str(ROOT) not in package and str(ROOT) not in bundled
    assert bundled.endswith(os.path.join("coopsim", "_bundled"))


def test_the_installed_coopsim_says_its_version(installed):
    import coopsim

    bin_dir, env, elsewhere = installed
    done = _run([str(bin_dir / "coopsim"), "--version"], cwd=elsewhere, env=env)
    assert coopsim.__version__ in done.stdout


def test_the_installed_coopsim_lists_its_plugins(installed):
    bin_dir, env, elsewhere = installed
    done = _run([str(bin_dir / "coopsim"), "list"], cwd=elsewhere, env=env)
    for name in ("wander", "pymunk", "sonar", "ctf"):
        assert name in done.stdout


def test_the_installed_coopsim_runs_the_bundled_demo_headless(installed):
    """The install's first run, its kernel cache cold: it says once, on one line before the
    run's own, that it compiles, steps compiled from its first step, and compiles only what
    its world uses (the ground kinds' and the caster's kernels; none of the flying kinds', the
    flight controller's or the arm's inverse kinematics)."""
    bin_dir, env, elsewhere = installed
    package = next((bin_dir.parent / "lib").glob("python*/site-packages/coopsim"))
    assert not list(package.rglob("*.nbi"))  # cold
    # lockstep: the first step waits for the four controller processes (bundled scripts run by
    # the venv's Python), so they must start from the wheel's files for the run to go on
    done = _run([str(bin_dir / "coopsim"), "run", "--headless", "--duration", "2", "--port", "0",
                 "--mode", "lockstep"], cwd=elsewhere, env=env)
    text = done.stdout + done.stderr
    assert "steps" in text and "Traceback" not in text
    assert "crash" not in text and "exited" not in text, text
    assert text.count(NOTICE.strip()) == 1, text
    assert done.stderr.index(NOTICE.strip()) < done.stderr.index("simulating"), text
    made = {path.name.split(".")[0] for path in package.rglob("*.nbi")}
    assert {"kernels", "jitcast"} <= made, made
    assert not made & {"flying", "flight_kernels", "ikkernel"}, made


def test_the_installed_coopsim_finds_a_bundled_scenario_by_its_clone_path(installed):
    bin_dir, env, elsewhere = installed
    done = _run([str(bin_dir / "coopsim"), "run", "scenarios/one_robot.scenario", "--headless",
                 "--duration", "0.5", "--port", "0", "--no-controllers"], cwd=elsewhere, env=env)
    assert "Traceback" not in done.stderr


def test_the_installed_coopsim_checks_a_bundled_scenario_by_its_clone_path(installed):
    bin_dir, env, elsewhere = installed
    done = _run([str(bin_dir / "coopsim"), "check", "scenarios/demo.scenario",
                 "scenarios/ctf.scenario"], cwd=elsewhere, env=env)
    assert "2 file(s) OK" in done.stdout
