"""Command slots: where the robot hub leaves motion commands and the stepper picks them up.

Each robot has one slot per module with motion commands; the latest command wins. In lockstep
mode a robot whose controller has sent a motor command is *attached*: the stepper does not take
step k+1 until every attached robot has committed a command since step k, or until a controller
has been silent longer than its lease (then it is detached with a warning, so a hung controller
stalls the run for at most the lease; a controller whose connection closes is detached at once).

**Ownership.** A connection that commands a robot's motion owns it (explicitly by a claim, or by
its first motion command); motion commands from anyone else are refused (:class:`OwnedError`)
until the owner releases it, detaches, disconnects, or stays silent longer than the lease.
Owners are opaque to this layer: a hashable key (who) and a link (which connection, so a closed
connection drops what it owned) given by the network.

**Teleoperation.** A person's teleop connection takes a robot with a *teleop claim*
(:meth:`CommandSlots.claim` with ``teleop``): it owns the robot while it drives, and the owner
it displaced is remembered. Meanwhile the displaced owner's motion commands, parameter writes,
actions and claims are refused with error 13 (``teleoperated``) saying so; when the teleop
connection releases the robot, closes, or its lease lapses, the robot is the displaced owner's
again, without a claim (it attaches again with its next motion command).

**Patience.** A controller that is alive but slow (one command every 2.5 s under a 3 s lease)
would hold every other controller's lockstep run at its pace for ever. So the book counts, per
controller, how long each step waited for it alone once every other attached controller had
sent its command (*held* time, in active time), over its last :data:`PATIENCE_WINDOW` steps
shared with others. When that total passes its *patience*, max(the lease,
:data:`PATIENCE_FACTOR` x :data:`PATIENCE_WINDOW` x the median time those steps waited for the
others), it is detached, loses its owner, the run's log says why, and its connection's next
motion command is refused (not allowed, error 6, saying why) until it claims the robot again
(command 4). A controller alone in lockstep is never held against itself: the run is as fast
as it is. The step in progress counts net of CPU waits, as the lease does (below): a controller
starved by a loaded machine is not benched before its lease would detach it.

**Silence is measured on the run's active time**, not on the wall clock: time advances by the
wall time between two looks of the stepper, but by at most :data:`ACTIVE_GAP` per look, so a
simulator that was stopped (SIGSTOP, a debugger, a suspended laptop) or starved by the machine
does not count that time against its controllers. **Nor does a loaded machine**: once a lockstep
step has waited :data:`STARVE_LOOK` for a controller, the time its controller (the
:attr:`CommandSlots.cpu_wait` hook: every thread of a launched controller's process group) and
the stepper's own thread spent waiting for a CPU from then on (:mod:`coopsim.sim.cpuwait`) is
taken off its silence: a controller starved for seconds is not late, one that hangs (asleep,
blocked, stopped) is detached after the lease as before, so lockstep results do not depend on
the machine.

**The dead man** (:mod:`coopsim.sim.deadman`): a teleop claim, and a claim with a deadline,
arm it; the holder's motion then stops when it falls silent past the deadline, its connection
closes, or the lockstep lease detaches it (the lease alone only frees the robot's ownership).
"""

from __future__ import annotations

import collections
import logging
import threading
from dataclasses import dataclass
from typing import Hashable

from ..model.commands import TELEOPERATED
from ..model.errors import NotAllowedError, OwnedError, ProtocolError
from .clock import WallClock
from .condition import WatchedCondition
from .cpuwait import thread_wait
from .deadman import DEAD_MAN, DeadMen

log = logging.getLogger(__name__)

DEFAULT_LEASE = 3.0  # s of active time a controller may stay silent before it is detached
LEASE_MAX = 60.0  # s: the longest lease /sim set_lease accepts
ACTIVE_GAP = 0.25  # s: the most one gap between two looks of the stepper adds to active time
#: s of active time a lockstep step waits for a controller before its silence is measured net
#: of CPU waits (module docstring): a /proc read then, none for a step that waits less
STARVE_LOOK = 0.1
DETACHED_KEPT = 256  # latest detaches kept in CommandSlots.detached_log
PATIENCE_WINDOW = 20  # steps shared with other controllers over which held time is summed
PATIENCE_FACTOR = 10.0  # patience: this many times the others' median wait per window step


