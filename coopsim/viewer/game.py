"""Games in the viewer: the Squads panel (pick a squad, right-click to order it) and the
bases, flags and score of a rule that declares the ``teams`` overlay (capture the flag does).

A right-click (a press and release of the right button that did not drag) on the floor sends
the selected squad an order on ``/squads`` (docs/protocol.md section 9), which publishes it on
``/squads/events``: on a flag of the squad's own team, ``defend`` it; on the enemy's flag,
``capture`` it; anywhere else, ``goto`` there in the formation chosen in the panel. The server's
answer (the order's number, or why it was refused) shows in the panel.

Flags and bases are drawn from the fields of the first rule whose ``overlay`` field is
``teams`` (:attr:`coopsim.model.driver.Rule.overlay`; the state document's ``rules``, refreshed
every second), whatever its label; a carried flag is drawn on its carrier as the stream moves it. The
score and clock join the status bar (:func:`game_parts`).
"""

from __future__ import annotations

import math

from imgui_bundle import imgui

from ..model.orders import FORMATION_NAMES, SquadOrder
from .ui import DIM_COLOR, Outcome, Ui

_FLAGS = imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_collapse
PICK_FLAG = 0.6  # m: a right-click this near a flag means the flag
CLICK_SLOP = 4.0  # px a right press may move and still be a click, not a pan
_FALLBACK = ((230, 40, 40), (40, 90, 230))  # team colours when a team has no robot


OVERLAY = "teams"  # the overlay kind this module draws (Rule.overlay)


def team_fields(run: dict) -> dict | None:
    """The fields of the first rule in the run's state that declares the ``teams`` overlay,
    or None."""
    for fields in (run.get("rules") or {}).values():
        if isinstance(fields, dict) and fields.get("overlay") == OVERLAY and "teams" in fields:
            return fields
    return None


def game_parts(run: dict) -> list[tuple[str, str]]:
    """The status bar's game pieces: the score, the clock, the result (kind ``state``)."""
    fields = team_fields(run)
    if fields is None:
        return []
    teams = list(fields["teams"].items())
    if len(teams) == 2:  # the usual game: "A 1 : 0 B"
        (a, ta), (b, tb) = teams
        score = f"{a} {ta['score']} : {tb['score']} {b}"
    else:
        score = "   ".join(f"{name} {team['score']}" for name, team in teams)
    left = max(0.0, float(fields.get("time_limit", 0.0)) - float(fields.get("clock", 0.0)))
    parts = [(f"{score}   {int(left) // 60}:{int(left) % 60:02d} left", "state")]
    if fields.get("result"):
        parts.append((f"GAME OVER: {fields['result']}", "state"))
    return parts


def team_colors(layout: dict, fields: dict) -> dict[str, tuple[int, int, int]]:
    """Team name -> the colour of its first robot (a fixed red / blue without one)."""
    colors = {r["name"]: tuple(r.get("color", (128, 128, 128))) for r in layout.get("robots", ())}
    out = {}
    for k, (name, team) in enumerate(fields["teams"].items()):
        robots = [r for r in team.get("robots", ()) if r in colors]
        out[name] = colors[robots[0]] if robots else _FALLBACK[k % 2]
    return out


def flag_positions(fields: dict, scene) -> dict[str, tuple[float, float]]:
    """Team name -> where its flag is: on its carrier as last streamed, else as the rule says."""
    where = dict(zip(scene.robot_names, map(tuple, scene.robot_xy)))
    return {name: where.get(team.get("carrier"), tuple(team["flag"]))
            for name, team in fields["teams"].items()}


