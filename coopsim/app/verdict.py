"""The end of a run, said plainly: a graded run's PASS or FAIL, and what went wrong with its
controllers (a crash and its last output, a silence that got one detached, error replies).

A rule grades a run by starting its end reason with ``PASS:`` or ``FAIL:`` (the exercises'
rules, ``transport``, ``formation``); ``coopsim run`` then prints the banner below and exits 1 on
FAIL. Controller notes are printed for any run. A crash is said first, above the rule's reason:
it is the cause, what the rule saw ("did not reach the target") only its consequence. A game
team whose controllers all crashed forfeited, and the summary's ``ended`` line says so.
"""

from __future__ import annotations

from dataclasses import dataclass

WIDTH = 78


@dataclass(frozen=True)
class Verdict:
    """How a run ended: ``outcome`` is ``PASS``, ``FAIL`` or "" (not graded); ``reason`` the
    rule's words; ``notes`` what went wrong with controllers, one item per problem (lines)."""

    outcome: str
    reason: str
    notes: tuple[tuple[str, ...], ...]
    crashes: tuple[tuple[str, ...], ...] = ()  # controllers that crashed or never started

    @property
    def failed(self) -> bool:
        return self.outcome == "FAIL"

    def text(self) -> str:
        """The banner (graded runs) or the notes alone; "" when there is nothing to say."""
        crashed = [line for note in self.crashes for line in note]
        lines = [line for note in self.notes for line in note]
        if not self.outcome:
            return "\n".join(crashed + lines)
        head = f" {self.outcome} ".center(WIDTH, "=")
        reason = f"then {self.reason}" if crashed else self.reason
        return "\n".join(["", head, *crashed, reason, *lines, "=" * WIDTH])


def verdict(finished: str, live) -> Verdict:
    """The verdict of a finished run.

    Args:
        finished: The stepper's end reason (``rule: PASS: ...``, a duration, or "").
        live: The :class:`~coopsim.app.run.Run` (its controllers, lockstep book and robot
            servers are read).
    """
    _settle(live)
    label, _, rest = finished.partition(": ")
    outcome = next((o for o in ("PASS", "FAIL") if rest.startswith(o + ":")), "")
    reason = f"{label}: {rest[len(outcome) + 1:].strip()}" if outcome else finished
    return Verdict(outcome, reason, tuple(controller_notes(live)), tuple(crash_notes(live)))


LET_GO = ("asked to", "released", "its controller's connection closed")


def _settle(live) -> None:
    """Wait for the controllers that let go of their robot to be seen ending: such a one is
    exiting, and its exit (a crash's code) is part of the verdict and of the ``ended`` line's
    forfeits (a fast run could otherwise end between its letting go and its exit)."""
    if live.controllers is not None:
        live.controllers.settle(let_go(live))


def let_go(live) -> set[str]:
    """Robots whose controller detached from lockstep itself (a detach, a release, its
    connection closed): a controller leaving its loop on an exception does that just before
    it exits, so the run may end before its process is seen to have ended."""
    robots = set()
    for entry in live.stepper.slots.detached_log:
        robot, _, why = entry.partition(": ")
        if why in LET_GO:
            robots.add(robot)
    return robots


def crash_notes(live) -> list[tuple[str, ...]]:
    """The run's controllers that did not start or exited with an error, robot by robot."""
    notes: list[tuple[str, ...]] = []
    ctl = live.controllers
    if ctl is not None:
        for robot, why in ctl.failed.items():
            notes.append((f"controller of {robot} {why}",))
        for robot, code in sorted(ctl.exited().items()):
            if code != 0:
                notes.append(_crash(ctl, robot, code))
    return notes


def _crashed(live) -> set[str]:
    """Robots whose controller did not start or exited with an error."""
    ctl = live.controllers
    if ctl is None:
        return set()
    return set(ctl.failed) | {r for r, code in ctl.exited().items() if code != 0}


def forfeits(live) -> list[str]:
    """Game teams (``[SQUAD_n] team``) that forfeited: every controller process launched for
    their robots crashed or never started (a team played in-process never forfeits)."""
    ctl = live.controllers
    if ctl is None:
        return []
    launched = set(ctl.procs) | set(ctl.failed)
    crashed = _crashed(live)
    teams: dict[str, set[str]] = {}
    for squad in live.scenario.squads:
        if squad.team:
            teams.setdefault(squad.team, set()).update(squad.robots)
    return [team for team, robots in teams.items()
            if robots & launched and robots & launched <= crashed]


def ended_line(finished: str, live) -> str:
    """The summary's ``ended`` value: the end reason, and which team forfeited, if any."""
    _settle(live)
    gone = forfeits(live)
    if not gone:
        return finished
    said = "; ".join(f"team {team} forfeited (its controllers crashed)" for team in gone)
    return f"{finished}; {said}" if finished else said


def controller_notes(live) -> list[tuple[str, ...]]:
    """What else went wrong with the run's controllers (crashes are :func:`crash_notes`)."""
    notes: list[tuple[str, ...]] = []
    ctl = live.controllers
    for entry in live.stepper.slots.detached_log:
        robot, _, why = entry.partition(": ")
        if why.startswith("silent"):
            notes.append((f"controller of {robot} went {why} (it hung or stopped sending "
                          f"commands): detached, the run went on without it",))
    ports = live.network.hub.ports if live.network is not None else {}
    if ctl is not None:
        ended = ctl.exited()
        for robot in ctl.procs:
            port = ports.get(robot)
            if robot not in ended and port is not None and port.requests == 0:
                notes.append((f"controller of {robot} never sent {robot} a request (it hung "
                              f"before it started, or it drives another robot)",))
    for robot, port in sorted(ports.items()):
        if port.errors:
            counts = ", ".join(f"error {code} x{n}" for code, n in sorted(port.errors.items()))
            notes.append((f"{robot} answered {sum(port.errors.values())} request(s) with an "
                          f"error ({counts}); the last: {port.last_error}",))
    return notes


def _crash(ctl, robot: str, code: int) -> tuple[str, ...]:
    after = ctl.ended_after(robot)
    when = f" within {after:.1f} s" if after is not None else ""
    tail = ctl.tail(robot)
    head = f"controller of {robot} exited with code {code}{when}" + (
        "; its last output:" if tail else " (it printed nothing)")
    return (head, *(f"  | {line}" for line in tail))
