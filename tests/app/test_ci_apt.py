"""``.ci/system-packages`` (run by ``.ci/run``) waits for the lock another apt holds instead of
exiting 100 at once, and says so on stderr. apt-get, dpkg-query and id are stand-ins on PATH
(the OS edge): this apt-get answers like the real one while a lock is taken -- "Could not get
lock", exit 100 -- for its first calls, then succeeds."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

APT = """#!/bin/sh
echo "$@" >> {calls}
n=$(cat {count} 2>/dev/null || echo 0); echo $((n + 1)) > {count}
if [ "$n" -lt {busy} ]; then
  echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
  exit 100
fi
exit {final}
"""


def _run(tmp_path, busy: int, final: int = 0, wait: int = 600):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    calls, count = tmp_path / "calls", tmp_path / "count"
    stubs = {"apt-get": APT.format(calls=calls, count=count, busy=busy, final=final),
             "dpkg-query": "#!/bin/sh\nexit 1\n",  # nothing installed
             "id": "#!/bin/sh\necho 0\n"}  # root
    for name, text in stubs.items():
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", "COOPSIM_APT_RETRY_EVERY": "0",
           "COOPSIM_APT_LOCK_WAIT": str(wait)}
    done = subprocess.run(["bash", str(ROOT / ".ci" / "system-packages")], env=env,
                          capture_output=True, text=True, timeout=120)
    return done, calls.read_text().splitlines() if calls.exists() else []


@pytest.mark.slow
def test_apt_waits_for_a_held_lock_and_says_so(tmp_path):
    done, calls = _run(tmp_path, busy=3)
    assert done.returncode == 0, done.stderr
    assert "waiting up to 600 s" in done.stderr
    assert done.stderr.count("another apt holds its lock; waiting") == 3
    assert all(c.startswith("-o DPkg::Lock::Timeout=600 ") for c in calls)
    assert [c.split()[2] for c in calls] == ["update"] * 4 + ["install"]


@pytest.mark.slow
def test_the_wait_is_bounded_and_other_failures_are_not_retried(tmp_path):
    done, calls = _run(tmp_path, busy=10 ** 6, wait=0)
    assert done.returncode == 100 and "Could not get lock" in done.stderr
    assert len(calls) == 1
    other = tmp_path / "other"
    other.mkdir()
    done, calls = _run(other, busy=0, final=100)
    assert done.returncode == 100 and len(calls) == 1  # a real failure: said once, no retry


def test_ci_run_uses_it():
    text = (ROOT / ".ci" / "run").read_text()
    assert "bash .ci/system-packages" in text and "apt-get" not in text
