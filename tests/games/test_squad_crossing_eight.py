"""Issue 35, item 10: the eight-robot squads of test_squad_crossing.py ordered across the
capture-the-flag arena round the river, in a wedge and in a line, arrive in shape (the longest
runs, about 130 and 185 s of simulated time: a file of their own, so that ``--dist loadfile``
runs them beside the other crossings). Real runs in lockstep, bounded by steps."""

from __future__ import annotations

import pytest

from crossing import check_crossing


@pytest.mark.parametrize("formation", ["wedge", "line"])
def test_eight_go_round_the_river_and_arrive_in_shape(formation):
    check_crossing(8, formation)
