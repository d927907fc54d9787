"""The benchmark suite's commands (``coopsim bench smoke``, ``coopsim bench compare``).

The suite is airspeed velocity's (asv): ``benchmarks/suite/`` of a clone, configured by its
``asv.conf.json`` (benchmarks/README.md). ``smoke`` runs every case once at its tiny size
(``COOPSIM_BENCH_SMOKE=1``) through the suite's own runner, ``benchmarks/smoke.py``, in a
process of its own: CI's proof that each still runs. The app layer never imports the suite
(the suite stands above the package it measures). ``compare`` measures cases of the suite on
two commits by CPU time and lists what got slower.

How ``compare`` measures: each case runs in a fresh process per commit per round, the two
commits alternating case by case (the machine's drift falls on both alike), through the suite's
worker ``benchmarks/cpu.py``; a case does a fixed amount of work, so the CPU seconds of its
setup and timed call compare the commits whatever else the machine runs (the wall clock on a
loaded 2-core machine swung a case 2x between two runs of one tree); the medians over the
rounds are compared (a ``peakmem_`` case by peak RSS).

Why not a virtualenv per commit (asv's own way): installing coopsim's dependencies into a fresh
environment takes minutes per commit and needs the network, and numba would compile every
kernel again in each. Instead each commit's tree is unpacked once (``git archive``) into
``.asv/trees/<sha>`` and run with that tree first on the path: the same installed dependencies
on both sides, so the comparison isolates the code; numba's cache persists beside each tree,
so a tree compiles once. The suite is the clone's own for both commits (today's cases run
against the old commit). A change of the dependencies themselves is not measured this way
(``asv run`` with its virtualenv does that).
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
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
    """The commit ``rev`` names and its tree unpacked (once) under ``.asv/trees/``; or, when
    ``rev`` is a folder holding a coopsim tree (a working copy with changes not committed),
    (that folder, it as it is).

    Raises:
        CoopsimError: ``rev`` names no commit and no such folder.
    """
    if (Path(rev) / "coopsim" / "__init__.py").is_file():
        return str(Path(rev).resolve()), Path(rev).resolve()
    done = subprocess.run(["git", "-C", str(top), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                          capture_output=True, text=True)
    if done.returncode:
        raise CoopsimError(f"{rev!r} names no commit of {top} and no folder holding coopsim")
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
        own_metadata(part)
        part.rename(path)
    return sha, path


def own_metadata(tree: Path) -> None:
    """Give the unpacked ``tree`` its own package metadata, a ``coopsim.dist-info`` at its top
    (first on the worker's path, so found before the installed coopsim's): the registries
    load engines, kinds and robot types by the entry points of the metadata, and the
    installed coopsim's name the modules of its own layout, which another commit may lack.
    From the tree's ``setup.cfg`` (``[options.entry_points]``); nothing where it has none."""
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(tree / "setup.cfg")
    if not cfg.has_section("options.entry_points"):
        return
    info = tree / "coopsim.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: coopsim\nVersion: 0\n")
    lines = []
    for group, body in cfg.items("options.entry_points", raw=True):
        entries = [e.strip() for e in body.splitlines() if e.strip()]
        if entries:
            lines += [f"[{group}]", *entries, ""]
    (info / "entry_points.txt").write_text("\n".join(lines))


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


