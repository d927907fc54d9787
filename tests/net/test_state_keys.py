"""The state document a client reads (``/sim state`` over a socket, live and in a replay) has
exactly the keys the code declares (:class:`coopsim.model.statedoc.DocKey` tables, from which
docs/reference/state.md is generated): nothing built goes undeclared, and every key declared
as always there is there, at the top level and in each robot, object, part, target and
nested object."""

from __future__ import annotations

import pytest

from coopsim.app.reference import state_parts
from coopsim.client.connection import Client
from coopsim.replay.servers import Replay

from helpers import box, robot, scenario, target
from nethelpers import live
from rechelpers import record

pytestmark = pytest.mark.slow  # a live run and a replay, each with its servers


def declared() -> dict:
    return {k.name: k for keys in state_parts().values() for k in keys}


def mismatches(doc: dict, keys: dict, path: str = "") -> list[str]:
    """What of ``doc`` disagrees with ``keys`` (name -> DocKey): undeclared keys, missing keys
    declared as always there, and the same within each nested object or list of objects."""
    out = [f"{path}{k}: built, not declared" for k in doc if k not in keys]
    out += [f"{path}{k}: declared always there, missing" for k, d in keys.items()
            if not d.present and k not in doc]
    for name, key in keys.items():
        value = doc.get(name)
        if not key.fields or value is None:
            continue
        fields = {f.name: f for f in key.fields}
        if isinstance(value, list):
            entries = value
        elif key.value.split(" -> ")[0] in ("robot", "squad", "label", "service", "code"):
            entries = list(value.values())  # a map: each value is such an object
        else:
            entries = [value]
        for entry in entries:
            if isinstance(entry, dict):
                out += mismatches(entry, fields, f"{path}{name}.")
    return sorted(set(out))


def world():
    return scenario(robots=[robot("r1", -1.0, 0.0), robot("t1", 2.0, 2.0, type="team2")],
                    objects=[box("b1", 0.0, 3.0, mass=1.0)],
                    targets=[target("red", 2.0, -2.0)])


def test_the_live_document_has_the_declared_keys():
    with live(world(), paused=True) as run, Client(run.network.endpoint) as client:
        doc = client.sim().state()
    assert doc["robots"] and doc["parts"] and doc["objects"] and doc["targets"]
    assert mismatches(doc, declared()) == []


def test_a_replays_document_has_the_declared_keys(tmp_path):
    path = tmp_path / "r.mcap"
    record(path, 10, spec=world())
    with Replay(str(path), port=0, paused=True) as rp, Client(rp.endpoint) as client:
        doc = client.sim().state()
    assert doc["robots"] and doc["parts"]
    assert mismatches(doc, declared()) == []


def test_the_check_finds_an_undeclared_and_a_missing_key():
    keys = declared()
    doc = {k: None for k, d in keys.items() if not d.present}
    doc["robots"] = [{"name": "r1"}]
    doc["novel"] = 1
    del doc["engine"]
    found = mismatches(doc, keys)
    assert "novel: built, not declared" in found and "engine: declared always there, missing" \
        in found and "robots.type: declared always there, missing" in found
