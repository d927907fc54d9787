"""The stepper's loop for unpaced lockstep steps: a lockstep run, unpaced and
running, takes its steps here, without the loop's round of checks and calls between two steps:
at once when every awaited command is in (nobody attached: a headless ``coopsim run`` nobody
drives), else after the waiter has served requests until they are (a network controller's
lockstep loop). :mod:`coopsim.sim.stepper` mixes it in; its state is the stepper's."""

from __future__ import annotations

import math
import time

LEASE_LOOK = 0.05  # s a wait for commands serves before the leases are looked at (the round's)


class FreeRunning:
    """The unpaced lockstep loop of :class:`~coopsim.sim.stepper.Stepper` (a mixin: every
    attribute it reads is the stepper's)."""

    def _free(self) -> bool:
        """True when the coming steps need none of the round's checks: lockstep, unpaced,
        running, no single steps, and not the first step waiting for its controllers."""
        if self.mode != "lockstep" or self._speed or self.paused or self._single_steps \
                or (self.wait_for and self.snapshot.step == 0):
            return False  # (the first step's wait asks start_hold once a round: not here)
        if not self.pacer.anchored:
            self._reanchor()
        return True

    def _run_free(self, duration, max_steps) -> None:
        """Step while :meth:`_free` holds, each step what the loop's own round would do
        without that round's checks and calls: a step whose commands are all in
        is taken at once (the network looked at every ``poll_every`` s); one that waits for
        a controller's command has the waiter serve until it is in (the leases looked at
        every :data:`LEASE_LOOK` s, as the round's wait does); a failed step is handled as
        ``_guarded_tick`` does (a lockstep step is never lent). Back to the round once a call
        is queued, the run is stopped, paused, paced, done or finished, or the mode changes.
        """
        end_time = math.inf if duration is None else duration - 1e-9
        end_step = math.inf if max_steps is None else max_steps
        stop, slots, clock = self._stop, self.slots, time.perf_counter
        poll, wait, ready = self.waiter.poll, self.waiter.wait, slots.ready

        def go() -> bool:  # what ends a wait: every command in, a call, stop
            return ready() or self._calls or stop.is_set()
        waited = False  # the latest wait ended with every command in (or a call, or stop)
        while True:
            snap = self.snapshot
            if snap.step >= end_step or snap.time >= end_time or self._calls or self.finished \
                    or stop.is_set() or self.paused or self._speed or self.mode != "lockstep" \
                    or self._single_steps:
                return
            # past the checks, a wait that ended well ended with every command in: no thread
            # but this one takes a command out (a detach only makes the step readier)
            if not waited and not ready():  # a controller's command awaited: served meanwhile
                waited = wait(LEASE_LOOK, go)
                if not waited:
                    slots.expire()  # the round's wait runs out the same way
                continue  # the checks again: a request may have queued a call or paused
            if not waited:  # steps that wait for nothing: look at the network now and then
                now = clock()
                if now >= self._poll_at:  # served first, then the checks again
                    self._poll_at = now + self.poll_every
                    poll()
                    continue
            waited = False
            try:
                self.tick()
            except Exception as exc:  # noqa: BLE001 -- the loop must outlive a bad step
                self._failed(exc)
