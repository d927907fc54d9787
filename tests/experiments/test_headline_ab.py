"""experiments/headline_ab.py: the headline cases on two checkouts by CPU time (issue 55's
no-regression check on a loaded machine)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))

import headline_ab  # noqa: E402


def test_a_case_name_splits_into_module_class_method_and_params():
    assert headline_ab.parse("step.Step.track_ms('pymunk', 100)") == (
        "step", "Step", "track_ms", ("pymunk", 100))
    assert headline_ab.parse("arms.Ik.track_ms") == ("arms", "Ik", "track_ms", ())
    assert headline_ab.parse("aerial.Flight.track_us_per_drone_step(1000)")[3] == (1000,)


def test_the_report_flags_a_case_slower_by_cpu_and_compares_memory_by_rss(capsys):
    row = lambda cpu, rss=1, fig=1.0: {"figure": fig, "cpu_s": cpu, "rss": rss}  # noqa: E731
    got = {"arms.Ik.track_ms": ([row(1.0), row(1.2)], [row(1.3), row(1.4)]),
           "build.Memory.peakmem_world(10000)": ([row(5, 100, None)], [row(1, 100, None)])}
    assert headline_ab.report(got, 1.1) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["ratio"] == round(1.35 / 1.1, 3) and lines[0]["by"] == "cpu_s"
    assert lines[1]["by"] == "rss" and lines[1]["ratio"] == 1.0
    assert headline_ab.report({"arms.Ik.track_ms": ([row(1.0)], [row(1.05)])}, 1.1) == 0


def test_one_case_runs_on_two_checkouts_in_fresh_processes():
    done = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "headline_ab.py"), str(ROOT), str(ROOT),
         "--rounds", "1", "--only", r"^arms\.Ik", "--no-warm"],
        capture_output=True, text=True, timeout=600)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["case"] for line in lines] == ["arms.Ik.track_ms"], done.stderr
    assert lines[0]["base"] > 0 and lines[0]["new"] > 0 and lines[0]["figure_new"] > 0
    assert done.returncode in (0, 1)  # 1 only if one run was 1.1x the other: noise here
