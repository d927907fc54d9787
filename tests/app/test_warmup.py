"""``coopsim warmup`` (coopsim.app.warmup) on an install without the optional 3D extra: the
bundled worlds it cannot build are passed over, and it ends with its summary line. A process
of its own in which MuJoCo cannot be imported (``sys.modules['mujoco'] = None``: Python's own
way to make an import fail); the kernels come from the suite's warm cache."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WITHOUT_MUJOCO = """
import sys
sys.modules["mujoco"] = None  # import mujoco raises ImportError, as on an install without it
from coopsim.app.warmup import warmup
warmup()
"""


@pytest.mark.slow
def test_warmup_passes_over_what_needs_mujoco_when_it_is_not_installed():
    done = subprocess.run([sys.executable, "-c", WITHOUT_MUJOCO], capture_output=True,
                          text=True, timeout=1800, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "coopsim: the kernels are" in done.stdout, done.stdout
    assert "Traceback" not in done.stderr