def draw_game(scene, camera, run: dict, layout: dict | None) -> None:
    """Bases (rings) and flags (poles with pennants) in the teams' colours."""
    fields = team_fields(run)
    if fields is None or layout is None:
        return
    draw = imgui.get_background_draw_list()
    colors = team_colors(layout, fields)
    flags = flag_positions(fields, scene)
    base_r = float(fields.get("base_radius", 1.0)) * camera.scale
    flag_r = max(4.0, float(fields.get("flag_radius", 0.15)) * camera.scale)
    h = camera.height
    for name, team in fields["teams"].items():
        col = imgui.get_color_u32(imgui.ImVec4(*(c / 255 for c in colors[name]), 0.9))
        bx, by = camera.to_screen(*team["base"])
        draw.add_circle(imgui.ImVec2(bx, h - by), base_r, col, 48, 3.0)
        fx, fy = camera.to_screen(*flags[name])
        fx, fy = fx, h - fy
        dark = imgui.get_color_u32(imgui.ImVec4(0.1, 0.1, 0.1, 1.0))
        draw.add_circle_filled(imgui.ImVec2(fx, fy), flag_r, dark, 16)
        draw.add_line(imgui.ImVec2(fx, fy), imgui.ImVec2(fx, fy - 3.2 * flag_r), dark, 2.0)
        draw.add_triangle_filled(imgui.ImVec2(fx, fy - 3.2 * flag_r),
                                 imgui.ImVec2(fx + 2.6 * flag_r, fy - 2.5 * flag_r),
                                 imgui.ImVec2(fx, fy - 1.8 * flag_r), col)


#: px the Squads panel takes along the window's right edge; the view fits the arena left of it
SQUADS_WIDTH = 250.0

class SquadPanel:
    """The Squads window: which squad a right-click orders, and in what formation."""

    def __init__(self, ui: Ui) -> None:
        self.ui = ui
        self.selected: str | None = None
        self.formation = ""  # "" = the squad's own
        self.outcome = Outcome()

    def squads(self) -> list[dict]:
        """The run's squads (the layout's ``squads``)."""
        return list(self.ui.layout.get("squads", ()))

    def draw(self, top: float) -> None:
        """Draw the panel along the right edge (nothing when the run has no squads)."""
        squads = self.squads()
        if not squads:
            return
        width = imgui.get_io().display_size.x
        imgui.set_next_window_pos(imgui.ImVec2(max(10.0, width - SQUADS_WIDTH), top + 40.0),
                                  imgui.Cond_.appearing)
        imgui.begin("Squads", None, _FLAGS)
        for squad in squads:
            name = squad["name"]
            label = f"{name} ({squad.get('team') or '-'}): {', '.join(squad['robots'])}"
            if imgui.radio_button(f"{label}##squad.{name}", self.selected == name):
                self.selected = name
            self.ui.mark(f"squads.{name}")
        imgui.set_next_item_width(150.0)
        shown = self.formation or "squad's own"
        if imgui.begin_combo("formation##squads", shown):
            for option in ("", *FORMATION_NAMES):
                if imgui.selectable(option or "squad's own", option == self.formation)[0]:
                    self.formation = option
            imgui.end_combo()
        self.ui.mark("squads.formation")
        imgui.text_colored(DIM_COLOR, "right-click: go there; on a flag:\ncapture it or defend it")
        self.outcome.show()
        imgui.end()

    def order_for(self, x: float, y: float, run: dict) -> SquadOrder | None:
        """The order a right-click at world (x, y), m, means for the selected squad."""
        if self.selected is None:
            return None
        fields = team_fields(run)
        if fields is not None:
            team = next((s.get("team") for s in self.squads() if s["name"] == self.selected), "")
            for name, side in fields["teams"].items():
                if math.dist((x, y), side["flag"]) <= PICK_FLAG:
                    verb = "defend" if name == team else "capture"
                    return SquadOrder(self.selected, verb, tuple(side["flag"]))
        return SquadOrder(self.selected, "goto", (x, y), self.formation)

    def right_click(self, x: float, y: float, run: dict) -> None:
        """Send the order a right-click at world (x, y), m, means (or say why not)."""
        order = self.order_for(x, y, run)
        if order is None:
            self.outcome.fail("select a squad in the Squads panel first")
            return
        future = self.ui.link.submit("/squads", 2, order.text, data=order.data)
        self.outcome.start(future, f"sent: {order.text} "
                                   + " ".join(f"{v:.2f}" for v in order.data))
