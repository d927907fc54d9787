"""The stepper: the one thread that owns the physics, and the loop that steps it.

Each step runs :meth:`Stepper.tick`, whose phases always come in the same order: commands
(rules' before-step, network commands, in-process drivers), actuators, physics, sensors, rules;
then the snapshot is published to the hooks (state stream, recorder). Around it,
:meth:`Stepper.run` decides *when* to tick:

* ``realtime``: each step waits for its deadline in wall time (:class:`~coopsim.sim.pacing.Pacer`
  keeps the schedule and counts missed deadlines). speed 0 = as fast as possible.
* ``lockstep``: a step happens once every attached controller has committed its command (see
  :mod:`coopsim.sim.slots`); with none attached it runs as fast as it can. dt is fixed. A speed
  factor, when set, is honoured here too (a step also waits for its deadline); by default
  lockstep goes as fast as its controllers do. The first step can wait for a number of
  controllers to attach (``wait_for``, at most ``START_WAIT`` s).

Other threads never touch the World: they queue work with :meth:`Stepper.call`, which runs between
two steps on the stepper thread, and read :attr:`Stepper.snapshot` (the call queue, ``run_now``,
the robot hub's hand-over and the lock order: :mod:`coopsim.sim.ownership`). When a started run
reaches its duration or a rule ends it, the loop stays up as *finished*: it steps no more but
still carries out queued calls, so no server thread ever touches the World; after
:meth:`Stepper.stop` a call is refused.
"""

from __future__ import annotations

import gc
import logging
import math
import threading
import time
from typing import Callable

from ..model.errors import NotAllowedError, SimulationError
from ..model.snapshot import Snapshot
from ..model.specs import MODES
from .clock import WallClock
from .condition import WatchedCondition
from .freerun import FreeRunning
from .ownership import WorldOwner
from .pacing import Pacer, Stats
from .simulation import Simulation
from .slots import CommandSlots

Hook = Callable[[Snapshot], None]
log = logging.getLogger(__name__)

START_WAIT = 10.0  # s the first lockstep step waits for wait_for controllers to attach, at most
STALL = 0.5  # s without a step in lockstep before the stepper reports whom it waits for
_SERVE_MARGIN = 0.0015  # s before a deadline a serving waiter hands over to the precise wait
#: s of wall time between two looks at the network between steps that do not wait (a lockstep
#: run nobody drives, speed 0): a look every step cost a poll system call a step, more than a
#: small world's tick; a request waits this long at most. Waits always serve.
POLL_EVERY = 0.0005


