"""A squad ordered across the capture-the-flag arena, round the river,
arrives in shape -- six robots in a wedge (the held-out probe: on 5433297 it stopped 2.2 m
short, scattered, RMS 4.3 m, one member driven back to the start) and in a line (not there
after 300 s), and other sizes -- or names the member it waits for, in the log and on the
board ``/sim state`` reads.

Real runs in lockstep: the scenario's simulation stepped by its stepper, the ``squad`` driver
in-process, the order posted on the board as ``/squads`` posts it; bounded by steps (simulated
time), never by the wall clock."""

from __future__ import annotations

import pytest

from crossing import check_crossing

# A file runs on one worker whole (--dist loadfile), and these are the suite's longest runs: the
# 8-robot crossings are in test_squad_crossing_eight.py and test_squad_crossing_eight_line.py,
# the member that cannot move in test_squad_crossing_blocked.py.


@pytest.mark.slow
@pytest.mark.parametrize("n, formation", [(6, "wedge"), (6, "line"), (3, "wedge"), (3, "line")])
def test_a_squad_goes_round_the_river_and_arrives_in_shape(n, formation):
    check_crossing(n, formation)
