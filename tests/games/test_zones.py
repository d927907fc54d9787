"""No-go zones and squads in scenario files: parsing and ``file:line`` errors, zones in the layout
and the map, zones that do not collide, paths that avoid them, and the ``line`` floor sensor."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coopsim.formats.files import load, parse_scenario
from coopsim.model.errors import FileFormatError
from coopsim.sim.drivers import LocalRobot
from coopsim.sim.simulation import Simulation
from coopsim.swarm import find_path, smooth
from coopsim.swarm.game import map_of_layout, planning_grid

from helpers import step_by_hand

ROOT = Path(__file__).resolve().parents[2]
WORLD = ROOT / "worlds" / "empty.world"  # 10 x 10 m
HEAD = f"[WORLD]\nfile {WORLD}\n"


def robot(name, x, y, theta=0.0):
    return (f"[ROBOT_{name[1:]}]\ntype swarmbot\nname {name}\nposition {x} {y} 0\n"
            f"orientation 0 0 {theta}\n")


RIVER = "[ZONE_1]\nkind water\npolygon -0.5 -3  0.5 -3  0.5 3  -0.5 3\n"


def scenario_text(*sections: str) -> str:
    return HEAD + "".join(sections)


def test_a_polygon_and_a_box_zone_load_with_their_kinds_and_colours():
    spec = parse_scenario(scenario_text(RIVER, "[ZONE_2]\nkind border\nbox 3 3 1 0.2 90\n"
                                        "color 1 2 3\n"), "t.scenario")
    water, border = spec.zones
    assert (water.kind, water.color, len(water.polygon)) == ("water", (60, 120, 220), 4)
    assert border.color == (1, 2, 3)
    xs, ys = zip(*border.polygon)  # turned 90 degrees: 0.2 along x, 1 along y
    assert max(xs) - min(xs) == pytest.approx(0.2) and max(ys) - min(ys) == pytest.approx(1.0)


@pytest.mark.parametrize("zone, line, words", [
    ("[ZONE_1]\nkind water\npolygon 0 0  1 1  1 0  0 1\n", 5, "edges 1 and 3 cross"),
    ("[ZONE_1]\nkind water\npolygon 0 0  1 0  2 0  1 0.5  0.5 0\n", 5, "doubles back"),
    ("[ZONE_1]\nkind water\npolygon 0 0  9 0  0 1\n", 5, "off the 10 x 10 m floor"),
    ("[ZONE_1]\nkind water\npolygon 0 0  1 0  1\n", 5, "x y pairs"),
    ("[ZONE_1]\nkind lava\nbox 0 0 1 1\n", 4, "unknown zone kind"),
    ("[ZONE_1]\nkind water\n", 3, "no polygon or box"),
    ("[ZONE_1]\nkind water\nbox 0 0 1 1\npolygon 0 0 1 0 0 1\n", 3, "both polygon and box"),
])
def test_a_bad_zone_is_a_file_line_error(zone, line, words):
    with pytest.raises(FileFormatError) as err:
        parse_scenario(scenario_text(zone), "t.scenario")
    assert err.value.line == line and words in str(err.value)


@pytest.mark.parametrize("squad, words", [
    ("[SQUAD_1]\nname A\nrobots a1 zz\n", "no robot named 'zz'"),
    ("[SQUAD_1]\nname A\nrobots a1\n[SQUAD_2]\nname B\nrobots a1\n", "already in [SQUAD_1]"),
    ("[SQUAD_1]\nname A\nrobots a1\n[SQUAD_2]\nname A\nrobots a2\n", "already used by"),
    ("[SQUAD_1]\nname A\nrobots a1\nformation star\n", "unknown formation"),
])
def test_a_bad_squad_is_a_file_line_error(squad, words):
    text = scenario_text(robot("a1", -2, 0), robot("a2", 2, 0), squad)
    with pytest.raises(FileFormatError) as err:
        parse_scenario(text, "t.scenario")
    assert words in str(err.value) and err.value.line > 10


def test_a_circle_squad_takes_its_radius_from_the_file():
    from coopsim.swarm.formations import Formation
    text = scenario_text(robot("a1", -2, 0), robot("a2", 2, 0),
                         "[SQUAD_1]\nname A\nrobots a1 a2\nformation circle\nspacing 0.5\n"
                         "radius 1.5\n")
    spec = parse_scenario(text, "t.scenario").squads[0]
    assert spec.radius == 1.5
    slots = Formation.of(spec).slots(2)
    assert np.allclose(np.hypot(*slots.T), 1.5)  # not the default n x spacing = 1.0 m
    plain = parse_scenario(text.replace("radius 1.5\n", ""), "t.scenario").squads[0]
    assert plain.radius is None and np.allclose(np.hypot(*Formation.of(plain).slots(2).T), 1.0)


@pytest.mark.parametrize("tail, words", [
    ("formation wedge\nradius 1\n", "[SQUAD_1]: radius is for a circle or half_circle "
                                     "formation, not wedge"),
    ("formation circle\nspacing 0.8\nradius 0.3\n", "[SQUAD_1]: radius 0.3 m puts neighbours "
                                                      "0.60 m apart, less than the spacing 0.8 m "
                                                      "(at least 0.40 m for 2 robots)"),
    ("formation half_circle\nradius -1\n", "radius must be > 0, got -1"),
])
@pytest.mark.slow
def test_a_bad_squad_radius_is_an_error_at_its_line(tmp_path, tail, words):
    bad = tmp_path / "r.scenario"
    bad.write_text(scenario_text(robot("a1", -2, 0), robot("a2", 2, 0),
                                 "[SQUAD_1]\nname A\nrobots a1 a2\n" + tail))
    line = 1 + bad.read_text().splitlines().index(next(
        x for x in bad.read_text().splitlines() if x.startswith("radius")))
    done = subprocess.run([sys.executable, "-m", "coopsim", "check", str(bad)],
                          capture_output=True, text=True, timeout=60)
    out = done.stdout.strip() + done.stderr.strip()
    assert done.returncode == 2, out
    assert out.startswith(f"{bad}:{line}: ") and words in out and "Traceback" not in out


@pytest.mark.slow
def test_coopsim_check_reports_a_self_intersecting_polygon_as_file_line(tmp_path):
    bad = tmp_path / "bowtie.scenario"
    bad.write_text(scenario_text("[ZONE_1]\nkind water\npolygon 0 0  1 1  1 0  0 1\n"))
    done = subprocess.run([sys.executable, "-m", "coopsim", "check", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout.strip() + done.stderr.strip() == \
        f"{bad}:5: [ZONE_1] polygon: edges 1 and 3 cross; a zone is a simple polygon " \
        "(its edges meet only at shared vertices)"


def step(sim, n=1):
    step_by_hand(sim, n)


def test_zones_are_in_the_layout_and_the_map_and_do_not_collide(tmp_path):
    path = tmp_path / "river.scenario"
    path.write_text(scenario_text("[SETTINGS]\ndt 0.05\n", RIVER, robot("r1", -2, 0)))
    sim = Simulation(load(path))
    layout = sim.world.describe()
    assert layout["zones"] == [{"name": "ZONE_1", "kind": "water", "color": [60, 120, 220],
                                "polygon": [[-0.5, -3], [0.5, -3], [0.5, 3], [-0.5, 3]]}]
    assert [(z.name, z.polygon) for z in map_of_layout(layout).zones] == \
        [(z.name, z.polygon) for z in sim.snapshot.extra["map"].zones]
    bot = LocalRobot(sim, "r1")
    for _ in range(120):  # straight into the water and through it: nothing stops it
        bot.motors.set_speeds(0.5, 0.5)
        step(sim)
    assert sim.snapshot.poses[0, 0] > 0.8


def test_paths_on_the_planning_grid_go_round_a_zone(tmp_path):
    path = tmp_path / "river.scenario"
    path.write_text(scenario_text(RIVER))
    spec = Simulation(load(path)).snapshot.extra["map"]
    grid = planning_grid(spec)
    way = smooth(grid, find_path(grid, (-3, 0), (3, 0)).points)
    dense = np.vstack([a + t * (b - a) for a, b in zip(way[:-1], way[1:])
                       for t in np.linspace(0, 1, 50)])
    inside = (np.abs(dense[:, 0]) < 0.5 + 0.2) & (np.abs(dense[:, 1]) < 3 + 0.2)
    assert not inside.any()  # never within a robot radius of the water
    assert np.abs(dense[:, 1]).max() > 3.2  # it went round an end


def test_the_line_sensor_sees_the_outline_ahead_and_the_water_below(tmp_path):
    path = tmp_path / "river.scenario"
    path.write_text(scenario_text(RIVER, robot("r1", -0.76, 0), robot("r2", -3, 0),
                                  robot("r3", -0.6, 1.0, 90), robot("r4", 0, -2)))
    sim = Simulation(load(path))
    step(sim)
    line = sim.snapshot.readings["line"]
    assert line[0].tolist() == [1, 1, 1]  # 0.25 m ahead of x = -0.76: on the outline at -0.5
    assert line[1].tolist() == [0, 0, 0]
    assert line[2].tolist() == [0, 1, 1]  # facing +y beside the water: only its right sensor
    assert line[3].tolist() == [1, 1, 1]  # over the water
    sim.set_param("r1", "line", "ahead", 0.1)
    step(sim)
    assert sim.snapshot.readings["line"][0].tolist() == [0, 0, 0]
    assert math.isclose(sim.snapshot.poses[0, 0], -0.76, abs_tol=0.01)


def test_the_line_sensor_reads_the_lower_code_where_zones_overlap_and_not_a_polygons_notch(
        tmp_path):
    """Water and a nogo strip overlapping it (its code 3, water's 1) and a U-shaped border
    (code 2): a sensor over both reads the lower code, as does a robot whose sensors each see
    a different zone; a point in the U's notch is outside it (even-odd)."""
    nogo = "[ZONE_2]\nkind nogo\npolygon 0 -1  2 -1  2 1  0 1\n"
    u = "[ZONE_3]\nkind border\npolygon 2 2  4 2  4 4  3.6 4  3.6 2.4  2.4 2.4  2.4 4  2 4\n"
    path = tmp_path / "zones.scenario"
    path.write_text(scenario_text(RIVER, nogo, u, robot("r1", 0.0, 0.5),
                                  robot("r2", 1.2, 0.3), robot("r3", 0.5, -0.7, -90),
                                  robot("r4", 3.0, 3.25), robot("r5", 2.95, 2.2)))
    sim = Simulation(load(path))
    step(sim)
    line = sim.snapshot.readings["line"].tolist()
    assert line[0] == [1, 1, 1]  # both sensors over the water and the strip: water's 1
    assert line[1] == [1, 1, 3]  # over the strip alone
    assert line[2] == [1, 1, 1]  # left over the strip alone (3), right over both (1)
    assert line[3] == [0, 0, 0]  # in the U's notch
    assert line[4] == [1, 1, 2]  # over the U's base
