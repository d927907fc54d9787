"""The camera test files in a process of their own (tests/glprocess.py says why)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from glprocess import FILES, OWN

ROOT = Path(__file__).resolve().parents[2]


def test_the_camera_files_pass_in_a_process_of_their_own():
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", *FILES], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, **{OWN: "1"}))
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " skipped" not in done.stdout, done.stdout[-2000:]
