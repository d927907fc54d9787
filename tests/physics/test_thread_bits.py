"""The thread count changes the speed, never a bit: a 10,000-robot kinematic run (sonar every
step, motors and odometry: sensing, physics and actuators all above the sizes from which their
kernels share the robots among threads, the composed calls' rowwise kinds in chunks of rows)
hashed at 1, 2 and 4 threads, each in a process of its
own (numba's pool is fixed when it loads: ``NUMBA_NUM_THREADS``), gives one hash."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from coopsim.model import compiled

pytestmark = [pytest.mark.skipif(not compiled.COMPILED, reason="the threads are numba's"),
              pytest.mark.slow]  # its tests start processes

RUN = r"""
import hashlib, sys
import numpy as np
from coopsim.model import threads
want = int(sys.argv[1])
assert threads.use(want) == want  # before numba loads: the pool grows to 4 on 2 cores
from coopsim.app.bench import driving, make_caster, swarm_scenario
from coopsim.physics.kinematic import kernels as kinematic_kernels
from coopsim.raycast import jitcast
from coopsim.sim.simulation import Simulation

sim = Simulation(swarm_scenario(10_000, seed=5), engine="kinematic", caster=make_caster("jit"))
stepper = driving(sim, "lockstep", 5)
assert 10_000 >= kinematic_kernels.PARALLEL_MIN and 110_000 >= jitcast.PARALLEL_MIN
digest = hashlib.sha256()
for step in range(12):
    if step == 6:  # a jam: half the robots driven into their neighbours
        for name in list(stepper.snapshot.robots)[::2]:
            stepper.slots.put(name, "motors", (0.6, 0.6), attach=False)
    snap = stepper.tick()
    digest.update(np.ascontiguousarray(sim.world.engine.robot_state()).tobytes())
    for label in sorted(snap.readings):
        digest.update(label.encode() + np.ascontiguousarray(snap.readings[label]).tobytes())
fused = sim.plan().fused  # the composed calls, their rowwise kinds on the threads from 2
print(threads.count(), int(fused.threaded()), digest.hexdigest())
"""


def _run(n: int) -> tuple[int, str]:
    env = dict(os.environ)
    for key in ("NUMBA_NUM_THREADS", "COOPSIM_THREADS"):
        env.pop(key, None)
    done = subprocess.run([sys.executable, "-c", RUN, str(n)], capture_output=True, text=True,
                          timeout=1200, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    count, threaded, digest = done.stdout.split()
    return int(count), threaded == "1", digest


def test_a_10000_robot_run_hashes_alike_at_1_2_and_4_threads():
    runs = {n: _run(n) for n in (1, 2, 4)}
    assert [(count, threaded) for count, threaded, _ in runs.values()] == [
        (1, False), (2, True), (4, True)]
    assert len({digest for *_, digest in runs.values()}) == 1, runs
