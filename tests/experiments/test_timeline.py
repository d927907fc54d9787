"""The replay timeline's event ticks: times from the state document, placed on the bar."""

from __future__ import annotations

import pytest

from coopsim.viewer.hud import event_times, tick_positions


def test_event_times_come_from_the_events_rule_of_the_state_document():
    layout = {"rules": {"events": {"events": [{"name": "EVENT_1", "at": 0.0},
                                              {"name": "EVENT_2", "at": 100.0}],
                                   "applied": []}, "monitors": {"metrics": {}}}}
    assert event_times(layout) == [0.0, 100.0]
    assert event_times({"rules": {}}) == [] and event_times(None) == []


def test_ticks_sit_at_their_share_of_the_bar_and_outside_ones_are_left_out():
    xs = tick_positions([0.0, 50.0, 100.0, 250.0], 0.0, 200.0, 10.0, 410.0)
    assert xs == pytest.approx([10.0, 110.0, 210.0])