@dataclass(frozen=True)
class Owner:
    """Who owns a robot.

    Attributes:
        key: Identity (the same key from two connections is the same owner).
        label: How it is named in messages (a Curve key's name, a peer address).
        link: The connection it last spoke through (closing it releases the robot).
    """

    key: Hashable
    label: str
    link: Hashable = None


class CommandSlots:
    """Thread-safe latest-command slots, the lockstep attachment book and robot ownership.

    Args:
        clock: Wall clock (its ``now`` feeds the active time that leases are measured in).
        lease: Default lease, s.
        dead_man: The default dead-man deadline, s (:mod:`coopsim.sim.deadman`).
    """

    def __init__(self, clock=None, lease: float = DEFAULT_LEASE,
                 dead_man: float = DEAD_MAN) -> None:
        self.clock = clock or WallClock()
        self.lease = lease
        #: ``cpu_wait(robot) -> (s, runnable, ran)``: how long the robot's controller has waited
        #: for a CPU so far, whether it is runnable now (in the middle of a wait the figure does
        #: not show yet), and how long it has run on one, s (cumulative); (0, False, 0) for a
        #: controller the run did not launch. Set by the run.
        self.cpu_wait = None
        # robot -> (CPU waits of it and of the stepper thread, its CPU time) when its silence
        # began to be measured net of CPU waits (STARVE_LOOK into a step's wait)
        self._starve_base: dict[str, tuple[float, float]] = {}
        # The condition's lock, taken as itself (notify_all holds under it as under the
        # condition): a Condition's ``with`` is a Python call around the lock's, and a
        # lockstep step takes it about ten times
        self.lock = threading.RLock()
        self.cond = WatchedCondition(self.lock)
        self._pending: dict[tuple[str, str], tuple[float, ...]] = {}
        self._attached: dict[str, float] = {}  # robot -> active time since when it is awaited
        self._committed: set[str] = set()
        self._commits: dict[str, float] = {}  # robot -> active time of its commit this step
        self._took = 0.0  # active time of the latest take
        # robot -> its last PATIENCE_WINDOW shared steps: (held alone, the others' wait), s
        self._held: dict[str, collections.deque] = {}
        # robot -> (owner key, its link, why) of a controller detached for holding the run
        self._benched: dict[str, tuple[Hashable, Hashable, str]] = {}
        self._owners: dict[str, tuple[Owner, float]] = {}  # robot -> (owner, last active)
        # robot -> (the owner a teleop claim displaced, the teleop owner's key)
        self._displaced: dict[str, tuple[Owner, Hashable]] = {}
        self._seen = self.clock.now()
        self._active = 0.0  # s of active time so far (see the module docstring)
        self._steady = 0.0  # s of active time in gaps no longer than ACTIVE_GAP (patience)
        # the latest detaches, "robot: why" (bounded: a long run whose controllers come and go
        # would otherwise grow it for ever)
        self.detached_log: collections.deque[str] = collections.deque(maxlen=DETACHED_KEPT)
        self.dead = DeadMen(dead_man, note=self.detached_log.append)  # guarded by cond
        self.generation = 0  # number of takes so far; a command put now is used by take #gen+1

    def _now(self) -> float:
        """Active time, s (call under the lock): gaps longer than ACTIVE_GAP count as that.
        Steady time (:attr:`_steady`, what held time is measured in) counts them as nothing:
        a step is held against a controller only for time the simulator kept looking."""
        wall = self.clock.now()
        gap = max(0.0, wall - self._seen)
        self._active += min(gap, ACTIVE_GAP)
        self._steady += gap if gap <= ACTIVE_GAP else 0.0
        self._seen = wall
        return self._active

    def active_time(self) -> float:
        """Active time now, s (leases and dead men are measured in it)."""
        with self.lock:
            return self._now()

    def put(self, robot: str, module: str, values: tuple[float, ...],
            attach: bool = True, owner: Owner | None = None, safe=None) -> int:
        """Store a module's command values for a robot; with ``attach`` the robot joins lockstep.

        Args:
            robot: Network name.
            module: Module label (``motors``).
            values: The module's stored command (e.g. left, right wheel speeds in m/s).
            attach: Join lockstep (the next step waits for this robot's commands).
            owner: The connection commanding it: it owns the robot from now on (None: an
                in-process caller, which neither owns nor is refused).
            safe: The module's fallback command should the owner's dead man expire (only
                needed when :meth:`dead_man_armed`).

        Returns:
            The generation the command was put in: it is used by the step whose take makes
            the generation one larger (the robot hub answers a lockstep reply once the
            stepper's ``done_generation`` has passed it).

        Raises:
            OwnedError: another owner holds the robot.
        """
        with self.lock:
            now = self._now()
            if owner is not None:
                self._take_ownership(robot, owner, now, force=False)
                if attach and self._benched.get(robot, (None,))[0] == owner.key:
                    raise NotAllowedError(self._benched[robot][2])
                self.dead.held(robot, owner.key, module, safe, now)
            self._pending[(robot, module)] = tuple(values)
            if attach:
                self._attached[robot] = now
                if robot not in self._committed:
                    self._commits[robot] = self._steady
                self._committed.add(robot)
            elif robot in self._attached:  # alive, in realtime: keeps its lease for lockstep
                self._attached[robot] = now
            if self.cond.waiting:  # the hub serves on the waiting thread itself: nobody
                self.cond.notify_all()  # to wake, no Python-level notify
            return self.generation

    # -- ownership --------------------------------------------------------------------------------

    def claim(self, robot: str, owner: Owner, force: bool = False, teleop: bool = False,
              dead_man: float | None = None) -> str:
        """Make ``owner`` the robot's owner; return the label of the owner it took it from
        ("" when it was free or already its own).

        Args:
            teleop: A person's teleop claim: forced, and the owner it displaces gets the robot
                back when the teleop connection gives it up (see the module docstring); it
                arms the dead man (``dead_man`` s, the run's default when None).
            dead_man: Arm the dead man with this deadline, s (0 disarms; None: as it was).

        Raises:
            OwnedError: another owner holds it and ``force`` is not set.
            ProtocolError: error 13, ``owner`` was displaced by a teleop claim.
        """
        with self.lock:
            now = self._now()
            if teleop:
                self._note_displaced(robot, owner, now)
            taken = self._take_ownership(robot, owner, now, force or teleop)
            if self._benched.get(robot, (None,))[0] == owner.key:
                del self._benched[robot]  # claimed again, knowingly: it may attach again
            if teleop or dead_man is not None:
                self.dead.arm(robot, owner.key, dead_man)
            self.dead.spoke(robot, owner.key, now)
            return taken

    def dead_man_armed(self, robot: str, owner: Owner | None) -> bool:
        """True when ``owner`` armed a dead man on ``robot`` (its motion needs safe rows)."""
        with self.lock:
            return owner is not None and self.dead.armed(robot, owner.key)

    def _note_displaced(self, robot: str, owner: Owner, now: float) -> None:
        """Remember whom a teleop claim displaces (under the lock): the robot's owner, unless
        it is the teleop itself, its lease lapsed, or an earlier teleop displaced someone (that
        one gets it back)."""
        held = self._owners.get(robot)
        if robot in self._displaced:
            self._displaced[robot] = (self._displaced[robot][0], owner.key)
        elif held is not None and held[0].key != owner.key and (
                robot in self._attached or now - held[1] <= self.lease):
            self._displaced[robot] = (held[0], owner.key)

    def _teleoperated(self, robot: str, owner: Owner | None, what: str) -> None:
        """Raise error 13 when ``owner`` is the one a teleop claim displaced (under the lock)."""
        displaced = self._displaced.get(robot)
        held = self._owners.get(robot)
        if owner is None or displaced is None or displaced[0].key != owner.key or held is None:
            return
        raise ProtocolError(TELEOPERATED, (
            f"{robot} is driven by teleop ({held[0].label}): {what} from {owner.label} are "
            "refused while a person drives it; it is yours again, without a claim, when the "
            "teleop releases it, disconnects or stays silent for the "
            f"{self.lease:g} s lease"))

    def _give_back(self, robot: str, now: float) -> bool:
        """The teleop gave the robot up: the owner it displaced has it again (under the lock).
        Return whether there was one."""
        displaced = self._displaced.pop(robot, None)
        if displaced is None:
            return False
        self._owners[robot] = (displaced[0], now)
        self._log_detach(robot, f"teleop gave it back to {displaced[0].label}")
        return True

    def _take_ownership(self, robot: str, owner: Owner, now: float, force: bool) -> str:
        held = self._owners.get(robot)
        if (held is not None and robot in self._displaced and robot not in self._attached
                and now - held[1] > self.lease):  # the teleop fell silent: give it back
            self._give_back(robot, now)
            held = self._owners.get(robot)
        self._teleoperated(robot, owner, "motion commands and claims")
        if held is None or held[0].key == owner.key:
            self._owners[robot] = (owner, now)
            return ""
        current, since = held
        if robot not in self._attached and now - since > self.lease:  # (attached: expire())
            self._log_detach(robot, f"lease of {current.label} lapsed (silent for more than "
                                    f"{self.lease:g} s); now owned by {owner.label}")
        elif not force:
            raise OwnedError(
                f"{robot} is owned by {current.label}: motion commands from other connections "
                f"are refused until it releases it (command 5), detaches, disconnects or stays "
                f"silent for the {self.lease:g} s lease; claim with params [1] forces it",
                current.label)
        if robot in self._attached and current.key != owner.key:
            self._attached.pop(robot, None)  # the old owner's commitment is not the new one's
            self._committed.discard(robot)
        self.dead.owned_by(robot, owner.key)  # the old owner's hold ends: the new one commands
        self._owners[robot] = (owner, now)
        return current.label

    def check_writer(self, robot: str, owner: Owner | None,
                     what: str = "parameter writes") -> None:
        """Refuse a parameter write or an action (gripper grab, radio send, tool move_to ...) to
        a robot another connection owns (its owner, an in-process caller with ``owner`` None,
        and anyone once the owner's lease lapsed may). Neither takes the robot.

        Args:
            robot: Network name.
            owner: The connection asking (None: an in-process caller).
            what: What is refused, for the sentence ("parameter writes", "actions (...)").

        Raises:
            OwnedError: another owner holds the robot.
        """
        with self.lock:
            held = self._owners.get(robot)
            self._teleoperated(robot, owner, what)
            if owner is None or held is None or held[0].key == owner.key:
                return
            if robot not in self._attached and self._now() - held[1] > self.lease:
                return  # lapsed, as for a motion command; writing does not take the robot
            raise OwnedError(
                f"{robot} is owned by {held[0].label}: {what} from other "
                f"connections are refused as motion commands are, until it releases it "
                f"(command 5), detaches, disconnects or stays silent for the {self.lease:g} s "
                f"lease; claim with params [1] forces it", held[0].label)

    def release(self, robot: str, key: Hashable | None = None) -> bool:
        """Give the robot up (``key`` None: whoever owns it, for operators); it also leaves
        lockstep. Return whether it was owned (by ``key``).

        Raises:
            OwnedError: ``key`` is given and another owner holds the robot.
        """
        with self.lock:
            held = self._owners.get(robot)
            if held is not None and key is not None and held[0].key != key:
                raise OwnedError(f"{robot} is owned by {held[0].label}, not by this connection; "
                                 "only its owner releases it (claim with params [1] forces it)",
                                 held[0].label)
            self._owners.pop(robot, None)
            self.dead.forget(robot, key)  # given up knowingly: the holder left it as it chose
            if key is None:  # an operator's release (/sim detach) lifts a patience detach too
                self._benched.pop(robot, None)
                self._displaced.pop(robot, None)
            elif held is not None:
                self._give_back(robot, self._now())  # a teleop's release: the displaced's again
        self.detach(robot, "released")
        return held is not None

    def owner(self, robot: str) -> str:
        """The label of the robot's owner, or "" when it is free."""
        with self.lock:
            held = self._owners.get(robot)
            return held[0].label if held else ""

    def owners(self) -> dict[str, str]:
        """Robot -> its owner's label, for every owned robot."""
        with self.lock:
            return {robot: held[0].label for robot, held in sorted(self._owners.items())}

    def disconnected(self, link: Hashable) -> list[str]:
        """A connection closed: every robot it owned is free and leaves lockstep; return them."""
        with self.lock:
            self._displaced = {r: d for r, d in self._displaced.items() if d[0].link != link}
            gone = [r for r, (owner, _) in self._owners.items() if owner.link == link]
            for robot in gone:
                key = self._owners.pop(robot)[0].key
                self._pending.update(self.dead.cut(robot, "its holder's connection closed"))
                self.dead.forget(robot, key)
                self._give_back(robot, self._now())  # a teleop's connection closed
            self._benched = {r: b for r, b in self._benched.items() if b[1] != link}
        for robot in gone:
            if self.detach(robot, "its controller's connection closed"):
                log.info("lockstep: %s: its controller's connection closed; detached", robot)
        return gone

    # -- lockstep ---------------------------------------------------------------------------------

    def take(self, sim_time: float | None = None) -> dict[tuple[str, str], tuple[float, ...]]:
        """Commands phase: return and clear the commands received since the last take (with
        the safe commands of dead men that expired: ``sim_time`` is the step's start, s)."""
        with self.lock:
            now = self._now()
            if sim_time is not None:
                self._pending.update(self.dead.step(sim_time, now, self._pending))
            self._count_held()
            for robot in self._attached:  # its silence starts when its reply is due: now
                self._attached[robot] = now
            if self._starve_base:
                self._starve_base.clear()
            pending, self._pending = self._pending, {}
            self._committed.clear()
            self._commits.clear()
            self._took = self._steady
            self.generation += 1
            return pending

    def ready(self) -> bool:
        """True when every attached robot has committed a command for the coming step."""
        if not self._attached:  # nobody awaited (a run nobody drives): no lock, as a dict's
            return True  # truth is read whole; the loop asks twice a step
        with self.lock:  # issuperset takes the dict's keys as they are: no set a call
            return self._committed.issuperset(self._attached)

    def detach(self, robot: str, why: str = "asked to") -> bool:
        """Remove a robot from lockstep; return whether it was attached."""
        with self.lock:
            found = self._attached.pop(robot, None) is not None
            self._committed.discard(robot)
            if found:
                self._log_detach(robot, why)
            self.cond.notify_all()
            return found

    def _log_detach(self, robot: str, why: str) -> None:
        self.detached_log.append(f"{robot}: {why}")

    def _count_held(self) -> None:
        """The step goes: add it to the window of every controller it shared with others
        (under the lock)."""
        if len(self._commits) < 2:  # the usual step (one controller or none): no dict
            return
        commits = {r: t for r, t in self._commits.items() if r in self._attached}
        if len(commits) < 2:
            return
        for robot, t in commits.items():
            others = max(c for r, c in commits.items() if r != robot)
            window = self._held.setdefault(robot, collections.deque(maxlen=PATIENCE_WINDOW))
            window.append((max(0.0, t - others), max(0.0, others - self._took)))

    def _patience(self, robot: str, now: float) -> tuple[float, float]:
        """(held, patience), s of steady time (under the lock): how long the robot's last
        shared steps waited for it alone (the current step's wait included, ``now`` being the
        steady time), and how long they may."""
        window = self._held.get(robot, ())
        held = sum(h for h, _ in window)
        waits = sorted(w for _, w in window)
        median = waits[len(waits) // 2] if waits else 0.0
        patience = max(self.lease, PATIENCE_FACTOR * PATIENCE_WINDOW * median)
        others = [t for r, t in self._commits.items() if r != robot and r in self._attached]
        if (robot in self._attached and robot not in self._committed and others
                and len(others) >= len(self._attached) - 1):
            live = now - max(others)  # every other controller is in: the step waits for it
            if held + live > patience:  # net of the CPU waits, as its lease counts them: a
                live = max(0.0, min(live, self._silence(robot, live, now)))  # starved one
            held += live  # would be benched before its lease, loaded, and never come back
        return held, patience

    def _impatient(self, now: float, late: list[str]) -> list[tuple[str, str]]:
        """Attached robots with a network owner whose held time passed their patience, and
        why (under the lock; those in ``late`` are detached for their lease already); they are
        benched and lose their owner."""
        out = []
        for robot in list(self._attached):
            held, patience = self._patience(robot, now)
            owner = self._owners.get(robot)
            if held <= patience or owner is None or robot in late:
                continue
            why = (f"{robot} was detached from lockstep: its controller made the run's steps "
                   f"wait for it alone {held:.1f} s in its last {PATIENCE_WINDOW} steps "
                   f"(patience {patience:.1f} s: the lease, or {PATIENCE_FACTOR:g} x "
                   f"{PATIENCE_WINDOW} x the other controllers' median wait); its lockstep "
                   f"commands are refused until it claims the robot again (command 4)")
            self._benched[robot] = (owner[0].key, owner[0].link, why)
            self._owners.pop(robot, None)
            self._held.pop(robot, None)
            out.append((robot, why))
        return out

    def expire(self) -> list[str]:
        """Detach every attached robot the coming step has waited for longer than the lease
        (in active time, less the CPU waits since :data:`STARVE_LOOK` into the wait: the
        module docstring); it also loses its owner. Return their names. Called on the
        stepper's thread, whose own CPU waits count too."""
        with self.lock:
            now = self._now()
            due = [r for r, t in self._attached.items() if now - t >= STARVE_LOOK
                   and r not in self._committed and r not in self._starve_base]
        if due:  # the /proc reads outside the lock (the hub's threads take it every command)
            bases = {r: self._starved(r)[::2] for r in due}
            with self.lock:
                for robot, base in bases.items():
                    self._starve_base.setdefault(robot, base)
        with self.lock:
            now = self._now()
            late = [r for r, t in self._attached.items()
                    if now - t > self.lease and r not in self._committed
                    and self._silence(r, now - t, now) > self.lease]
            for robot in late:
                self._owners.pop(robot, None)
                self._pending.update(self.dead.cut(robot, "the lease detached it"))
                self.dead.forget(robot)
            slow = self._impatient(self._steady, late)
        for robot, why in slow:
            log.warning("lockstep: %s", why)
            self.detach(robot, why)
        for robot in late:
            log.warning("lockstep: %s: its controller sent no command for %.1f s while the "
                        "run was waiting for it (the lease); detached", robot, self.lease)
            self.detach(robot, f"silent for more than the {self.lease:g} s lease")
        return late + [robot for robot, _ in slow]

    def _starved(self, robot: str) -> tuple[float, bool, float]:
        """(s the robot's controller and the calling (stepper) thread have waited for a CPU,
        whether the controller is runnable now, s it has run)."""
        hook = self.cpu_wait
        waited, runnable, ran = hook(robot) if hook is not None else (0.0, False, 0.0)
        return thread_wait() + waited, runnable, ran

    def _silence(self, robot: str, plain: float, now: float) -> float:
        """``robot``'s silence, s of active time: ``plain`` less the CPU waits since its base
        (under the lock)."""
        base = self._starve_base.get(robot)
        if base is None:
            return plain
        waited, runnable, ran = self._starved(robot)
        if runnable and ran - base[1] < self.lease:  # waiting for a CPU right now (the figure
            return 0.0  # counts a wait when it ends), not spinning for a lease: not silent
        return plain - max(0.0, waited - base[0])

    def waiting(self) -> list[str]:
        """Attached robots that have not committed a command for the coming step."""
        with self.lock:
            return sorted(set(self._attached) - self._committed)

    def attached(self) -> list[str]:
        """Names of the robots attached to lockstep."""
        with self.lock:
            return sorted(self._attached)

    def clear(self) -> None:
        """Forget pending commands and commitments (reset); attachments and owners stay."""
        with self.lock:
            self._pending.clear()
            self.dead.clear_holds()
            self._committed.clear()
            self._commits.clear()
            self.cond.notify_all()

    def forget(self, robots) -> None:
        """Drop removed robots entirely (their owners too)."""
        with self.lock:
            gone = set(robots)
            self._pending = {k: v for k, v in self._pending.items() if k[0] not in gone}
            for robot in robots:
                self._attached.pop(robot, None)
                self._committed.discard(robot)
                self._owners.pop(robot, None)
                self._held.pop(robot, None)
                self._benched.pop(robot, None)
                self._displaced.pop(robot, None)
                self.dead.forget(robot)
            self.cond.notify_all()
