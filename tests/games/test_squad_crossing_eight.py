"""Eight robots of test_squad_crossing.py's squad ordered across the
capture-the-flag arena round the river in a wedge arrive in shape (a long run, about 130 s of
simulated time: a file of its own, so that ``--dist loadfile`` runs it beside the other
crossings; the line is in test_squad_crossing_eight_line.py). A real run in lockstep, bounded
by steps."""

from __future__ import annotations

from crossing import check_crossing
import pytest


@pytest.mark.slow
def test_eight_in_a_wedge_go_round_the_river_and_arrive_in_shape():
    check_crossing(8, "wedge")