class Stepper(WorldOwner, FreeRunning):
    """Steps a Simulation in real time or lockstep, on the thread that owns its World.

    Args:
        sim: The simulation to step (only this object's thread touches it once running).
        clock: Wall clock (``now``, ``sleep_until``).
        mode: ``realtime`` or ``lockstep``.
        speed: Real-time factor target (1 = wall clock, 2 = twice as fast, 0 = unpaced);
            None = the mode's own (1 in realtime, 0 in lockstep).
        wait_for: Controllers the first lockstep step waits for (see :data:`START_WAIT`).
        slots: Command slots shared with the robot hub.
    """

    poll_every = POLL_EVERY  # s between two looks at the network when no step waits

    def __init__(self, sim: Simulation, clock=None, mode: str = "realtime",
                 speed: float | None = None, slots: CommandSlots | None = None,
                 wait_for: int = 0) -> None:
        self.sim = sim
        self.clock = clock or WallClock()
        self.slots = slots or CommandSlots(self.clock)
        super().__init__(self.slots.cond)  # the call queue and the locks (sim/ownership.py)
        self.pacer = Pacer(self.clock)  # the real-time schedule (sim/pacing.py)
        # Wakes threads waiting for a step. Apart from the loop's: in lockstep every motor
        # command would otherwise wake every thread waiting for its own step.
        self._stepped_lock = threading.RLock()  # taken bare at a publish: no Python frames
        self.stepped = WatchedCondition(self._stepped_lock)
        # Wakes wait_finished: the run finished or the loop ended. Not every step: a watcher
        # woken at every step of a fast lockstep run cost a thread switch a step.
        self._ended = threading.Condition()
        self.hooks: list[Hook] = []
        self.idle_hooks: list[Hook] = []  # called about every 0.1 s while paused
        self.snapshot = sim.snapshot
        self._resets = 0  # a reset builds a new World, whose layout_version may repeat
        self.layout_key = (0, sim.snapshot.layout_version)  # of self.snapshot; see view()
        self.error = ""  # why the run paused itself, if it did
        #: A failed step ends the run (``finished`` reads ``step N: FAIL: ...``) instead of
        #: pausing it: for runs nobody can resume (headless, batch).
        self.end_on_error = False
        self.finished = ""  # why the run ended (duration reached, a rule), if it did
        #: (duration s, step count) of a lingering run: the step that reaches one finishes it,
        #: as a rule's does (said with that step's snapshot, before its replies go out)
        self._limits: tuple[float | None, int | None] = (None, None)
        self._ends_at = (math.inf, math.inf)  # the same as (time, step) bounds: read a step
        self.done_generation = 0
        self.paused = False
        self._single_steps = 0  # steps queued by step() and not yet taken
        #: Bumped when a pause, a resume or a reset drops steps queued by step() (wait_steps)
        self.step_cuts = 0
        self._stop = threading.Event()
        self.wait_for = wait_for
        self.start_wait = START_WAIT  # s the first step waits for them, at most
        #: Asked while the first step waits: True when the awaited controllers were busy
        #: (used CPU time) since the last ask; the wait then starts again from now.
        self.start_hold: Callable[[], bool] | None = None
        self._last_step_wall = 0.0  # when the latest step was taken (stall reports)
        self.tick_cpu = 0.0  # s of CPU time the loop's latest step took (sim/waiter.py: lend)
        self._started_wall: float | None = None  # when the loop (re)started, for wait_for
        self._poll_at = 0.0  # perf_counter() from which the loop looks at the network again
        self._speed: float | None = None
        self.set_mode(mode)
        if speed is not None:
            self.set_speed(speed)

    # -- one step -----------------------------------------------------------------------------

    def tick(self) -> Snapshot:
        """Take one step: commands -> actuators -> physics -> sensors -> rules, then publish."""
        self._last_step_wall = self.clock.now()
        self.sim.command(self.slots.take(self.sim.time))
        self.sim.actuate()
        self.sim.physics()
        self.sim.sense()
        snapshot = self.sim.apply_rules()
        ending = self.sim.ended  # a property: read once
        if not ending and (snapshot.time >= self._ends_at[0] or snapshot.step >= self._ends_at[1]):
            ending = limit_reached(snapshot, *self._limits)
        ending = ending if ending and not self.finished else ""
        self._publish(snapshot, ending)
        try:
            self.sim.external.published()  # pose received -> in this snapshot
            for hook in self.hooks:  # (a recording's frame) before wait_finished returns
                hook(snapshot)
        finally:
            if ending:  # wait_finished, waits for steps, replies no step will use
                self._wake_all()
        return snapshot

    # -- control (any thread; call, run_now: sim/ownership.py) ------------------------------

    @property
    def missed(self) -> int:
        """Realtime steps taken after their deadline since the start or the last reset."""
        return self.pacer.missed

    def set_mode(self, mode: str) -> None:
        """Switch between ``realtime`` and ``lockstep`` (takes effect at the next step)."""
        if mode not in MODES:
            raise SimulationError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self._reanchor()

    def set_speed(self, speed: float | None) -> None:
        """Set the real-time speed factor (0 = as fast as possible; None = the mode's own)."""
        if speed is not None and not 0.0 <= speed <= 1000.0:
            raise SimulationError(f"speed must be between 0 and 1000, not {speed}")
        self._speed = None if speed is None else float(speed)
        self._reanchor()

    @property
    def speed(self) -> float:
        """The speed factor in force: the one set, else 1 in realtime and 0 in lockstep."""
        if self._speed is not None:
            return self._speed
        return 1.0 if self.mode == "realtime" else 0.0

    def pause(self) -> None:
        """Stop stepping until resumed; steps queued by :meth:`step` and not yet taken are
        dropped (carried out between two steps, a pause stops a long step within one step).
        Single steps asked afterwards still work."""
        self.paused = True
        self._cut_steps()

    def resume(self) -> None:
        """Continue stepping after a pause (steps queued by :meth:`step` are dropped).

        Raises:
            NotAllowedError: the run has finished (reset starts it over).
        """
        self._check_not_finished()
        self.paused = False
        self._cut_steps()
        self._reanchor()

    def step(self, n: int = 1) -> int:
        """While paused, take ``n`` steps at once (no pacing, no lockstep wait), after those
        still queued; return the step the run will stand at when they are taken (on the
        stepper thread, where no step is under way: :meth:`wait_steps`). A pause, a resume or
        a reset drops the steps not yet taken."""
        if n < 1:
            raise SimulationError(f"step count must be at least 1, not {n}")
        self._check_not_finished()
        self.paused = True
        self._single_steps += n
        return self.snapshot.step + self._single_steps

    def _cut_steps(self) -> None:
        """Drop the steps queued by :meth:`step` and not yet taken; wake :meth:`wait_steps`."""
        if self._single_steps:
            self._single_steps = 0
            with self.stepped:
                self.step_cuts += 1
                self.stepped.notify_all()

    def wait_steps(self, target: int, cuts: int, timeout: float) -> Snapshot:
        """Block until the run stands at step ``target`` (what :meth:`step` returned), the
        steps were dropped (``step_cuts`` is no longer ``cuts``, read with that return: a
        pause, a resume or a reset), the loop ends, or ``timeout`` s; return the latest
        snapshot (any thread)."""
        with self.stepped:
            self.stepped.wait_for(lambda: self.snapshot.step >= target
                                  or self.step_cuts != cuts or self._stop.is_set(), timeout)
            return self.snapshot

    def reset(self, scenario=None, world=None) -> Snapshot:
        """Restore the scenario (or load a new one, its world built beforehand when given:
        :meth:`Simulation.reset`) and its seed; stays paused if paused (steps queued by
        :meth:`step` are dropped)."""
        self.sim.reset(scenario, world)
        self._resets += 1
        self._cut_steps()
        self.slots.clear()
        self.pacer.restart()
        self.error = ""
        self.finished = ""
        self._started_wall = self._last_step_wall = self.clock.now()
        self._reanchor()
        return self._publish(self.sim.snapshot)

    def set_dt(self, dt: float) -> None:
        """Change the physics step from the next step on (the time so far is kept)."""
        self.sim.set_dt(dt)
        self._reanchor()

    def _check_not_finished(self) -> None:
        if self.finished:
            raise NotAllowedError(f"the run has finished ({self.finished}); reset starts it "
                                  "over")

    def refresh(self) -> Snapshot:
        """Publish a snapshot of the world as it is now, without a step (after an insertion,
        update or removal, or a reading zeroed): readers see the change before the next step."""
        self.sim.relayout()
        return self._publish(self.sim.snapshot)

    def wait_step(self, after: int, timeout: float) -> Snapshot | None:
        """Block until a snapshot with step > ``after`` exists; None on timeout."""
        with self.stepped:
            ok = self.stepped.wait_for(lambda: self.snapshot.step > after or self._stop.is_set(),
                                       timeout)
            return self.snapshot if ok and self.snapshot.step > after else None

    def view(self) -> tuple[Snapshot, tuple[int, int]]:
        """The latest snapshot and the key of its layout, taken together (any thread). Two
        snapshots with equal keys have the same layout: the same bodies, names, shapes and
        colours (only poses and readings differ), so a layout document built once serves both.
        """
        with self.stepped:
            return self.snapshot, self.layout_key

    def _publish(self, snapshot: Snapshot, ending: str = "") -> Snapshot:
        """Make ``snapshot`` the latest; ``ending``: why the run ended at it (a rule), said in
        ``finished`` only once the snapshot is there (a thread that sees the run finished
        reads the snapshot that finished it, not the step before)."""
        with self._stepped_lock:  # self.stepped's own lock (its __enter__ is Python's)
            self.snapshot = snapshot
            if ending:
                self.finished = ending
            self.layout_key = (self._resets, snapshot.layout_version)
            self.done_generation = self.slots.generation
            if self.stepped.waiting:  # nobody waits (a run nobody watches):
                self.stepped.notify_all()  # no Python-level notify a step
        self.waiter.stepped()
        return snapshot

    def stats(self) -> Stats:
        """Current figures of the run."""
        wall = self.pacer.wall()
        snap = self.snapshot
        rtf = snap.time / wall if wall > 0 else 0.0
        waiting, stalled = self._waiting()
        late, recent = self.pacer.recent.figures(self.clock.now())
        return Stats(snap.step, snap.time, wall, rtf, self.missed, self.mode, self.speed,
                     self.paused, tuple(self.slots.attached()), self.finished, waiting, stalled,
                     late, recent)

    def _waiting(self) -> tuple[tuple[str, ...], float]:
        """Whom a lockstep step has been waiting for, and how long, s."""
        if self.mode != "lockstep" or self.paused or self.finished or not self.running:
            return (), 0.0
        stalled = self.clock.now() - self._last_step_wall
        if self._holding_start():
            missing = self.wait_for - len(self.slots.attached())
            return (f"{missing} more controller(s) to attach",), stalled
        if stalled < STALL:
            return (), stalled
        return tuple(self.slots.waiting()), stalled

    # -- the loop -----------------------------------------------------------------------------

    def start(self, duration: float | None = None, max_steps: int | None = None,
              linger: bool = True) -> None:
        """Run the loop in a new thread (see :meth:`run`); by default it lingers when finished,
        serving calls until :meth:`stop`."""
        self._stop.clear()
        self._looping = True  # calls queue from now on, even before the thread is scheduled
        self._thread = threading.Thread(target=self.run, args=(duration, max_steps, linger),
                                        name="coopsim-stepper", daemon=True)
        self._thread.start()

    def wait_finished(self, timeout: float | None = None) -> bool:
        """Block until the run has finished (or the loop ended); return whether it has."""
        with self._ended:
            return self._ended.wait_for(lambda: bool(self.finished) or not self.running,
                                        timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the loop to end and wait for its thread."""
        self._stop.set()
        self._wake_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            try:
                self._thread.join(timeout)
            except RuntimeError:  # Ctrl-C or SIGTERM landed inside start(): the thread had not
                pass  # said it started; it sees the stop flag as soon as it runs

    def join(self, timeout: float | None = None) -> None:
        """Wait for the loop thread to end by itself (duration or step limit reached)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self, duration: float | None = None, max_steps: int | None = None,
            linger: bool = False) -> None:
        """Step until stopped, or until ``duration`` s of sim time or ``max_steps`` steps or a
        rule ends the run. With ``linger`` the loop then stays up, finished, carrying out
        queued calls (a reset starts it over) until :meth:`stop`."""
        if threading.current_thread() is not self._thread:
            self._stop.clear()  # a direct call after an earlier stop() runs again
        self._looping, self._closed = True, False
        self._limits = (duration, max_steps) if linger else (None, None)
        self._ends_at = (math.inf if self._limits[0] is None else self._limits[0] - 1e-9,
                         math.inf if self._limits[1] is None else self._limits[1])
        # The world built so far lives as long as the run: out of the cyclic collector's way.
        # A full collection over 1,000 robots' bodies took 50 ms, over two 50 Hz periods;
        # frozen, 4 ms (docs/performance.md).
        gc.freeze()
        self._started_wall = self._last_step_wall = self.clock.now()
        self._reanchor()
        self._take_world()  # the waiter (the hub's serving), then the World: sim/ownership.py
        try:
            while not self._stop.is_set():
                self._serve_between()
                self._run_calls()
                if self._done(duration, max_steps):
                    if not linger:
                        break
                    self._finish(duration, max_steps)
                elif self._free():
                    self._run_free(duration, max_steps)
                elif self._may_step():
                    self._guarded_tick()
        finally:
            self._pause_wall()
            with self.cond:
                self._looping = False
                self._closed = threading.current_thread() is self._thread
            self._run_calls()
            self._stop.set()
            self.world_lock.release()
            self._wake_all()
            self.waiter.release()

    def _serve_between(self) -> None:
        """Serve what waits on the network between two steps, at most every
        :data:`POLL_EVERY` s (a loop that waits serves while it waits anyway: a lockstep step
        still waiting for a command goes to its wait, which serves, without this look: one
        poll of the sockets a step fewer)."""
        if self.mode == "lockstep" and not self.paused and not self.slots.ready():
            return
        now = time.perf_counter()
        if now >= self._poll_at:
            self._poll_at = now + self.poll_every
            self.waiter.poll()

    def _finish(self, duration, max_steps) -> None:
        """Finished: say why once, then idle serving calls (reset clears it)."""
        if not self.finished:  # reached before this run() (the step that did finishes it)
            self.finished = limit_reached(self.snapshot, duration, max_steps)
            self._wake_all()
        self._pause_wall()
        self._idle(lambda: not self.finished, 0.1)

    def _wake_all(self) -> None:
        for cond in (self.cond, self.stepped, self._ended):
            with cond:
                cond.notify_all()
        self.waiter.wake()

    def _guarded_tick(self) -> None:
        """Tick; a failing step pauses the run (or ends it, with ``end_on_error``) with the
        error logged in one line and kept in ``error``, instead of ending the thread while the
        servers wait for steps that never come. While it ticks, the waiter may have another
        thread answer reads from the latest snapshot (:meth:`~coopsim.sim.waiter.Waiter.lend`:
        only the stepper writes the World; other requests wait for the step's end)."""
        lent = self.waiter.lend(self.tick_cpu)  # reads answered meanwhile (sim/waiter.py)
        # CPU time (a loaded machine's waits do not count), for lend: real time only (a
        # lockstep step is never lent), so lockstep saves two clock reads a step
        timed = self.mode == "realtime"
        start = time.thread_time() if timed else 0.0
        try:
            self.tick()
        except Exception as exc:  # noqa: BLE001 -- the loop must outlive a bad step
            self._failed(exc)
        finally:
            if lent:
                self.waiter.take_back()
            self.tick_cpu = time.thread_time() - start if timed else 0.0

    def _failed(self, exc: Exception) -> None:
        """A step raised ``exc``: pause the run (or end it, with ``end_on_error``), the error
        logged in one line and kept in ``error``."""
        step = self.snapshot.step + 1
        self.error = f"step {step} failed: {type(exc).__name__}: {exc}"
        log.debug("step %d failed", step, exc_info=True)  # the traceback, for debugging
        if self.end_on_error:
            log.error("%s; the run ends", self.error)
            self.finished = f"step {step}: FAIL: {type(exc).__name__}: {exc}"
            self._wake_all()
        else:
            log.error("%s; the run is paused", self.error)
            self.paused = True

    def _done(self, duration, max_steps) -> bool:
        return bool(self.finished or limit_reached(self.snapshot, duration, max_steps))

    def _may_step(self) -> bool:
        """Wait as the mode asks; True when a step should be taken now."""
        if self._single_steps:
            self._single_steps -= 1
            return True
        if self.paused:
            self._pause_wall()
            self._idle(lambda: not self.paused or self._single_steps > 0, 0.1)
            for hook in self.idle_hooks:
                hook(self.snapshot)
            return False
        if not self.pacer.anchored:
            self._reanchor()
        if self.mode == "lockstep":
            return self._lockstep_ready()
        return self._pace()

    def _lockstep_ready(self) -> bool:
        if self._holding_start():
            self._idle(lambda: len(self.slots.attached()) >= self.wait_for, 0.05)
            return False
        # ready already (nobody attached, or every command in): no wait, whose set-up and
        # second look cost about a tenth of a small world's tick
        ready = self.slots.ready() and not self._calls and not self._stop.is_set()
        if not ready and not self._idle(self.slots.ready, 0.05):
            self.slots.expire()
            return False
        return self.speed == 0.0 or self._pace(count_missed=False)

    @property
    def starting(self) -> bool:
        """True while the first lockstep step waits for ``wait_for`` controllers to attach."""
        return self.mode == "lockstep" and self._holding_start()

    def hold_start(self) -> None:
        """Restart the first lockstep step's wait for ``wait_for`` controllers (any thread):
        the run sees them busy starting (their own activity), so the wait is not yet over."""
        self._started_wall = self.clock.now()

    def start_wait_left(self) -> float | None:
        """s the first lockstep step still waits for ``wait_for`` controllers before it starts
        without them (restarted while the launched ones are busy starting), or None when it
        does not wait."""
        if not self.starting or self._started_wall is None:
            return None
        return max(0.0, self.start_wait - (self.clock.now() - self._started_wall))

    def _holding_start(self) -> bool:
        """True while the first lockstep step waits for ``wait_for`` controllers to attach."""
        if not self.wait_for or self.snapshot.step > 0 or self._started_wall is None:
            return False
        if self.start_hold is not None and self.start_hold():
            self.hold_start()
        waited = self.clock.now() - self._started_wall
        if waited > self.start_wait:
            return False
        return len(self.slots.attached()) < self.wait_for

    def _pace(self, count_missed: bool = True) -> bool:
        if self.speed == 0.0:
            return True
        return self.pacer.pace(self.sim.dt / self.speed, self.snapshot.time, self._sleep_until,
                               count_missed)

    def _idle(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``predicate`` holds, a call arrives or stop; return the predicate."""
        self.waiter.wait(timeout, lambda: predicate() or self._calls or self._stop.is_set())
        with self.slots.lock:  # the condition's lock as itself: no Python call around it
            return predicate() and not self._calls and not self._stop.is_set()

    def _sleep_until(self, deadline: float) -> None:
        """Wait for a pacing deadline; a serving waiter serves requests until just before it,
        then the clock's precise wait takes the rest."""
        if not self.waiter.sleeps:
            left = deadline - self.clock.now() - _SERVE_MARGIN
            if left > 0:
                self.waiter.wait(left, lambda: False)
        self.clock.sleep_until(deadline)

    def _reanchor(self) -> None:
        self.pacer.reanchor(counting=not self.paused and self.running)

    def _pause_wall(self) -> None:
        self.pacer.pause_wall()


def limit_reached(snap: Snapshot, duration: float | None, max_steps: int | None) -> str:
    """Why a run of at most ``duration`` s and ``max_steps`` steps ends at ``snap``; "" while
    it goes on."""
    if duration is not None and snap.time >= duration - 1e-9:
        return f"duration {duration:g} s reached"
    if max_steps is not None and snap.step >= max_steps:
        return f"{snap.step} steps taken"
    return ""
