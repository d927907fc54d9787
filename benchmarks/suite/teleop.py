"""Teleoperation: how many steps after a key (or stick) change the robot's
motion command holds it. A live run in real time (dt 10 ms), served by its own threads; the
teleop session of ``coopsim teleop`` and the viewer (coopsim.client.teleop) drives robot1;
each change flips the intent between full forward and full back at a random moment of the
step, and a reader's ``motors read`` (the wheel speeds commanded in the step it reports) finds
the first step that used it. Goal: within one step (the step after the change)."""

import random
import statistics
import time

from .common import Case, count, unit

CHANGES = 40  # key changes per measurement (one under the smoke size)


def _latencies(nameserver: str, changes: int) -> tuple[list[int], list[float]]:
    """Steps from each change's arrival at the server (the step its motion reply names: the
    last the server had completed) to the first step whose commanded wheel speeds show it, and
    the ms from the change (``set``) to that reply. A step counted from what a reader saw
    before the change would add the reader's own lag of up to a step (measured: 1-2 steps on
    a quiet machine for that reason alone, the same on the base)."""
    from coopsim.client import Client
    from coopsim.client.teleop import Teleop
    from coopsim.model.teleop import Intent

    steps, sends, rng = [], [], random.Random(7)
    with Client(nameserver) as client, Client(nameserver) as watcher:
        driver = Teleop(client, "robot1")  # what TeleopThread's thread calls on a change
        driver.take()
        reader = watcher.robot("robot1")
        try:
            for k in range(changes):
                sign = 1.0 if k % 2 == 0 else -1.0
                time.sleep(rng.uniform(0.0, 0.01))  # anywhere in the step
                t0 = time.perf_counter()
                driver.apply(Intent(forward=sign))
                sends.append(1000.0 * (time.perf_counter() - t0))
                taken = driver.robot.last.step  # the step the server took it after
                while True:
                    reading = reader.motors.read()
                    if reading[0] * sign > 0.4:
                        steps.append(reading.step - taken)
                        break
        finally:
            driver.close()
    return steps, sends


class KeyToCommand(Case):
    """A key change -> the robot's motion command, in steps (real time, dt 10 ms)."""

    timeout = 120.0

    def setup(self):
        from coopsim.app.run import Run, RunOptions
        from coopsim.model.specs import (FloorSpec, RobotSpec, ScenarioSpec, Settings,
                                         WorldSpec)

        spec = ScenarioSpec(WorldSpec(FloorSpec(10.0, 10.0)),
                            robots=(RobotSpec("single", "robot1", (0.0, 0.0, 0.0), 0.0),),
                            settings=Settings(dt=0.01, mode="realtime", seed=1), name="teleop")
        with Run(spec, RunOptions(port=0, controllers=False)) as run:  # in this process: its
            run.start()  # own threads serve it, as coopsim run's do
            self.steps, self.sends = _latencies(run.network.endpoint, count(CHANGES))

    @unit("steps")
    def track_steps_p95(self):
        ordered = sorted(self.steps)
        return float(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))])

    @unit("steps")
    def track_steps_mean(self):
        return float(statistics.fmean(self.steps))

    @unit("steps")
    def track_steps_max(self):
        return float(max(self.steps))

    @unit("ms")
    def track_send_ms_p95(self):
        """The change to the server's reply (the teleop thread's send and its round trip)."""
        ordered = sorted(self.sends)
        return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
