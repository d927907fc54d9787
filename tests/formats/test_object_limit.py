"""The bound on objects per world (``coopsim.model.limits.MAX_OBJECTS``, 25,000), here lowered
to 2 so the files stay small: a world file or a scenario beyond it is refused at the line of
the first object over the limit, on any engine (main had no bound)."""

from __future__ import annotations

import pytest

from coopsim.formats.files import load
from coopsim.model import limits
from coopsim.model.errors import FileFormatError

WALL = "[WALL_{n}]\ntype box\nsize 0.2 0.2 0.2\nposition {x} 0 0.1\n"


def _world(n: int) -> str:
    return "[FLOOR]\nsize 10 10 0.1\n\n" + "\n".join(WALL.format(n=k + 1, x=k - 2)
                                                   for k in range(n))


def test_a_world_or_scenario_beyond_the_object_limit_is_refused_at_the_first_beyond(
        tmp_path, monkeypatch):
    assert limits.MAX_OBJECTS == 25_000  # a map's 20,000 walls and more
    monkeypatch.setattr(limits, "MAX_OBJECTS", 2)
    (tmp_path / "three.world").write_text(_world(3))
    with pytest.raises(FileFormatError) as caught:
        load(tmp_path / "three.world")
    assert str(caught.value) == (f"{tmp_path / 'three.world'}:14: a world holds at most 2 "
                                 "objects, this one would hold 3")
    (tmp_path / "two.world").write_text(_world(2))
    (tmp_path / "more.scenario").write_text(
        "[WORLD]\nfile two.world\n\n[OBJECT_1]\ntype box\nsize 0.2 0.2 0.2\n"
        "position 3 3 0.1\nmass 1\n")
    with pytest.raises(FileFormatError) as caught:
        load(tmp_path / "more.scenario")
    assert str(caught.value) == (f"{tmp_path / 'more.scenario'}:4: a world holds at most 2 "
                                 "objects, this one would hold 3")
    load(tmp_path / "two.world")  # at the limit: fine
