"""The steer owners' book (coopsim.net.steerowners): a squad's steering is
one owner's until it releases it or stays silent for the lease in simulated *and* active time
(a paused or stopped simulator takes it from nobody). The sockets' side (two real connections,
a connection closing) is tests/net/test_shared_control.py's."""

from __future__ import annotations

import pytest

from coopsim.model.errors import OwnedError, ProtocolError
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


CAROL = Owner(("connection", b"c"), "the connection from 127.0.0.1:3", 9)


def _code(call) -> int:
    try:
        call()
    except OwnedError:
        return 11
    except ProtocolError as exc:
        return exc.code
    return 0


def test_a_person_takes_a_squad_from_its_steerer_who_has_it_back_on_release():
    times = Times()
    book = SteerOwners(times, lambda: times.sim)
    book.take("flock", ALICE)  # a script steers it
    assert book.take("flock", BOB, person=True) == ALICE.label  # a person takes it
    assert book.owner("flock") == BOB.label
    for call in (lambda: book.take("flock", ALICE), lambda: book.release("flock", ALICE.key)):
        with pytest.raises(ProtocolError) as err:
            call()
        assert err.value.code == 13 and "steered by a person" in err.value.text
    with pytest.raises(OwnedError) as err:  # a third connection: the person owns it
        book.take("flock", CAROL)
    assert err.value.owner == BOB.label
    assert book.take("flock", BOB, person=True) == ""  # its own: nobody taken again
    assert book.release("flock", BOB.key)
    assert book.owner("flock") == ALICE.label, "given back when the person lets go"
    assert book.take("flock", ALICE) == ""
    assert book.take("flock", BOB, person=True) == ALICE.label  # a free or own squad too


def test_a_silent_or_gone_person_gives_the_squad_back_and_people_stack():
    times = Times()
    book = SteerOwners(times, lambda: times.sim)
    book.take("flock", ALICE)
    book.take("flock", BOB, person=True)
    times.sim = times.active = 1.0  # the script stays silent meanwhile: it keeps its claim
    assert _code(lambda: book.take("flock", ALICE)) == 13
    times.sim = times.active = 5.0  # the person silent for the 3 s lease on both clocks
    assert book.take("flock", ALICE) == "" and book.owner("flock") == ALICE.label
    # a second person takes it from the first, who waits (13) and has it back after
    book.take("flock", BOB, person=True)
    assert book.take("flock", CAROL, person=True) == BOB.label
    assert _code(lambda: book.take("flock", BOB, person=True)) == 13
    assert _code(lambda: book.take("flock", ALICE)) == 13
    book._closed(CAROL.link)  # the second person's connection closes
    assert book.owner("flock") == BOB.label
    book._closed(ALICE.link)  # the script goes away while displaced: nothing to give back
    assert book.release("flock", BOB.key) and book.owner("flock") == ""
    book.take("flock", CAROL)  # free
