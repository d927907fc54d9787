"""The still scene of a layout, encoded by coopsim and decoded with Foxglove's own schema: zones
of awkward shapes (combs, collinear vertices, either winding) filled exactly."""

from __future__ import annotations

import numpy as np
import pytest

from fxclient import protobuf_class

from coopsim.formats.games import simple_polygon_problem
from coopsim.foxglove.scene import Scene

sdk = pytest.importorskip("foxglove")

COMB = [(0, 0), (5, 0), (5, 3), (4, 3), (4, 1), (3, 1), (3, 3), (2, 3), (2, 1), (1, 1), (1, 3),
        (0, 3)]
SHAPES = {
    "comb": COMB,
    "comb_clockwise": COMB[::-1],
    "collinear": [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1), (1.5, 0.2), (0, 1)],
    "spiral": [(0, 0), (4, 0), (4, 4), (1, 4), (1, 2), (2, 2), (2, 3), (3, 3), (3, 1), (0, 1)],
}


def _area(points) -> float:
    x, y = np.asarray(points, float).T
    return abs(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y)) / 2


def test_every_zone_shape_is_tiled_by_its_triangles():
    zones = [{"name": name, "kind": "nogo", "polygon": [list(v) for v in shape],
              "color": [200, 60, 60]} for name, shape in SHAPES.items()]
    assert not any(simple_polygon_problem([tuple(v) for v in z["polygon"]]) for z in zones)
    schema = sdk.messages.SceneUpdate.get_schema()
    update = protobuf_class(schema.name, schema.data).FromString(
        Scene({"floor": {"length": 20, "width": 20}, "zones": zones}).world.fill(
            np.zeros(0), 0).tobytes())
    entities = {e.id: e for e in update.entities}
    for name, shape in SHAPES.items():
        fill = entities[f"zone/{name}"].triangles[0]
        assert [(p.x, p.y) for p in fill.points] == [tuple(map(float, v)) for v in shape]
        corners = np.asarray(shape, float)[list(fill.indices)].reshape(-1, 3, 2)
        assert len(corners) == len(shape) - 2, name
        assert sum(_area(t) for t in corners) == pytest.approx(_area(shape)), name


def test_leds_are_spheres_on_the_robots_ring_in_their_colours():
    from types import SimpleNamespace

    from coopsim.model.plugins import MODULES
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    from helpers import robot, scenario

    st = Stepper(Simulation(scenario([robot("ep", 1.0, 0.0, type="epuck")])), mode="lockstep")
    leds = MODULES.get("leds")
    leds.act(leds.commands[1], st.sim, "ep", SimpleNamespace(text="", data=(255, 0, 0)))
    st.tick()
    scene = Scene(st.sim.world.describe())
    schema = sdk.messages.SceneUpdate.get_schema()
    update = protobuf_class(schema.name, schema.data).FromString(
        scene.scene.fill(scene.values(st.snapshot), 0).tobytes())
    spheres = {e.id: e for e in update.entities}["robot/ep"].spheres
    assert len(spheres) == 8
    first = spheres[0]  # LED 0: red, straight ahead on the ring
    assert (first.color.r, first.color.g, first.color.b, first.color.a) == (1.0, 0.0, 0.0, 1.0)
    assert first.pose.position.x == pytest.approx(1.0 + 0.68 * 0.035)
    assert all(s.color.a == 0.0 for s in spheres[1:])  # set_each gave LED 0 only: others off
