"""The dead man: motion held on someone's behalf stops when that someone falls silent.

A robot's module keeps its last stored command (a wheel speed holds until the next command), so
a teleop terminal killed while a key was held would drive its robot on for ever: the lease only
frees the robot's *ownership*. Here a holder that *armed* a dead man (a teleop claim always
does, any connection may with claim data ``[T]``: docs/protocol.md, *Ownership*) has its
robot's motion expire when it falls silent: each module it commanded gets its *safe* command
(the module's ``stop``: wheels and velocities to 0, an arm's joints hold their angles; a
multirotor levels at its hover thrust, :func:`safe_row`) and the hold ends.

**Silence** is measured twice, and a hold expires only when both passed its deadline: in
simulated time (steps taken since the step that last carried the holder's command: a paused,
stopped or starved simulator counts nothing against it, and in lockstep an attached holder that
commands every step is never silent, so the deadline never makes a lockstep run depend on the
machine) and in the slots' active time (wall time between two looks of the stepper, capped per
look: a run faster than real time does not stop a holder that sends at a human's pace). A hold
whose connection closes, or which the lockstep lease detaches, expires at once.

This layer keeps the book; :class:`~coopsim.sim.slots.CommandSlots` calls it under its lock.
"""

from __future__ import annotations

import collections
import logging
from dataclasses import dataclass, field
from typing import Hashable

DEAD_MAN = 0.5  # s: the default deadline (a teleop claim's, a steer's; claim data [T] sets it)
DEAD_MAN_MAX = 60.0  # s: the longest deadline a claim may ask for (the lease's bound)
KEPT = 256  # latest expiries kept in DeadMen.log

log = logging.getLogger(__name__)


@dataclass
class Hold:
    """One robot's motion held by one owner.

    Attributes:
        key: The owner's key (:class:`~coopsim.sim.slots.Owner`).
        deadline: s of silence (simulated and active time both) before the motion expires.
        sim: Simulated time (s) of the latest step that carried its command.
        active: Active time (s) of its latest command.
        safe: Module label -> the stored command the module falls back to.
    """

    key: Hashable
    deadline: float
    sim: float = 0.0
    active: float = 0.0
    safe: dict = field(default_factory=dict)


