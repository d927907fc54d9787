"""The docs site builds: ``mkdocs build --strict`` (mkdocs.yml, the Material theme) turns docs/
and the generated reference into HTML with no broken link or anchor, and the home page links
every module kind's section of the reference (one click to its commands and parameters)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coopsim.app.reference import builtins

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_site_builds_strict_and_its_home_links_every_module_kind(tmp_path):
    pytest.importorskip("material")
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-5000:]
    home = (site / "index.html").read_text()
    modules = (site / "reference" / "modules" / "index.html").read_text()
    kinds = [label for label, _ in builtins("modules")]
    assert len(kinds) > 20
    for label in kinds:
        assert f'href="reference/modules/#{label}"' in home, label
        assert f'id="{label}"' in modules, label
