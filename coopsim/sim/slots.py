"""Command slots: where the robot hub leaves motion commands and the stepper picks them up.

Each robot has one slot per module with motion commands; the latest command wins. In lockstep mode a robot whose controller has
sent a motor command is *attached*: the stepper does not take step k+1 until every attached robot
has committed a command since step k, or until a controller has been silent longer than its lease
(then it is detached with a warning, so a dead controller stalls the run for at most the lease).
"""

from __future__ import annotations

import collections
import logging
import threading

from .clock import WallClock

log = logging.getLogger(__name__)

DEFAULT_LEASE = 3.0  # s of wall time a lockstep controller may stay silent before it is detached
DETACHED_KEPT = 256  # latest detaches kept in CommandSlots.detached_log


class CommandSlots:
    """Thread-safe latest-command slots plus the lockstep attachment book.

    Args:
        clock: Wall clock used for leases.
        lease: Default lease, s.
    """

    def __init__(self, clock=None, lease: float = DEFAULT_LEASE) -> None:
        self.clock = clock or WallClock()
        self.lease = lease
        self.cond = threading.Condition()
        self._pending: dict[tuple[str, str], tuple[float, ...]] = {}
        self._attached: dict[str, float] = {}  # robot -> wall time of its last command
        self._committed: set[str] = set()
        # the latest detaches, "robot: why" (bounded: a long run whose controllers come and go
        # would otherwise grow it for ever)
        self.detached_log: collections.deque[str] = collections.deque(maxlen=DETACHED_KEPT)
        self.generation = 0  # number of takes so far; a command put now is used by take #gen+1

    def put(self, robot: str, module: str, values: tuple[float, ...],
            attach: bool = True) -> int:
        """Store a module's command values for a robot; with ``attach`` the robot joins lockstep.

        Args:
            robot: Network name.
            module: Module label (``motors``).
            values: The module's stored command (e.g. left, right wheel speeds in m/s).
            attach: Join lockstep (the next step waits for this robot's commands).

        Returns:
            The generation the command was put in: it is used by the step whose take makes
            the generation one larger (the robot hub answers a lockstep reply once the
            stepper's ``done_generation`` has passed it).
        """
        with self.cond:
            self._pending[(robot, module)] = tuple(values)
            if attach:
                self._attached[robot] = self.clock.now()
                self._committed.add(robot)
            elif robot in self._attached:  # alive, in realtime: keeps its lease for lockstep
                self._attached[robot] = self.clock.now()
            self.cond.notify_all()
            return self.generation

    def take(self) -> dict[tuple[str, str], tuple[float, ...]]:
        """Commands phase: return and clear the commands received since the last take."""
        with self.cond:
            pending, self._pending = self._pending, {}
            self._committed.clear()
            self.generation += 1
            return pending

    def ready(self) -> bool:
        """True when every attached robot has committed a command for the coming step."""
        with self.cond:
            return self._committed >= set(self._attached)

    def detach(self, robot: str, why: str = "asked to") -> bool:
        """Remove a robot from lockstep; return whether it was attached."""
        with self.cond:
            found = self._attached.pop(robot, None) is not None
            self._committed.discard(robot)
            if found:
                self.detached_log.append(f"{robot}: {why}")
            self.cond.notify_all()
            return found

    def expire(self) -> list[str]:
        """Detach every attached robot silent for longer than the lease; return their names."""
        now = self.clock.now()
        with self.cond:
            late = [r for r, t in self._attached.items()
                    if now - t > self.lease and r not in self._committed]
        for robot in late:
            log.warning("lockstep: %s sent nothing for %.1f s; detached", robot, self.lease)
            self.detach(robot, f"silent for more than the {self.lease:g} s lease")
        return late

    def waiting(self) -> list[str]:
        """Attached robots that have not committed a command for the coming step."""
        with self.cond:
            return sorted(set(self._attached) - self._committed)

    def attached(self) -> list[str]:
        """Names of the robots attached to lockstep."""
        with self.cond:
            return sorted(self._attached)

    def clear(self) -> None:
        """Forget pending commands and commitments (reset); attachments stay."""
        with self.cond:
            self._pending.clear()
            self._committed.clear()
            self.cond.notify_all()

    def forget(self, robots) -> None:
        """Drop removed robots entirely."""
        with self.cond:
            gone = set(robots)
            self._pending = {k: v for k, v in self._pending.items() if k[0] not in gone}
            for robot in robots:
                self._attached.pop(robot, None)
                self._committed.discard(robot)
            self.cond.notify_all()