class DeadMen:
    """The dead-man book of a run's command slots (not thread-safe: the slots' lock guards it).

    Args:
        deadline: The run's default deadline, s.
        note: Called with each expiry's line, ``"<robot>: stopped: <why>"`` (the slots'
            detach log, which the run's verdict prints).
    """

    def __init__(self, deadline: float = DEAD_MAN, note=None) -> None:
        self.deadline, self.note = deadline, note
        # robot -> owner key -> deadline: kept per owner, so a teleop that a second teleop
        # displaced has its dead man again when the robot is given back to it
        self._armed: dict[str, dict[Hashable, float]] = {}
        self._holds: dict[str, Hold] = {}
        self.sim_time = 0.0  # of the latest step taken
        self.expired = 0  # holds that expired (silence, a closed connection, the lease)
        self.log: collections.deque[str] = collections.deque(maxlen=KEPT)

    def arm(self, robot: str, key: Hashable, deadline: float | None) -> None:
        """``key``'s motion of ``robot`` stops after ``deadline`` s of silence (None: the
        run's default; 0: disarm)."""
        deadline = self.deadline if deadline is None else deadline
        keys = self._armed.setdefault(robot, {})
        if deadline > 0:
            keys[key] = deadline
            hold = self._holds.get(robot)
            if hold is not None and hold.key == key:
                hold.deadline = deadline
        else:
            self.forget(robot, key)

    def armed(self, robot: str, key: Hashable) -> bool:
        """True when ``key`` armed a dead man on ``robot`` (its commands need a safe row)."""
        return key in self._armed.get(robot, ())

    def deadline_of(self, robot: str, key: Hashable) -> float:
        """The deadline ``key`` armed on ``robot`` (s), 0 when none."""
        return self._armed.get(robot, {}).get(key, 0.0)

    def owned_by(self, robot: str, key: Hashable) -> None:
        """``robot`` is ``key``'s now: another owner's hold ends (without a stop: the new owner
        commands it); its dead man stays armed should the robot come back to it."""
        hold = self._holds.get(robot)
        if hold is not None and hold.key != key:
            del self._holds[robot]

    def held(self, robot: str, key: Hashable, module: str, safe, active: float) -> None:
        """``key`` commanded ``module`` of ``robot`` at active time ``active``; ``safe`` is the
        module's fallback (None: it has none)."""
        deadline = self.deadline_of(robot, key)
        if not deadline:
            return
        hold = self._holds.get(robot)
        if hold is None or hold.key != key:
            if safe is None:
                return  # nothing it could fall back to: nothing held
            hold = self._holds[robot] = Hold(key, deadline, self.sim_time, active)
        hold.sim, hold.active = self.sim_time, active
        if safe is not None:
            hold.safe[module] = tuple(safe)

    def spoke(self, robot: str, key: Hashable, active: float) -> None:
        """``key`` claimed ``robot`` again: alive (its hold, if any, restarts its silence)."""
        hold = self._holds.get(robot)
        if hold is not None and hold.key == key:
            hold.sim, hold.active = self.sim_time, active

    def step(self, sim_time: float, active: float, pending) -> dict:
        """A step is taken at ``sim_time``: holds whose modules got a command since the last
        step (``pending``, (robot, module) -> values) are alive; the others silent for longer
        than their deadline expire. Return their safe commands, (robot, module) -> values.
        Without holds (the usual step) this costs one test."""
        self.sim_time = sim_time
        if not self._holds:
            return {}
        out = {}
        for robot in list(self._holds):
            hold = self._holds[robot]
            if any((robot, module) in pending for module in hold.safe):
                hold.sim = sim_time
                continue
            if sim_time - hold.sim > hold.deadline and active - hold.active > hold.deadline:
                out.update(self.cut(robot, f"its holder was silent for more than "
                                           f"{hold.deadline:g} s (the dead man)"))
        return out

    def cut(self, robot: str, why: str) -> dict:
        """Expire ``robot``'s hold now (its holder's connection closed, the lease detached it);
        return its safe commands, (robot, module) -> values ({} when none was held)."""
        hold = self._holds.pop(robot, None)
        if hold is None:
            return {}
        self.expired += 1
        line = f"{robot}: stopped: {why}"
        self.log.append(line)
        log.info("%s", line)
        if self.note is not None:
            self.note(line)
        return {(robot, module): values for module, values in hold.safe.items()}

    def forget(self, robot: str, key: Hashable | None = None) -> None:
        """Drop ``key``'s dead man and hold of ``robot`` without a stop (released, closed);
        ``key`` None: everyone's (removed, an operator's release)."""
        keys = self._armed.get(robot, {})
        if key is None:
            keys.clear()
        else:
            keys.pop(key, None)
        if not keys:
            self._armed.pop(robot, None)
        hold = self._holds.get(robot)
        if hold is not None and (key is None or hold.key == key):
            del self._holds[robot]

    def clear_holds(self) -> None:
        """A reset: the held commands are gone with the world (armed dead men stay)."""
        self._holds.clear()

    def holders(self) -> list[str]:
        """Robots whose motion is held under a dead man now."""
        return sorted(self._holds)


def safe_row(module, params, info):
    """The stored command ``module`` (a Module class) falls back to when its dead man expires,
    or None when it has none: its ``dead_man_row(params, info)`` when it defines one (a
    multirotor's hover), else its motion command named ``stop``."""
    own = getattr(module, "dead_man_row", None)
    if own is not None:
        return own(params, info)
    stop = next((c for c in getattr(module, "commands", ())
                 if c.name == "stop" and c.kind == "motion"), None)
    if stop is None:
        return None
    return module.command_row(stop, (), params, info)
