"""The benchmark suite's commands (``coopsim bench smoke``, ``coopsim bench compare``).

The suite is airspeed velocity's (asv): ``benchmarks/suite/`` of a clone, configured by its
``asv.conf.json`` (benchmarks/README.md). ``smoke`` runs every case once at its tiny size
(``COOPSIM_BENCH_SMOKE=1``) through the suite's own runner, ``benchmarks/smoke.py``, in a
process of its own: CI's proof that each still runs. The app layer never imports the suite
(the suite stands above the package it measures). ``compare`` measures
the headline cases on two commits and lists what got slower.

Why ``compare`` does not let asv build a virtualenv per commit: installing coopsim's
dependencies (numpy, scipy, numba, pymunk, mujoco, imgui) into a fresh environment takes
minutes per commit and needs the network, and numba would compile every kernel again in each.
Instead each commit's tree is unpacked once (``git archive``) into ``.asv/trees/<sha>`` and its
cases run with ``asv run --python=same`` with that tree first on the path (asv's
``ASV_PYTHONPATH``): the same installed dependencies on both sides, so the comparison isolates
the code; numba's cache persists beside each tree, so a tree compiles once. A change of the
dependencies themselves is not measured this way (``asv run`` with its virtualenv does that).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click

from ..model.errors import CoopsimError



def clone() -> Path:
    """The clone holding the suite (``asv.conf.json`` and ``benchmarks/suite``).

    Raises:
        CoopsimError: coopsim runs from an install, not a clone.
    """
    top = Path(__file__).resolve().parents[2]
    if not (top / "asv.conf.json").is_file() or not (top / "benchmarks" / "suite").is_dir():
        raise CoopsimError("the benchmark suite lives in a clone of coopsim (asv.conf.json, "
                           "benchmarks/suite/): run this from one")
    return top


def smoke(only: str | None = None) -> int:
    """``coopsim bench smoke``: every case of the suite once at its smoke size, run by the
    suite's own runner (``benchmarks/smoke.py``) in a process of its own, so this package never
    imports the suite; its lines are passed through. Returns the runner's exit status (1 if a
    case failed)."""
    top = clone()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(top), str(top / "benchmarks"), os.environ.get("PYTHONPATH")) if p))
    done = subprocess.run([sys.executable, str(top / "benchmarks" / "smoke.py"),
                           *([only] if only else [])], env=env)
    return done.returncode


def suite_value(expression: str, top: Path) -> str:
    """What ``expression`` (Python, over ``suite.common``) prints, asked of the suite in a
    process of its own (this package never imports the suite)."""
    done = subprocess.run([sys.executable, "-c", f"from suite import common; print({expression})"],
                          env=dict(os.environ, PYTHONPATH=str(top / "benchmarks")),
                          capture_output=True, text=True)
    if done.returncode:
        raise CoopsimError(f"the benchmark suite does not load: {done.stderr[-2000:]}")
    return done.stdout.strip()


def tree(top: Path, rev: str) -> tuple[str, Path]:
    """The commit ``rev`` names and its tree unpacked (once) under ``.asv/trees/``.

    Raises:
        CoopsimError: ``rev`` names no commit.
    """
    done = subprocess.run(["git", "-C", str(top), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                          capture_output=True, text=True)
    if done.returncode:
        raise CoopsimError(f"{rev!r} names no commit of {top}")
    sha = done.stdout.strip()
    path = top / ".asv" / "trees" / sha
    if not path.is_dir():
        part = path.with_name(sha + ".part")
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
        archive = subprocess.Popen(["git", "-C", str(top), "archive", sha],
                                   stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(part)], stdin=archive.stdout, check=True)
        if archive.wait():
            raise CoopsimError(f"git archive {sha} failed")
        reuse_kernels(part, path.parent)
        part.rename(path)
    return sha, path


def reuse_kernels(new: Path, trees: Path) -> None:
    """Give the freshly unpacked tree ``new`` the compiled kernels of the newest tree already
    under ``trees`` wherever a source file is byte for byte the same: its modification time is
    set to the old one's and that folder's ``__pycache__`` is copied. numba keys a cached
    kernel by its own file's size and time (and coopsim's ``compiled.sources_key`` by the text
    of the files it inlines), so unchanged kernels load at once and a changed file still
    compiles anew."""
    done = [p for p in trees.iterdir() if p.is_dir() and not p.name.endswith(".part")]
    if not done:
        return
    old = max(done, key=lambda p: p.stat().st_mtime)
    for source in new.glob("coopsim/**/*.py"):
        twin = old / source.relative_to(new)
        if twin.is_file() and twin.read_bytes() == source.read_bytes():
            stat = twin.stat()
            os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    for cache in old.glob("coopsim/**/__pycache__"):
        shutil.copytree(cache, new / cache.relative_to(old), dirs_exist_ok=True)


def warm(top: Path, sha: str, path: Path) -> None:
    """Compile (or load) the kernels of the tree ``path`` by running the headline cases once at
    their smoke size with its coopsim, before anything is timed: a tree compiles once (numba's
    cache lies in it), 10-40 s on a quiet machine, which asv's per-case timeout must not pay.

    Raises:
        CoopsimError: a headline case fails on that tree.
    """
    click.echo(f"kernels of {sha[:10]}: compiling or loading (once per tree)", err=True)
    # COOPSIM_JIT=wait: an older tree's kernels loaded before its cases (today's load with a run)
    env = dict(os.environ, COOPSIM_BENCH_SMOKE="1", COOPSIM_JIT="wait",
               PYTHONPATH=os.pathsep.join((str(path), str(top / "benchmarks"))))
    done = subprocess.run([sys.executable, "-c",
                           "from suite.common import warm_headline; warm_headline()"],
                          cwd=path, env=env, capture_output=True, text=True)
    if done.returncode:
        raise CoopsimError(f"the headline cases fail on {sha[:10]}:\n{done.stderr[-2000:]}")


def compare_config(top: Path) -> Path:
    """A copy of ``asv.conf.json`` whose paths are absolute and whose results go to
    ``.asv/compare-results`` (a comparison's figures are not the stored history)."""
    text = re.sub(r"^\s*//.*$", "", (top / "asv.conf.json").read_text(), flags=re.M)
    conf = json.loads(text)
    conf.update(repo=str(top), benchmark_dir=str(top / "benchmarks" / "suite"),
                results_dir=str(top / ".asv" / "compare-results"),
                html_dir=str(top / ".asv" / "compare-html"), env_dir=str(top / ".asv" / "env"))
    path = top / ".asv" / "compare.conf.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(conf, indent=1))
    return path


def asv(*args: str, env: dict | None = None, capture: bool = False) -> str:
    """Run ``python -m asv ARGS``; its output when ``capture``. ``asv run`` exits 2 when a case
    failed: that is a result (``asv compare`` marks it), not an error here.

    Raises:
        CoopsimError: asv is missing or fails.
    """
    done = subprocess.run([sys.executable, "-m", "asv", *args], env=env, text=True,
                          capture_output=capture)
    if done.returncode and not (args[0] == "run" and done.returncode == 2):
        raise CoopsimError(f"asv {args[0]} failed (exit {done.returncode}; is asv installed? "
                           f"pip install 'coopsim[bench]'){': ' + done.stderr if capture else ''}")
    return done.stdout if capture else ""


def ensure_machine(conf: str) -> bool:
    """Record this machine for asv (``asv machine --yes``: its host name, OS, CPU and memory
    as asv reads them) when asv has no record of any (``~/.asv-machine.json``); True when it
    did. Why: ``asv run`` on a machine it does not know stops with "No information stored
    about machine" before timing anything, and the first ``coopsim bench compare`` on a new
    machine failed that way after compiling both trees' kernels."""
    if Path("~/.asv-machine.json").expanduser().is_file():
        return False
    click.echo("asv knows no machine here: recording this one (asv machine --yes)", err=True)
    asv("machine", "--yes", "--config", conf, capture=True)
    return True


def compare(base: str, head: str, factor: float = 1.1, rounds: int = 2,
            bench: str | None = None) -> list[str]:
    """``coopsim bench compare BASE HEAD``: the headline cases (or those ``bench`` matches) of
    both commits, ``rounds`` rounds alternating BASE, HEAD (the machine's drift hits both
    alike), then asv's comparison; returns the lines of the cases slower by more than
    ``factor``."""
    top = clone()
    headline = suite_value("common.headline_regex()", top)
    conf = str(compare_config(top))
    shas = [tree(top, rev) for rev in (base, head)]
    ensure_machine(conf)
    for sha, path in shas:
        warm(top, sha, path)
    for k in range(rounds):
        for sha, path in shas:
            click.echo(f"round {k + 1}/{rounds}: {sha[:10]}", err=True)
            env = {k: v for k, v in os.environ.items()
                   if k not in ("PYTHONPATH", "COOPSIM_BENCH_SMOKE")}
            env.update(ASV_PYTHONPATH=str(path), COOPSIM_JIT="wait")
            asv("run", "--config", conf, "--python=same", "--set-commit-hash", sha,
                "--bench", bench or headline, "--attribute", "rounds=1",
                *(["--append-samples"] if k else []), "--show-stderr", env=env)
    table = asv("compare", "--config", conf, "--factor", str(factor), "--split",
                shas[0][0], shas[1][0], capture=True)
    click.echo(table)
    return [line for line in table.splitlines() if line.lstrip("| ").startswith("+")]
