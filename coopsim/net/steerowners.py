"""Who steers a squad (``/squads`` command 4 ``steer``): one connection at a time, as a robot's
motion is one connection's (docs/protocol.md section 9, *Steer ownership*).

The first connection that steers a squad owns its steering until it releases it (``/squads``
command 6 ``release``), its connection closes, or it stays silent for the run's lease (the
robots' lease, ``/sim`` set_lease); a steer from any other connection meanwhile is refused with
error 11 naming the owner. Silence is measured as the robots' leases are: in simulated time and
in the command slots' active time both (:mod:`coopsim.sim.slots`), so a paused, stopped or
starved simulator takes no squad from anyone.

**A person's steer** (``steer`` params ``[2]``: ``coopsim teleop --group``), as a robot's teleop
claim: it takes the squad from the connection steering it, which is remembered. Meanwhile the
displaced connection's steers and releases are refused with error 13 (``teleoperated``) saying
so; when the person releases the squad, disconnects or stays silent for the lease, the squad is
the displaced connection's again, without a steer. A person who takes it from a person is
undone in turn: each lets go to the one it displaced.

A steer itself holds for the ``shared`` driver's ``hold`` (0.5 s of simulated time by default)
and the squad then hovers: that is the steer's dead man, whatever its connection does.
"""

from __future__ import annotations

import threading
from typing import Callable, Hashable, NamedTuple

import zmq
from zmq.utils.monitor import parse_monitor_message

from ..model.commands import TELEOPERATED
from ..model.errors import OwnedError, ProtocolError
from ..sim.slots import Owner


class Held(NamedTuple):
    """A squad's steering: its owner, when it last steered (simulated and active time, s),
    whether it is a person's, and the holder it displaced (a person's steer), if any."""

    owner: Owner
    sim: float
    active: float
    person: bool = False
    displaced: "Held | None" = None


class SteerOwners:
    """The owners of the squads' steering (thread-safe).

    Args:
        slots: The run's CommandSlots (its ``lease``, and its active time).
        sim_time: Returns the run's simulated time, s.
    """

    def __init__(self, slots, sim_time: Callable[[], float]) -> None:
        self.slots, self.sim_time = slots, sim_time
        self._lock = threading.Lock()
        self._owners: dict[str, Held] = {}  # squad -> who steers it

    def take(self, squad: str, owner: Owner, person: bool = False) -> str:
        """``owner`` steers ``squad`` now (its own again, or free, or its owner's lease lapsed;
        a person's steer takes it from its owner). Return the label of the connection a
        person's steer displaced at this steer ("" when none).

        Raises:
            ProtocolError: error 13, ``owner`` was displaced by a person who steers it now.
            OwnedError: another connection steers it (error 11, naming it).
        """
        sim, active = self.sim_time(), self.slots.active_time()
        lease = self.slots.lease
        with self._lock:
            held = self._current(squad, sim, active, lease)
            self._refuse_displaced(squad, held, owner, "steers")
            if held is not None and held.owner.key == owner.key:
                self._owners[squad] = held._replace(owner=owner, sim=sim, active=active,
                                                    person=held.person or person)
                return ""
            if held is not None and not person:
                raise OwnedError(
                    f"squad {squad} is steered by {held.owner.label}: steers from other "
                    f"connections are refused until it releases it (/squads command 6), "
                    f"disconnects or stays silent for the {lease:g} s lease", held.owner.label)
            self._owners[squad] = Held(owner, sim, active, person, held)
            return held.owner.label if held is not None else ""

    def release(self, squad: str, key: Hashable) -> bool:
        """``key`` gives ``squad`` up; return whether it steered it. A person's release gives
        the squad back to the connection it displaced.

        Raises:
            ProtocolError: error 13, ``key`` was displaced by a person who steers it now.
            OwnedError: another connection steers it.
        """
        sim, active = self.sim_time(), self.slots.active_time()
        with self._lock:
            held = self._current(squad, sim, active, self.slots.lease)
            if held is None:
                return False
            if held.owner.key != key:
                self._refuse_displaced(squad, held, Owner(key, ""), "releases")
                raise OwnedError(f"squad {squad} is steered by {held.owner.label}, not by this "
                                 "connection; only its owner releases it", held.owner.label)
            self._give_back(squad, held, sim, active)
            return True

    def owner(self, squad: str) -> str:
        """The label of the connection steering ``squad``, "" when none."""
        with self._lock:
            held = self._owners.get(squad)
            return held.owner.label if held else ""

    def _current(self, squad: str, sim: float, active: float, lease: float) -> Held | None:
        """Who steers ``squad`` now (under the lock): a holder silent for the lease on both
        clocks has let go (a person's squad is the one it displaced's again, fresh)."""
        while True:
            held = self._owners.get(squad)
            if held is None or sim - held.sim <= lease or active - held.active <= lease:
                return held
            self._give_back(squad, held, sim, active)

    def _give_back(self, squad: str, held: Held, sim: float, active: float) -> None:
        """``held`` let go of ``squad`` (under the lock): the holder it displaced has it
        again, as if it had just steered (free when none)."""
        back = held.displaced
        if back is None:
            del self._owners[squad]
        else:
            self._owners[squad] = back._replace(sim=sim, active=active)

    def _refuse_displaced(self, squad: str, held: Held | None, owner: Owner, what: str) -> None:
        """Error 13 when a person's steer displaced ``owner`` from ``squad`` (under the
        lock)."""
        if held is None or held.owner.key == owner.key:
            return
        below = held.displaced
        while below is not None and below.owner.key != owner.key:
            below = below.displaced
        if below is None:
            return
        raise ProtocolError(TELEOPERATED, (
            f"squad {squad} is steered by a person ({held.owner.label}): {what} from "
            f"{below.owner.label} are refused while a person steers it; it is yours again, "
            "without a steer, when the person releases it, disconnects or stays silent for the "
            f"{self.slots.lease:g} s lease"))

    def forget_closed(self, monitor: zmq.Socket) -> None:
        """Connections the socket's monitor reports closed steer nothing any more (a person's
        squad is the one it displaced's again; a displaced connection gets nothing back)."""
        while True:
            try:
                event = parse_monitor_message(monitor.recv_multipart(zmq.NOBLOCK))
            except zmq.Again:
                return
            if event["event"] == zmq.EVENT_DISCONNECTED:
                self._closed(event["value"])

    def _closed(self, link: Hashable) -> None:
        """The connection ``link`` closed: drop it wherever it steers or waits."""
        sim, active = self.sim_time(), self.slots.active_time()
        with self._lock:
            for squad, held in list(self._owners.items()):
                chain = _without(held, link)
                if chain is None:
                    del self._owners[squad]
                elif chain.owner is not held.owner:  # the person left: given back now
                    self._owners[squad] = chain._replace(sim=sim, active=active)
                else:
                    self._owners[squad] = chain

    def clear(self) -> None:
        """A reset: nobody steers."""
        with self._lock:
            self._owners.clear()


def _without(held: Held | None, link: Hashable) -> Held | None:
    """``held``'s chain of displaced holders without those of connection ``link``."""
    if held is None:
        return None
    rest = _without(held.displaced, link)
    if held.owner.link == link:
        return rest
    return held if rest is held.displaced else held._replace(displaced=rest)
