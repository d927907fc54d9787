"""The simulator's process as a launched controller sees it: ``$COOPSIM_SIM_PID`` (set for the
controllers a run launches) and whether that process is gone, so a controller does not outlive
the run it was started by."""

from __future__ import annotations

import os

SIM_PID_ENV = "COOPSIM_SIM_PID"


def _process_gone(pid: int) -> bool:
    """True when process ``pid`` has ended (or is a zombie nobody reaped yet)."""
    if os.getppid() == pid:
        return False  # it is still our parent
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return False
