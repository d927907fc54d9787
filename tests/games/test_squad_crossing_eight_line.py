"""Eight robots of test_squad_crossing.py's squad ordered across the
capture-the-flag arena round the river in a line arrive in shape (the longest crossing, about
185 s of simulated time: a file of its own, so that ``--dist loadfile`` runs it beside the
other crossings). A real run in lockstep, bounded by steps."""

from __future__ import annotations

from crossing import check_crossing
import pytest


@pytest.mark.slow
def test_eight_in_a_line_go_round_the_river_and_arrive_in_shape():
    check_crossing(8, "line")
