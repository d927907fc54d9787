"""The controllers' watchdog: stops a run's launched controllers when the run dies, however.

:class:`~coopsim.app.controllers.Controllers` starts one per run, in its own session, with a pipe
on its stdin, and writes ``+PGID`` for every controller process group it starts and ``-PGID`` for
every one it stops itself. The watchdog only reads. When the pipe ends -- the run closed it, or
the run died, even by SIGKILL, which makes the kernel close it -- every group still listed gets
SIGTERM, then SIGKILL after :data:`GRACE` s, so no controller outlives its simulator.

Usage (by Controllers only): ``python -m coopsim.app.watchdog SIMULATOR_PID``.
"""

from __future__ import annotations

import os
import signal
import sys
import time

GRACE = 2.0  # s between SIGTERM and SIGKILL


def _signal(group: int, sig: int) -> bool:
    """Send ``sig`` to process group ``group``; False when the group is gone."""
    try:
        os.killpg(group, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # not ours (a reused id): leave it alone
        return False


def stop_groups(groups: set[int], grace: float = GRACE) -> None:
    """SIGTERM every group, then SIGKILL those still there after ``grace`` s."""
    alive = {g for g in groups if _signal(g, signal.SIGTERM)}
    deadline = time.monotonic() + grace
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = {g for g in alive if _signal(g, 0)}
    for group in alive:
        _signal(group, signal.SIGKILL)


def main(argv: list[str]) -> int:
    """Follow the pipe on stdin until it ends, then stop what is left."""
    simulator = argv[1] if len(argv) > 1 else "?"
    groups: set[int] = set()
    for line in sys.stdin:
        line = line.strip()
        if line[:1] in ("+", "-") and line[1:].isdigit():
            (groups.add if line[0] == "+" else groups.discard)(int(line[1:]))
    if groups:
        sys.stderr.write(f"coopsim: the simulator (pid {simulator}) is gone; stopping its "
                         f"{len(groups)} controller(s)\n")
        stop_groups(groups)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the end of the pipe stops it
    sys.exit(main(sys.argv))
