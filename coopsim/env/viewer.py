"""``render_mode="human"``: the run served on the network (name server on a free port, the
state stream, ``/sim``) and ``coopsim view`` started on it as a child process; steps are paced
to at most real time so a person can follow them. The environment still steps on the caller's
thread; the servers' calls run under the stepper's world lock, as when a stepper was never
started."""

from __future__ import annotations

import subprocess
import time


class HumanView:
    """The viewer on an environment's stepper.

    Args:
        stepper: The environment's (never started) Stepper. fps: The viewer's frame rate.
    """

    def __init__(self, stepper, fps: float = 30.0) -> None:
        from ..net.network import Network
        from ..viewer import start_viewer

        self.stepper = stepper
        self.network = Network(stepper, port=0, publish_rate=fps).start()
        self.process = start_viewer(self.network.endpoint, fps)
        self._last = time.perf_counter()

    def show(self) -> None:
        """Wait until the last step's dt of wall time has passed since the previous call."""
        wait = self.stepper.sim.dt - (time.perf_counter() - self._last)
        if wait > 0:
            time.sleep(wait)
        self._last = time.perf_counter()

    def close(self) -> None:
        """Stop the viewer and the servers."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5.0)
            except subprocess.TimeoutExpired:  # one busy or starved past its grace is killed,
                self.process.kill()
                self.process.wait()  # and reaped: close() leaves no process behind
        self.network.close()
