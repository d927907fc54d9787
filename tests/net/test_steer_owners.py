"""The steer owners' book (coopsim.net.steerowners; issue 53 item 9): a squad's steering is
one owner's until it releases it or stays silent for the lease in simulated *and* active time
(a paused or stopped simulator takes it from nobody). The sockets' side (two real connections,
a connection closing) is tests/net/test_shared_control.py's."""

from __future__ import annotations

import pytest

from coopsim.model.errors import OwnedError
from coopsim.net.steerowners import SteerOwners
from coopsim.sim.slots import Owner


class Times:
    """The run's simulated time and the slots' active time, moved by the test (s)."""

    lease = 3.0

    def __init__(self) -> None:
        self.sim, self.active = 0.0, 0.0

    def active_time(self) -> float:
        return self.active


ALICE = Owner(("connection", b"a"), "the connection from 127.0.0.1:1", 7)
BOB = Owner(("connection", b"b"), "the connection from 127.0.0.1:2", 8)


def test_the_first_steerer_owns_until_release_and_the_lease_needs_both_clocks():
    times = Times()
    book = SteerOwners(times, lambda: times.sim)
    book.take("flock", ALICE)
    with pytest.raises(OwnedError) as err:
        book.take("flock", BOB)
    assert err.value.owner == ALICE.label and "squad flock is steered by" in str(err.value)
    times.sim = 10.0  # a run faster than real time: the active clock says it spoke just now
    with pytest.raises(OwnedError):
        book.take("flock", BOB)
    times.sim, times.active = 0.5, 10.0  # a paused or starved simulator: no simulated time
    with pytest.raises(OwnedError):
        book.take("flock", BOB)
    times.sim = 10.0  # silent for the lease on both clocks: lapsed
    book.take("flock", BOB)
    assert book.owner("flock") == BOB.label
    with pytest.raises(OwnedError):
        book.release("flock", ALICE.key)
    assert book.release("flock", BOB.key) and not book.release("flock", BOB.key)
    book.take("flock", ALICE)  # free again
