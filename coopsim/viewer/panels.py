"""The managers (CoopDynSim's Manager menu): objects, robots and targets, inserted, updated and
removed through ``/sim`` commands.

Each manager is a window with the list of what the world holds (click one to copy it into the
form), the form, and Insert / Update / Remove buttons. What the user types is checked by
:mod:`coopsim.viewer.forms` first; the server's answer shows under the form either way.
"""

from __future__ import annotations

import math
import re

from imgui_bundle import imgui

from .forms import (SHAPES, TARGET_COLORS, FormError, Request, name,
                    object_request, robot_request, target_request)
from .ui import DIM_COLOR, Outcome, Ui

_FLAGS = imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_collapse
_LIST_HEIGHT = 92.0  # px for the list of existing items


def _fmt(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") or "0"


def _next_name(text: str) -> str:
    """box1 -> box2: a fresh default after an insertion."""
    match = re.match(r"^(.*?)(\d+)$", text)
    return f"{match.group(1)}{int(match.group(2)) + 1}" if match else f"{text}2"


class Manager:
    """A manager window's frame: open flag, placement, list box, outcome line."""

    title = "Manager"
    key = "manager"
    column = 0  # 0: along the left edge, 1: along the right edge (so managers do not overlap)
    top = 60.0  # px from the window's top

    def __init__(self, ui: Ui) -> None:
        self.ui = ui
        self.open = False
        self.outcome = Outcome()

    def draw(self) -> None:
        """Draw the window when it is open."""
        if not self.open:
            return
        width = imgui.get_io().display_size.x
        x = 10.0 if self.column == 0 else max(10.0, width - 330.0)
        imgui.set_next_window_pos(imgui.ImVec2(x, self.top), imgui.Cond_.appearing)
        expanded, self.open = imgui.begin(self.title, self.open, _FLAGS)
        if expanded:
            self._list()
            self._form()
            self._buttons()
            self.outcome.show()
        imgui.end()

    def _list(self) -> None:
        imgui.text_colored(DIM_COLOR, "in the world (click to edit):")
        imgui.begin_child(f"##{self.key}.list", imgui.ImVec2(300.0, _LIST_HEIGHT),
                          imgui.ChildFlags_.borders)
        for i, (label, pick) in enumerate(self._items()):
            if imgui.selectable(f"{label}##{self.key}.{i}", False)[0]:
                pick()
            self.ui.mark(f"{self.key}.item.{label.split()[0]}")
        imgui.end_child()

    def _items(self):
        return []

    def _form(self) -> None:
        raise NotImplementedError

    def _buttons(self) -> None:
        """Insert / Update / Remove: each sends ``_request(verb)``, then calls ``_inserted`` or
        ``_removed`` where the manager has one."""
        for verb in ("insert", "update", "remove"):
            if verb != "insert":
                imgui.same_line()
            done = verb.rstrip("e") + "ed"
            if self.ui.button(f"{verb.capitalize()}##{self.key}", f"{self.key}.{verb}"):
                self.ui.submit(lambda verb=verb: self._request(verb), self.outcome,
                               self._said(done), getattr(self, f"_{done}", None))

    def _request(self, verb: str) -> Request:
        raise NotImplementedError

    def _said(self, done: str) -> str:
        return f"{done} {self.values['name']}"

    def _inserted(self, _reply) -> None:
        self.values["name"] = _next_name(self.values["name"])


class ObjectManager(Manager):
    """Boxes, cylinders and spheres: size, position, orientation, mass, colour."""

    title = "Object manager"
    key = "object"
    _labels = {"name": "name", "length": "length / diameter (m)", "width": "width (m)",
               "height": "height (m)", "x": "x (m)", "y": "y (m)", "z": "z (m)",
               "yaw": "orientation (deg)", "mass": "mass (kg, 0 = static)"}

    def __init__(self, ui: Ui) -> None:
        super().__init__(ui)
        self.values = {"name": "box1", "length": "0.3", "width": "0.3", "height": "0.3",
                       "x": "0", "y": "0", "z": "0.15", "yaw": "0", "mass": "0.5"}
        self.shape = 0
        self.color = [0.85, 0.55, 0.2]

    def _items(self):
        return [(f"{o['name']} ({o['shape']})", lambda o=o: self._pick(o))
                for o in self.ui.layout["objects"]]

    def _pick(self, obj: dict) -> None:
        size = obj["size"]
        self.values.update(name=obj["name"], length=_fmt(size[0]), width=_fmt(size[1]),
                           height=_fmt(size[2]), x=_fmt(obj["x"]), y=_fmt(obj["y"]),
                           z=_fmt(obj.get("z", 0.0)), yaw=_fmt(math.degrees(obj["yaw"])),
                           mass=_fmt(obj["mass"]))
        self.shape = SHAPES.index(obj["shape"]) if obj["shape"] in SHAPES else 0
        self.color = [c / 255 for c in obj["color"][:3]]

    def _form(self) -> None:
        imgui.set_next_item_width(130.0)
        _, self.shape = imgui.combo("shape##object.shape", self.shape, list(SHAPES))
        self.ui.mark("object.shape")
        self.ui.fields("object", self.values, self._labels)
        _, self.color = imgui.color_edit3("color##object.color", self.color,
                                          imgui.ColorEditFlags_.no_inputs)

    def _request(self, verb: str) -> Request:
        if verb == "remove":
            return Request("remove_object", name(self.values))
        return object_request(verb, self.values, SHAPES[self.shape], self.color)


class RobotManager(Manager):
    """Robots and teams: type, name, position, orientation, colour."""

    title = "Robot manager"
    key = "robot"
    column = 1
    _labels = {"name": "name", "x": "x (m)", "y": "y (m)", "z": "z (m)",
               "yaw": "orientation (deg)"}

    def __init__(self, ui: Ui) -> None:
        super().__init__(ui)
        self.values = {"name": "robot1", "x": "0", "y": "0", "z": "0", "yaw": "0"}
        self.type = 0
        self.color = [0.16, 0.35, 0.9]

    def _types(self) -> list[str]:
        """The robot types the simulation reports (its registry: built-ins and plugins)."""
        lay = self.ui.layout
        return list(lay.get("types") or sorted({s["type"] for s in lay.get("sections", [])}))

    def _items(self):
        return [(f"{s['name']} ({s['type']})", lambda s=s: self._pick(s))
                for s in self.ui.layout.get("sections", [])]

    def _pick(self, section: dict) -> None:
        lay = self.ui.layout
        robots = [r for r in lay["robots"] if r.get("section", r["name"]) == section["name"]]
        parts = [p for p in lay.get("parts", []) if p.get("section") == section["name"]]
        robot = robots[0] if robots else None
        # a team's place is its carried part's (the section's centre); one robot's is its own
        where = (parts[0] if len(robots) > 1 and parts else robot) or {"x": 0.0, "y": 0.0,
                                                                         "yaw": 0.0}
        self.values.update(name=section["name"], x=_fmt(where["x"]), y=_fmt(where["y"]),
                           z="0", yaw=_fmt(math.degrees(where["yaw"])))
        types = self._types()
        self.type = types.index(section["type"]) if section["type"] in types else 0
        if robot is not None:
            self.color = [c / 255 for c in robot["color"][:3]]

    def _form(self) -> None:
        types = self._types()
        imgui.set_next_item_width(130.0)
        _, self.type = imgui.combo("type##robot.type", min(self.type, len(types) - 1), types)
        self.ui.mark("robot.type")
        self.ui.fields("robot", self.values, self._labels)
        _, self.color = imgui.color_edit3("color##robot.color", self.color,
                                          imgui.ColorEditFlags_.no_inputs)

    def _request(self, verb: str) -> Request:
        if verb == "remove":
            return Request("remove_robot", name(self.values))
        rtype = self._types()[min(self.type, len(self._types()) - 1)]
        return robot_request(verb, self.values, rtype, self.color)


class TargetManager(Manager):
    """Coloured target markers: colour and position."""

    title = "Target manager"
    key = "target"
    column = 1
    top = 420.0
    _labels = {"x": "x (m)", "y": "y (m)", "z": "z (m)"}

    def __init__(self, ui: Ui) -> None:
        super().__init__(ui)
        self.values = {"x": "0", "y": "0", "z": "0"}
        self.color = 0
        self.index: int | None = None

    def _items(self):
        return [(f"{t['index']}: {t['color']} ({_fmt(t['x'])}, {_fmt(t['y'])})",
                 lambda t=t: self._pick(t)) for t in self.ui.layout["targets"]]

    def _pick(self, target: dict) -> None:
        self.index = int(target["index"])
        self.values.update(x=_fmt(target["x"]), y=_fmt(target["y"]), z=_fmt(target["z"]))
        if target["color"] in TARGET_COLORS:
            self.color = TARGET_COLORS.index(target["color"])

    def _form(self) -> None:
        imgui.text_colored(DIM_COLOR, "selected: " + ("none" if self.index is None
                                                      else f"target {self.index}"))
        imgui.set_next_item_width(130.0)
        _, self.color = imgui.combo("color##target.color", self.color, list(TARGET_COLORS))
        self.ui.mark("target.color")
        self.ui.fields("target", self.values, self._labels)

    def _request(self, verb: str) -> Request:
        if verb == "remove":
            if self.index is None:
                raise FormError("", "choose the target to remove in the list first")
            return Request("remove_target", params=(self.index,))
        color = TARGET_COLORS[self.color]
        return target_request(verb, self.values, color, None if verb == "insert" else self.index)

    def _said(self, done: str) -> str:
        return (f"inserted a {TARGET_COLORS[self.color]} target" if done == "inserted"
                else f"{done} target {self.index}")

    _inserted = None  # the form keeps its values for the next target

    def _removed(self, _reply) -> None:
        self.index = None
