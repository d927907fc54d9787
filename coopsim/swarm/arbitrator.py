"""Subsumption: pick the highest-priority active behaviour, and the robot-side controller built
on it (the paper's "robot intelligence").

Command semantics: a robot keeps exactly one command, the last one it was given. Giving a simple
command or a :class:`~coopsim.swarm.behaviours.Sequence` replaces whatever command (simple or
sequence) it had; a running sequence is dropped, not paused. Reflexes and squad behaviours are
not commands: they stay installed.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass
from typing import Callable, Iterable

from .behaviours import (SIMPLE_COMMANDS, Cargo, CommandLayer, Idle, RobotState, Sequence,
                         SequenceLayer)
from .errors import SwarmError
from .follower import Drive


@dataclass(frozen=True)
class Decision:
    """What the arbitrator chose: the behaviour's name (its ``name`` attribute or class name),
    the wheel speeds (m/s) and the behaviour's place in the list (0 = highest priority)."""

    behaviour: str
    left: float
    right: float
    index: int = 0


class Arbitrator:
    """Runs the first active behaviour of a list ordered by priority (highest first).

    Args:
        behaviours: Objects with ``active(state) -> bool`` and ``act(state) -> (left, right)``.
    """

    def __init__(self, behaviours: Iterable) -> None:
        self.behaviours = list(behaviours)

    def decide(self, state: RobotState) -> Decision:
        """The decision for ``state``; lower behaviours are not even asked once one is active.

        Raises:
            SwarmError: no behaviour is active (end the list with an always-active one).
        """
        for index, b in enumerate(self.behaviours):
            if b.active(state):
                left, right = b.act(state)
                return Decision(getattr(b, "name", type(b).__name__), float(left), float(right),
                                index)
        raise SwarmError("no behaviour is active; end the list with an always-active one (Idle)")


class RobotController:
    """A robot's subsumption stack: reflexes, then its one command (simple or sequence), then
    squad behaviours, then :class:`~coopsim.swarm.behaviours.Idle`.

    Args:
        robot: Anything with the robot API (gps, compass, sonar, bumper, motors).
        reflexes: Highest-priority behaviours (e.g. AvoidCollision, RespectBorders).
        squad_behaviours: Lowest-priority behaviours above Idle (e.g. Hold).
        drive: Limits and gains for the command layers.
        clock: Returns the time stamped on each state, s.
    """

    def __init__(self, robot, reflexes: Iterable = (), squad_behaviours: Iterable = (),
                 drive: Drive = Drive(), clock: Callable[[], float] = _time.monotonic) -> None:
        self.robot, self.clock = robot, clock
        self.cargo = Cargo()
        self.commands = CommandLayer(drive, self.cargo)
        self.sequences = SequenceLayer(drive, self.cargo)
        self.reflexes = list(reflexes)
        self.squad_behaviours = list(squad_behaviours)
        self.last: Decision | None = None

    @property
    def arbitrator(self) -> Arbitrator:
        """The current stack, highest priority first."""
        return Arbitrator([*self.reflexes, self.commands, self.sequences,
                           *self.squad_behaviours, Idle()])

    @property
    def command(self):
        """The command the robot keeps (simple or Sequence), or None."""
        return self.commands.command or self.sequences.command

    @property
    def carrying(self) -> str | None:
        """The item a PickUp marked as carried, or None."""
        return self.cargo.item

    @property
    def layer(self) -> str | None:
        """Layer of the last decision: reflex, command, sequence, squad or idle (None before)."""
        if self.last is None:
            return None
        bounds = [("reflex", len(self.reflexes)), ("command", 1), ("sequence", 1),
                  ("squad", len(self.squad_behaviours)), ("idle", 1)]
        i = self.last.index
        for name, size in bounds:
            if i < size:
                return name
            i -= size
        return "idle"

    @property
    def finished(self) -> bool:
        """True when the last decision came from below the command layers (nothing to do)."""
        return self.layer in ("squad", "idle")

    def give(self, command) -> None:
        """Make ``command`` the robot's only command (None leaves it none).

        Raises:
            SwarmError: not a command.
        """
        if command is not None and not isinstance(command, (*SIMPLE_COMMANDS, Sequence)):
            raise SwarmError(f"not a command: {command!r}")
        is_sequence = isinstance(command, Sequence)
        self.commands.set(None if is_sequence else command)
        self.sequences.set(command if is_sequence else None)

    def decide(self, state: RobotState) -> Decision:
        """The stack's decision for ``state`` (no robot I/O)."""
        self.last = self.arbitrator.decide(state)
        return self.last

    def step(self) -> Decision:
        """Read the robot once, decide, and set its wheel speeds."""
        decision = self.decide(RobotState.read(self.robot, self.clock()))
        self.robot.motors.set_speeds(decision.left, decision.right)
        return decision
