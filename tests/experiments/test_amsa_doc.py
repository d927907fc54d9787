"""docs/experiments/amsa.md says plainly where the reproduction differs from the paper: its
prose quotes the scenario-2 table it sits under, says that by the paper's own measure (the
maximal distance) the order of the gains is reversed, and its one model variant runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "experiments" / "amsa.md"


def _scenario2_rows() -> dict[str, tuple[str, str]]:
    """Kv -> (mean, largest) of the doc's scenario-2 table."""
    rows = re.findall(r"^\| (0\.35|0\.05) \| ([\d.]+) \| ([\d.]+) \|", DOC.read_text(), re.M)
    return {kv: (mean, top) for kv, mean, top in rows}


def test_the_differences_quote_the_table_and_say_the_order_is_reversed():
    text = DOC.read_text()
    rows = _scenario2_rows()
    differs = text[text.index("## Where ours differs"):]
    assert "The paper's conclusion holds." not in text
    (m35, top35), (m05, top05) = rows["0.35"], rows["0.05"]
    assert f"({m35} m against\n  {m05} m" in differs or f"{m35} m against {m05} m" in differs
    assert f"Kv 0.35's largest distance is {top35} m and Kv 0.05's {top05} m" in differs
    # the paper: Kv 0.05 ~18 units below Kv 0.35's ~22 by maximal distance; ours the reverse
    assert float(top35) < float(top05) and "the order is reversed" in differs
    assert "drifts where the paper's oscillates" in differs
    assert "One variant tried: a slower leader." in differs


@pytest.mark.slow
def test_the_variant_script_runs_and_matches_the_table_at_our_speed():
    done = subprocess.run([sys.executable, str(ROOT / "studies" / "amsa_variant.py"),
                           "--speeds", "0.05", "--seeds", "1"], capture_output=True, text=True,
                           timeout=600)
    assert done.returncode == 0, done.stderr
    rows = re.findall(r"^\| 0\.05 \| (0\.35|0\.05) \| ([\d.]+) \| ([\d.]+) \|", done.stdout,
                      re.M)
    assert [kv for kv, _, _ in rows] == ["0.35", "0.05"], done.stdout
    table = _scenario2_rows()
    for kv, _, top in rows:  # seed 0 is one of the table's ten seeds
        assert float(top) <= float(table[kv][1]) + 1e-9
