"""The generated reference (docs/reference) is what the code declares now: regenerating it
changes nothing (``python -m coopsim.app.reference`` rewrites it). This one check replaces the
tests that kept hand-written tables of commands, parameters, keys and files in step."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from coopsim.app import reference

ROOT = Path(__file__).resolve().parents[2]


def test_the_checked_in_reference_is_the_generated_one(tmp_path):
    stale = subprocess.run([sys.executable, "-m", "coopsim.app.reference", "--check"], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
    assert stale.returncode == 0, stale.stderr + "\nrun: python -m coopsim.app.reference"
    # the check is no formality: a page the code no longer says is found, and rewritten
    out = tmp_path / "reference"
    assert reference.main(["--out", str(out)]) == 0
    (out / "modules.md").write_text((out / "modules.md").read_text().replace("## sonar", "## s"))
    assert reference.main(["--out", str(out), "--check"]) == 1
    assert reference.main(["--out", str(out)]) == 0
    assert reference.main(["--out", str(out), "--check"]) == 0
    page = (out / "modules.md").read_text()
    assert "## sonar" in page and "| 200 | `read` |" in page and "`max_range`" in page
    assert str(ROOT) not in "".join(p.read_text() for p in out.glob("*.md"))
