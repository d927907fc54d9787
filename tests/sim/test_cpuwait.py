"""The CPU-wait figures the lockstep lease subtracts (coopsim.sim.cpuwait), read from the real
kernel: two busy processes pinned to one CPU wait for it while the other runs; a sleeping one
waits for nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from coopsim.sim.cpuwait import group_wait, process_wait, thread_wait

# says it is ready, waits for a line, spins 0.3 s of CPU time, says so, then sleeps until
# its stdin closes
BUSY = """import sys, time
print("ready", flush=True)
sys.stdin.readline()
end = time.process_time() + 0.3
while time.process_time() < end:
    pass
print("done", flush=True)
sys.stdin.read()
"""

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"),
                                reason="no schedstat (not Linux, or built without it)")


def _all_asleep(procs) -> None:
    """Between its "ready" and its read a process still runs: on a loaded machine it may wait
    for a CPU there, so wait until every one is asleep on its stdin."""
    for _ in range(6000):
        if not any(group_wait(p.pid)[1] for p in procs):
            return
        time.sleep(0.01)
    pytest.fail("the processes never all slept on their stdin")


@pytest.mark.slow
def test_busy_processes_sharing_a_cpu_wait_and_a_sleeping_one_does_not():
    cpu = sorted(os.sched_getaffinity(0))[0]
    procs = [subprocess.Popen([sys.executable, "-c", BUSY], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
             for _ in range(3)]
    try:
        for proc in procs:
            os.sched_setaffinity(proc.pid, {cpu})
            assert proc.stdout.readline() == "ready\n"  # started: asleep on its stdin
        _all_asleep(procs)
        before = [group_wait(p.pid)[0] for p in procs]
        for proc in procs[:2]:  # two spin on the one CPU; the third sleeps
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs[:2]:
            assert proc.stdout.readline() == "done\n"
        waited = [process_wait(p.pid) - b for p, b in zip(procs, before)]
    finally:
        for proc in procs:
            proc.stdin.close()
            proc.wait()
            proc.stdout.close()  # else its pipe is closed by the collector, in another test
    # each ran 0.3 s on a CPU the other wanted too: together they waited about as long as
    # one of them ran (more on a loaded machine); the sleeper waited for nothing to speak of
    assert waited[0] + waited[1] > 0.15, waited
    assert waited[2] < 0.1 * (waited[0] + waited[1]), waited
    assert thread_wait() > 0.0 or waited[0] > 0.0


# as BUSY, but on a second thread (its main thread sleeps in join()), which stays (a thread
# that ends takes its figures with it, as ZeroMQ's I/O thread does not)
THREADED = """import sys, threading, time
def work():
    end = time.thread_time() + 0.3
    while time.thread_time() < end:
        pass
    print("done", flush=True)
    sys.stdin.read()
print("ready", flush=True)
sys.stdin.readline()
worker = threading.Thread(target=work)  # started now: the CPU its main thread was pinned to
worker.start()
worker.join()
"""


@pytest.mark.slow
def test_a_controller_group_counts_the_waits_of_every_thread():
    """A controller's work need not run on its main thread (ZeroMQ's I/O thread carries its
    messages): the group's figure counts every thread's waits."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    procs = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
             for code in (BUSY, THREADED)]
    try:
        for proc in procs:
            os.sched_setaffinity(proc.pid, {cpu})  # its threads started later inherit it
            assert proc.stdout.readline() == "ready\n"
        _all_asleep(procs)
        group, main = group_wait(procs[1].pid)[0], process_wait(procs[1].pid)
        for proc in procs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            assert proc.stdout.readline() == "done\n"
        group = group_wait(procs[1].pid)[0] - group
        main = process_wait(procs[1].pid) - main
    finally:
        for proc in procs:
            proc.stdin.close()
            proc.wait()
            proc.stdout.close()
    # its spinning thread shared the one CPU with the other process for 0.3 s of its CPU
    # time; its main thread, asleep in join(), waited for nothing to speak of
    assert group > 0.05 and group > 2 * main, (group, main)
