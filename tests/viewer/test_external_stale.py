"""The viewer's status bar says which external robots are stale, from ``/sim
state``'s ``external`` entry (protocol 10); a document without it shows nothing new."""

from __future__ import annotations

from coopsim.viewer.connection import run_state
from coopsim.viewer.hud import run_badges


def test_stale_external_robots_are_named_in_the_status_bar():
    doc = {"external": {"robots": {"real": {"status": "stale"}, "mocap": {"status": "live"},
                                   "late": {"status": "waiting"}}}}
    run = run_state(doc)
    assert run["stale"] == ["real"]
    assert ("STALE: real", "error") in run_badges(run, paused=False)
    assert "stale" not in run_state({}) and run_state({"external": "junk"}).get("stale") is None
