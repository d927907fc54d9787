"""The stepper's loop for steps that wait for nothing (issue 55): a lockstep run, unpaced,
with every awaited command in -- a headless ``coopsim run`` nobody drives -- takes its steps
here, without the loop's round of checks and calls between two steps (:mod:`coopsim.sim.stepper`
mixes it in; its state is the stepper's)."""

from __future__ import annotations

import math
import time


class FreeRunning:
    """The free run of :class:`~coopsim.sim.stepper.Stepper` (a mixin: every attribute it
    reads is the stepper's)."""

    def _free(self) -> bool:
        """True when the coming steps wait for nothing: lockstep, unpaced, running, and every
        attached controller's command in (nobody attached: a headless run nobody drives)."""
        if self.mode != "lockstep" or self._speed or self.paused or self._single_steps \
                or (self.wait_for and self.snapshot.step == 0) or not self.slots.ready():
            return False  # (the first step's wait asks start_hold once a round: not here)
        if not self.pacer.anchored:
            self._reanchor()
        return True

    def _run_free(self, duration, max_steps) -> None:
        """Step while :meth:`_free` holds, each step what the loop's own round would do (the
        network looked at every ``poll_every`` s, a failed step handled as ``_guarded_tick``
        does; a lockstep step is never lent) without that round's checks and calls, ~2-3 µs
        a step beside a ~55 µs tick (issue 55). Back to the round once a call is queued, the
        run is stopped, paused, paced, done or finished, the mode changes, or a controller is
        awaited."""
        end_time = math.inf if duration is None else duration - 1e-9
        end_step = math.inf if max_steps is None else max_steps
        stop, slots, poll, clock = self._stop, self.slots, self.waiter.poll, time.perf_counter
        while True:
            snap = self.snapshot
            if snap.step >= end_step or snap.time >= end_time or self._calls or self.finished \
                    or stop.is_set() or self.paused or self._speed or self.mode != "lockstep" \
                    or not slots.ready():
                return
            now = clock()
            if now >= self._poll_at:  # served first, then the checks again (a call, an attach)
                self._poll_at = now + self.poll_every
                poll()
                continue
            try:
                self.tick()
            except Exception as exc:  # noqa: BLE001 -- the loop must outlive a bad step
                self._failed(exc)
