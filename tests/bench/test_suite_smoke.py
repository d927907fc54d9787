"""The benchmark suite (benchmarks/suite, asv): every case runs once at its smoke size
(``coopsim bench smoke``, what CI proves), the headline list names real cases, and ``coopsim
bench compare`` refuses what names no commit. Speed itself is never asserted here."""

import ast
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "benchmarks" / "suite"
sys.path.insert(0, str(ROOT / "benchmarks"))
ENV = {k: v for k, v in os.environ.items() if k != "COOPSIM_BENCH_SMOKE"} | {"PYTHONPATH": str(ROOT)}


def coopsim(*args, env=None):
    return subprocess.run([sys.executable, "-m", "coopsim", *args], cwd=ROOT, text=True,
                          capture_output=True, env=ENV | (env or {}))


@pytest.mark.slow
def test_every_case_runs_once_at_its_smoke_size(tmp_path):
    """... and removes what it made in the temporary folder (asv calls each case's teardown;
    imported.py's and links.py's scenario folders were left in /tmp by every run)."""
    (tmp := tmp_path / "tmp").mkdir()
    done = coopsim("bench", "smoke", env={"TMPDIR": str(tmp)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("every case ran")
    ran = {line.split(".")[0].split(":")[0] for line in done.stdout.splitlines()[:-1]}
    modules = {p.stem for p in SUITE.glob("*.py")} - {"__init__", "common"}
    assert modules <= ran, f"modules with no case run: {modules - ran}"
    assert "FAILED" not in done.stdout
    # Dask's own scratch folder (its two lock files, one folder every cluster reuses) stays
    left = sorted(p.name for p in tmp.iterdir() if p.name != "dask-scratch-space")
    assert not left, "left in the temporary folder"


def test_the_ten_headline_cases_name_cases_of_the_suite():
    import importlib

    from suite.common import HEADLINE

    assert len(HEADLINE) == len(set(HEADLINE)) == 10
    for name in HEADLINE:
        head, _, args = name.partition("(")
        module, cls, method = head.split(".")
        owner = getattr(importlib.import_module(f"suite.{module}"), cls)
        assert callable(getattr(owner, method)), name
        if args:
            combos = itertools.product(*owner.params) if isinstance(owner.params[0], list) \
                else ((p,) for p in owner.params)
            wanted = ast.literal_eval(f"({args.rstrip(')')},)")
            assert wanted in set(combos), name


@pytest.mark.slow
def test_compare_refuses_a_name_that_is_no_commit():
    done = coopsim("bench", "compare", "no-such-rev", "HEAD")
    assert done.returncode == 2
    assert "'no-such-rev' names no commit" in done.stderr
    assert "Traceback" not in done.stderr