def worker(top: Path, path: Path, *args: str, smoke: bool = False) -> subprocess.CompletedProcess:
    """The suite's worker (``benchmarks/cpu.py ARGS``, the clone's suite) in a fresh process
    with the tree ``path`` first on the path, from an empty folder (``/tmp``: no coopsim of the
    working folder slips in); at smoke size when ``smoke``. ``COOPSIM_JIT=wait`` is set for the
    older trees that read it (they stepped on numpy until their kernels had loaded)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COOPSIM_BENCH_SMOKE")}
    env.update(PYTHONPATH=str(path), COOPSIM_JIT="wait")
    if smoke:
        env["COOPSIM_BENCH_SMOKE"] = "1"
    return subprocess.run([sys.executable, str(top / "benchmarks" / "cpu.py"), *args],
                          cwd=tempfile.gettempdir(), env=env, capture_output=True, text=True)


def case_names(top: Path, regex: str | None) -> list[str]:
    """The cases ``regex`` selects (asv's names), or the headline ones.

    Raises:
        CoopsimError: the suite does not load, or the regex selects nothing.
    """
    if regex is None:
        return suite_value("chr(10).join(common.HEADLINE)", top).splitlines()
    done = worker(top, top, "--list", regex)
    if done.returncode:
        raise CoopsimError(f"the benchmark suite does not load: {done.stderr[-2000:]}")
    found = done.stdout.split("\n")
    found = [n for n in found if n]
    if not found:
        raise CoopsimError(f"--bench {regex!r} selects no case of the suite")
    return found


def warm(top: Path, label: str, path: Path, names: list[str]) -> None:
    """Compile (or load) the kernels of the tree ``path`` by running the classes of ``names``
    once at their smoke size with its coopsim, before anything is timed (a tree compiles once:
    numba's cache lies in it). A failure is said and the comparison goes on: a case the tree
    cannot run (an API it lacks) then shows as failed on that side."""
    click.echo(f"kernels of {short(label)}: compiling or loading (once per tree)", err=True)
    done = worker(top, path, "--warm", *names, smoke=True)
    if done.returncode:
        click.echo(f"warning: the cases' warm-up failed on {short(label)}: "
                   f"{(done.stderr.strip().splitlines() or ['?'])[-1]}", err=True)


def measure(top: Path, path: Path, name: str) -> dict:
    """One case on the tree ``path`` in a fresh process: the worker's figures (``cpu_s``,
    ``wall_s``, ``rss``, ``figure``), ``skipped`` or ``error``."""
    done = worker(top, path, "--one", name)
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])


#: The units of a figure that is a time (a cost: ``us``, ``ms/step``, ``us/ray``), which a
#: comparison judges beside the case's CPU seconds
TIMES = ("ns", "us", "ms", "s")


@dataclass(frozen=True)
class Compared:
    """One case of a comparison: medians over the rounds of BASE's and HEAD's runs.

    Attributes:
        case: asv's name. by: ``cpu_s`` (CPU seconds of setup and call) or ``rss`` (peak
            resident bytes, a ``peakmem_`` case). base, head: the medians of ``by``.
        wall_base, wall_head: the same runs' wall seconds (medians), said beside the CPU.
        figure_base, figure_head: the case's own figure (medians; None where it has none).
        note: why there is no ratio (a side failed or skipped the case), else "".
        unit: The figure's unit (the case's ``@unit``; "" unknown).
    """

    case: str
    by: str = "cpu_s"
    base: float = 0.0
    head: float = 0.0
    wall_base: float = 0.0
    wall_head: float = 0.0
    figure_base: float | None = None
    figure_head: float | None = None
    note: str = ""
    unit: str = ""

    @property
    def ratio(self) -> float:
        """HEAD / BASE (1.0 where BASE is 0)."""
        return self.head / self.base if self.base else 1.0

    @property
    def figure_ratio(self) -> float | None:
        """The figures' HEAD / BASE where the figure is a time (:data:`TIMES`: a tick's us, a
        step's ms), else None. A case's CPU seconds include its imports and its world's
        build: a tick 40 % slower was 5 % of them, within their noise."""
        if self.unit.split("/")[0] not in TIMES or not self.figure_base \
                or self.figure_head is None:
            return None
        return self.figure_head / self.figure_base

    def slower(self, factor: float) -> bool:
        """Whether HEAD's CPU seconds, or its figure where that is a time, exceed BASE's x
        ``factor``."""
        return self.ratio > factor or (self.figure_ratio or 0.0) > factor


def judge(case: str, base: list[dict], head: list[dict]) -> Compared:
    """The medians of a case's rounds on both sides (:class:`Compared`)."""
    for side, runs in (("base", base), ("head", head)):
        bad = [r for r in runs if "error" in r or "skipped" in r]
        if bad or not runs:
            why = bad[0].get("error") or f"skipped: {bad[0]['skipped']}" if bad else "no run"
            return Compared(case, note=f"{side}: {why}")
    by = "rss" if case.split(".")[2].startswith("peakmem") else "cpu_s"

    def median(runs, key):
        values = [r[key] for r in runs if r.get(key) is not None]
        return statistics.median(values) if values else None

    unit = next((r["unit"] for r in head if r.get("unit")), "")
    return Compared(case, by, median(base, by), median(head, by), median(base, "wall_s"),
                    median(head, "wall_s"), median(base, "figure"), median(head, "figure"),
                    unit=unit)


def table(rows: list[Compared], factor: float) -> str:
    """The comparison as a Markdown table; a ratio over ``factor`` (the CPU seconds', or the
    figures' where the figure is a time) starts with ``+``, a case that did not run on a side
    says why."""
    out = ["| case | by | BASE | HEAD | HEAD/BASE | wall BASE s | wall HEAD s | figure BASE "
           "| figure HEAD | figure HEAD/BASE |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r.note:
            out.append(f"| {r.case} | | | | {r.note} | | | | | |")
            continue
        mark = "+" if r.ratio > factor else ""
        unit = "MiB" if r.by == "rss" else "CPU s"
        scale = 1 / 2**20 if r.by == "rss" else 1.0
        figure = r.figure_ratio
        shown = "" if figure is None else f"{'+' if figure > factor else ''}{figure:.3f}"
        out.append(f"| {r.case} | {unit} | {r.base * scale:.4g} | {r.head * scale:.4g} | "
                   f"{mark}{r.ratio:.3f} | {r.wall_base:.4g} | {r.wall_head:.4g} | "
                   f"{_fig(r.figure_base, r.unit)} | {_fig(r.figure_head, r.unit)} | {shown} |")
    return "\n".join(out)


def short(label: str) -> str:
    """A commit's first 10 hex digits; a folder's path whole."""
    return label if os.sep in label else label[:10]


def _fig(value, unit: str = "") -> str:
    return "" if value is None else f"{value:.4g} {unit}".strip()


def compare(base: str, head: str, factor: float = 1.1, rounds: int = 3,
            bench: str | None = None) -> list[str]:
    """``coopsim bench compare BASE HEAD``: the headline cases (or those ``bench`` selects)
    of both commits (or trees), each case in a fresh process per side per round, BASE then
    HEAD, by CPU time and, where a case's figure is a time, by that figure too; prints the
    table and returns the names of the cases slower by more than ``factor`` (or that failed on
    a side)."""
    top = clone()
    names = case_names(top, bench)
    sides = [tree(top, rev) for rev in (base, head)]
    for label, path in sides:
        warm(top, label, path, names)
    got: dict[str, tuple[list, list]] = {n: ([], []) for n in names}
    for k in range(rounds):
        for name in names:
            for s, (_, path) in enumerate(sides):
                got[name][s].append(measure(top, path, name))
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        click.echo(f"round {k + 1}/{rounds} done (load {load:.2f})", err=True)
    rows = [judge(n, *got[n]) for n in names]
    click.echo(f"BASE {short(sides[0][0])}, HEAD {short(sides[1][0])}: {rounds} round(s), each case "
               "a fresh process per side, medians")
    click.echo(table(rows, factor))
    return [r.case for r in rows if r.note and not r.note.split(": ", 1)[1].startswith("skipped")
            or not r.note and r.slower(factor)]
