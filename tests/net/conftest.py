"""Fixtures of the network tests: raw peers on ``/sim`` and the name server of a module's ``run``
fixture (a module defines ``run``; one that defines its own ``sim`` or ``names`` keeps it)."""

from __future__ import annotations

import pytest

from nethelpers import Peer, lookup


@pytest.fixture()
def sim(run):
    peer = Peer(lookup(run.network.endpoint, "/sim"))
    yield peer
    peer.close()


@pytest.fixture()
def names(run):
    peer = Peer(run.network.endpoint)
    yield peer
    peer.close()
