"""Time a thread or a process spent waiting for a CPU: the machine's load, in seconds.

Linux counts, for every task, the time it was runnable but not running (waiting on a run
queue: ``/proc/<pid>/task/<tid>/schedstat``, second field, ns). A controller starved by a
loaded machine accumulates it; one that hangs (asleep, blocked on a lock or a socket) or was
stopped (SIGSTOP) does not. The lockstep lease subtracts it from a controller's silence
(:mod:`coopsim.sim.slots`): silence is the controller's own, never time the machine took from
it or from the simulator. Where there is no ``/proc`` (or no schedstat), every figure is 0 and
the lease is the plain active time it was.
"""

from __future__ import annotations

import os


def _sched(path: str) -> tuple[float, float]:
    """(s run on a CPU, s waited for one) from a schedstat file; (0, 0) when it is gone or
    there is none."""
    try:
        with open(path, "rb") as f:
            ran, waited = f.read().split()[:2]
        return int(ran) / 1e9, int(waited) / 1e9
    except (OSError, ValueError):
        return 0.0, 0.0  # gone, or no schedstat: counts nothing


def thread_wait() -> float:
    """s the calling thread has waited for a CPU so far."""
    return _sched("/proc/thread-self/schedstat")[1]


def process_wait(pid: int) -> float:
    """s the main thread of process ``pid`` has waited for a CPU so far."""
    return _sched(f"/proc/{pid}/schedstat")[1]


def group_wait(pgid: int) -> tuple[float, bool, float]:
    """(s every thread of every process of process group ``pgid`` has waited for a CPU,
    whether one of them is runnable now, s they have run on a CPU). A launched controller
    leads its own group (it and what it started); any of its threads may carry its commands
    (ZeroMQ's I/O thread moves its messages). The kernel adds a wait to the figure when the
    wait ends (the task gets a CPU), so a task runnable now may be in the middle of one; a
    thread that ends takes its figures with it."""
    total, runnable, ran = 0.0, False, 0.0
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return 0.0, False, 0.0
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                if int(stat.read().rsplit(b")", 1)[1].split()[2]) != pgid:
                    continue
            tasks = os.listdir(f"/proc/{entry}/task")
        except (OSError, IndexError, ValueError):
            continue
        for task in tasks:
            base = f"/proc/{entry}/task/{task}/"
            try:
                with open(base + "stat", "rb") as stat:
                    state = stat.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue  # ended meanwhile
            runnable = runnable or state == b"R"
            task_ran, task_waited = _sched(base + "schedstat")
            total += task_waited
            ran += task_ran
    return total, runnable, ran
