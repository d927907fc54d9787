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
        # between its "ready" and its read it still runs: on a loaded machine it may wait for
        # a CPU there, so wait until all three are asleep on their stdin
        for _ in range(6000):
            if not any(group_wait(p.pid)[1] for p in procs):
                break
            time.sleep(0.01)
        else:
            pytest.fail("the three processes never all slept on their stdin")
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
