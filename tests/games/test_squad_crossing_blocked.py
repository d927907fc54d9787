"""The crossings of test_squad_crossing.py, one member stuck: a squad with a member that
cannot move names it, with why, in the log and on the board ``/sim state`` reads, and the others
wait in their slots at the goal. A real lockstep run of 120 s simulated time, bounded by steps
(a file of its own: ``--dist loadfile`` runs it beside the other crossings)."""

from __future__ import annotations

import logging
import math

import numpy as np

from crossing import GOAL, cross, squad_of
import pytest


@pytest.mark.slow
def test_a_member_that_cannot_move_is_named_with_why_in_the_log_and_on_the_board(caplog):
    """s3's motors give nothing: the squad goes on without it (before, it waited for it at the
    start for ever, saying nothing) and then waits for it at the goal; the log and the board
    (``/sim state`` ``squad_orders`` ``blocked``) say which member and why."""
    def lame(sim):
        sim.set_param("s3", "motors", "max_speed", 0.0)
    with caplog.at_level(logging.INFO, logger="coopsim.plugins.drivers.squad"):
        arrived, stepper, pos = cross(squad_of(6), "wedge", limit=120.0, setup=lame)
    assert arrived is None
    blocked = stepper.snapshot.extra["squad_blocked"]
    assert list(blocked) == ["S"] and list(blocked["S"]) == ["s3"]
    assert blocked["S"]["s3"].startswith("has not reached its starting slot")
    said = [r.getMessage() for r in caplog.records]
    assert "squad S waits for s3: it has not reached its starting slot (the others were " \
        "there from t = 0.7 s)" in said
    # the others stand in their slots at the goal meanwhile
    others = np.delete(pos, 2, axis=0)
    assert math.dist(others.mean(axis=0), GOAL) < 1.0
