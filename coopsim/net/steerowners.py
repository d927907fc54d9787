"""Who steers a squad (``/squads`` command 4 ``steer``): one connection at a time, as a robot's
motion is one connection's (docs/protocol.md section 9, *Steer ownership*).

The first connection that steers a squad owns its steering until it releases it (``/squads``
command 6 ``release``), its connection closes, or it stays silent for the run's lease (the
robots' lease, ``/sim`` set_lease); a steer from any other connection meanwhile is refused with
error 11 naming the owner. Silence is measured as the robots' leases are: in simulated time and
in the command slots' active time both (:mod:`coopsim.sim.slots`), so a paused, stopped or
starved simulator takes no squad from anyone.

A steer itself holds for the ``shared`` driver's ``hold`` (0.5 s of simulated time by default)
and the squad then hovers: that is the steer's dead man, whatever its connection does.
"""

from __future__ import annotations

import threading
from typing import Callable, Hashable

import zmq
from zmq.utils.monitor import parse_monitor_message

from ..model.errors import OwnedError
from ..sim.slots import Owner


class SteerOwners:
    """The owners of the squads' steering (thread-safe).

    Args:
        slots: The run's CommandSlots (its ``lease``, and its active time).
        sim_time: Returns the run's simulated time, s.
    """

    def __init__(self, slots, sim_time: Callable[[], float]) -> None:
        self.slots, self.sim_time = slots, sim_time
        self._lock = threading.Lock()
        self._owners: dict[str, tuple[Owner, float, float]] = {}  # squad -> owner, sim, active

    def take(self, squad: str, owner: Owner) -> None:
        """``owner`` steers ``squad`` now (its own again, or free, or its owner's lease lapsed).

        Raises:
            OwnedError: another connection steers it (error 11, naming it).
        """
        sim, active = self.sim_time(), self.slots.active_time()
        lease = self.slots.lease
        with self._lock:
            held = self._owners.get(squad)
            if held is not None and held[0].key != owner.key and (
                    sim - held[1] <= lease or active - held[2] <= lease):
                raise OwnedError(
                    f"squad {squad} is steered by {held[0].label}: steers from other "
                    f"connections are refused until it releases it (/squads command 6), "
                    f"disconnects or stays silent for the {lease:g} s lease", held[0].label)
            self._owners[squad] = (owner, sim, active)

    def release(self, squad: str, key: Hashable) -> bool:
        """``key`` gives ``squad`` up; return whether it steered it.

        Raises:
            OwnedError: another connection steers it.
        """
        with self._lock:
            held = self._owners.get(squad)
            if held is None:
                return False
            if held[0].key != key:
                raise OwnedError(f"squad {squad} is steered by {held[0].label}, not by this "
                                 "connection; only its owner releases it", held[0].label)
            del self._owners[squad]
            return True

    def owner(self, squad: str) -> str:
        """The label of the connection steering ``squad``, "" when none."""
        with self._lock:
            held = self._owners.get(squad)
            return held[0].label if held else ""

    def forget_closed(self, monitor: zmq.Socket) -> None:
        """Connections the socket's monitor reports closed steer nothing any more."""
        while True:
            try:
                event = parse_monitor_message(monitor.recv_multipart(zmq.NOBLOCK))
            except zmq.Again:
                return
            if event["event"] == zmq.EVENT_DISCONNECTED:
                with self._lock:
                    self._owners = {s: h for s, h in self._owners.items()
                                    if h[0].link != event["value"]}

    def clear(self) -> None:
        """A reset: nobody steers."""
        with self._lock:
            self._owners.clear()
