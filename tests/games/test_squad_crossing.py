"""Issue 35, item 10: a squad ordered across the capture-the-flag arena, round the river,
arrives in shape -- six robots in a wedge (the held-out probe: on 5433297 it stopped 2.2 m
short, scattered, RMS 4.3 m, one member driven back to the start) and in a line (not there
after 300 s), and other sizes -- or names the member it waits for, in the log and on the
board ``/sim state`` reads.

Real runs in lockstep: the scenario's simulation stepped by its stepper, the ``squad`` driver
in-process, the order posted on the board as ``/squads`` posts it; bounded by steps (simulated
time), never by the wall clock."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from crossing import GOAL, check_crossing, cross, squad_of

# The two 8-robot crossings, the longest runs, are in test_squad_crossing_eight.py: a file
# runs on one worker whole (--dist loadfile), so the crossings are split over two files.


@pytest.mark.parametrize("n, formation", [(6, "wedge"), (6, "line"), (3, "wedge"), (3, "line")])
def test_a_squad_goes_round_the_river_and_arrives_in_shape(n, formation):
    check_crossing(n, formation)


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
