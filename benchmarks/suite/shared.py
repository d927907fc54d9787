"""Shared control: the feedback force served to a haptic client while 10 quadrotors
fly in real time under the ``shared`` driver (docs/in-the-loop.md; goal >= 200 Hz)."""

import statistics
import time

from .common import SMOKE, Case, LiveRun, count, unit

SCENARIO = """[WORLD]
file {root}/examples/shared-control/pillars.world
%s
[SQUAD_1]
name flock
robots %s
formation block
spacing 0.5

[SETTINGS]
engine aerial
dt 0.002
mode realtime
seed 1
"""


def _scenario(n: int) -> str:
    robots = "".join(f"[ROBOT_{k + 1}]\ntype crazyflie\nname cf{k + 1}\n"
                     f"position {-4.0 + 0.5 * (k // 4):.1f} {-0.75 + 0.5 * (k % 4):.2f} 0\n"
                     "driver shared height 1\n" for k in range(n))
    return SCENARIO % (robots, " ".join(f"cf{k + 1}" for k in range(n)))


def _serve(squads, seconds: float) -> tuple[list[float], float, float]:
    """Read the feedback as fast as a client can for ``seconds`` (steering forward every tenth
    of a second, as a hand would): (wall times of the fresh readings, s; their sim time span,
    s; the wall span, s)."""
    fresh, last, first, steered = [], -1, None, 0.0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds or not fresh:
        now = time.perf_counter()
        if now - steered > 0.1:
            squads.steer("flock", 0.3, 0.0)
            steered = now
        fb = squads.feedback("flock")
        if fb.step != last:
            fresh.append(now)
            last = fb.step
            first = fb.time if first is None else first
            end = fb.time
    return fresh, end - first, fresh[-1] - fresh[0]


class Feedback(Case):
    """10 Crazyflies (aerial engine, 500 Hz, real time, the ``shared`` driver, one squad in a
    block among the example's pillars) and one client reading ``/squads`` feedback back to back:
    fresh readings per second (a new step's each; goal >= 200 Hz), the p95 gap between two,
    and the run's real-time factor meanwhile."""

    def setup(self):
        from coopsim.client import Client, RemoteError
        from coopsim.client.squads import Squads

        with LiveRun(0, text=_scenario(count(10, 2))) as run, Client(run.nameserver) as client:
            squads = Squads(client)
            while True:  # the driver's first step posts the first feedback
                try:
                    squads.feedback("flock")
                    break
                except RemoteError:
                    time.sleep(0.01)
            _serve(squads, 0.05 if SMOKE else 2.0)  # take-off and warm-up
            fresh, sim_span, wall_span = _serve(squads, count(10, 1) * 0.5)
        gaps = [b - a for a, b in zip(fresh, fresh[1:])] or [wall_span]
        self.hz = (len(fresh) - 1) / wall_span if wall_span > 0 else 0.0
        self.gap = (statistics.quantiles(gaps, n=20)[18] if len(gaps) > 1 else gaps[0]) * 1e3
        self.rtf = sim_span / wall_span if wall_span > 0 else 0.0

    @unit("Hz")
    def track_feedback_hz(self):
        return self.hz

    @unit("ms")
    def track_gap_p95_ms(self):
        return self.gap

    @unit("x real time")
    def track_x_real_time(self):
        return self.rtf
