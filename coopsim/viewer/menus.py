"""The menu bar (File, Arena, Managers, View) and the in-window file dialogs.

A file dialog is a path field plus the matching files of the bundled folders and the current
folder, so nothing needs a desktop toolkit. Paths go to the simulation made absolute: it may run in
another working directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from imgui_bundle import imgui

from ..model.bundled import BUNDLED
from ..model.errors import CoopsimError
from .connection import LOAD_TIMEOUT
from .forms import SIM_IDS, Request, file_request, recording_path
from .ui import DIM_COLOR, Outcome, Ui

ROOT = BUNDLED  # worlds/, scenarios/, recordings/: the clone's, or the installed package's
LIST_ROWS = 20  # rows of a file dialog's list before it takes another column
RECORD_ID = SIM_IDS.get("record")  # None until the simulation offers recording on demand


def bundled(folder: str, suffixes: Sequence[str]) -> list[Path]:
    """Files with one of ``suffixes`` in ``ROOT/folder`` and in the current directory."""
    found: list[Path] = []
    for base in (ROOT / folder, Path.cwd()):
        if base.is_dir():
            found += sorted(p for p in base.iterdir() if p.suffix in suffixes)
    return list(dict.fromkeys(p.resolve() for p in found))


class PathDialog:
    """A small window asking for a file.

    Args:
        ui: Shared panel state.
        key: Mark prefix (``scenario``, ``world``, ``recording``).
        title: Window title.
        folder: Bundled folder whose files are offered.
        suffixes: Accepted file suffixes.
        accept: Called with the typed path when Open is clicked; it checks the path (raising
            FormError) and starts the work, reporting into the dialog's outcome.
    """

    def __init__(self, ui: Ui, key: str, title: str, folder: str, suffixes: Sequence[str],
                 accept: Callable[[str, Outcome], None]) -> None:
        self.ui, self.key, self.title = ui, key, title
        self.folder, self.suffixes, self.accept = folder, tuple(suffixes), accept
        self.open = False
        self.path = ""
        self.outcome = Outcome()

    def show(self) -> None:
        """Open the dialog (from a menu)."""
        self.open = True
        self.outcome = Outcome()

    def draw(self) -> None:
        """Draw the dialog when it is open."""
        if not self.open:
            return
        center = imgui.get_main_viewport().get_center()
        imgui.set_next_window_pos(center, imgui.Cond_.appearing, imgui.ImVec2(0.5, 0.5))
        flags = imgui.WindowFlags_.always_auto_resize | imgui.WindowFlags_.no_collapse
        expanded, self.open = imgui.begin(self.title, self.open, flags)
        if expanded:
            self.path = self.ui.field(f"path##{self.key}.path", f"{self.key}.path", self.path,
                                      420.0)
            imgui.text_colored(DIM_COLOR, "or pick one:")
            self._files(bundled(self.folder, self.suffixes))
            if self.ui.button(f"Open##{self.key}", f"{self.key}.open"):
                self.accept(self.path, self.outcome)
            imgui.same_line()
            if self.ui.button(f"Cancel##{self.key}", f"{self.key}.cancel"):
                self.open = False
            self.outcome.show()
        imgui.end()

    def _files(self, files: list[Path]) -> None:
        """The files as a list read down its columns, :data:`LIST_ROWS` rows a column at
        most: every bundled file shows without scrolling (a file below the fold is one a
        first-time user never sees; the folder grows as scenarios are added)."""
        columns = max(1, -(-len(files) // LIST_ROWS))
        rows = max(3, -(-len(files) // columns))
        style = imgui.get_style()
        width = max([imgui.calc_text_size(p.name).x for p in files], default=0.0)
        size = imgui.ImVec2(
            max(460.0, columns * (width + 3 * style.cell_padding.x) + 2 * style.window_padding.x),
            rows * (imgui.get_text_line_height() + 2 * style.cell_padding.y)
            + 2 * style.window_padding.y + 2.0)
        imgui.begin_child(f"##{self.key}.files", size, imgui.ChildFlags_.borders)
        if imgui.begin_table(f"##{self.key}.table", columns,
                             imgui.TableFlags_.sizing_stretch_same):
            for row in range(rows):
                imgui.table_next_row()
                for column in range(columns):
                    imgui.table_next_column()
                    index = column * rows + row
                    if index < len(files):
                        self._file(files[index])
            imgui.end_table()
        imgui.end_child()

    def _file(self, path: Path) -> None:
        if imgui.selectable(f"{path.name}##{self.key}.{path}", str(path) == self.path)[0]:
            self.path = str(path)
        self.ui.mark(f"{self.key}.file.{path.name}")


class MenuBar:
    """The main menu bar; ``app`` is the viewer window (see app.py for what it offers)."""

    def __init__(self, app) -> None:
        self.app = app
        ui = app.ui
        self.dialogs = {
            "scenario": PathDialog(ui, "scenario", "Load scenario", "scenarios",
                                   (".scenario", ".world"),
                                   self._load("scenario", ".scenario", ".world")),
            "world": PathDialog(ui, "world", "Load arena", "worlds", (".world",),
                                self._load("world", ".world")),
            "recording": PathDialog(ui, "recording", "Open recording", "recordings", (".mcap",),
                                    self._open_recording),
        }
        self.height = 0.0

    def _load(self, key: str, *suffixes: str) -> Callable[[str, Outcome], None]:
        def accept(path: str, outcome: Outcome) -> None:
            done = f"loaded {Path(path).name}"

            def loaded(_reply) -> None:  # close the dialog; the status bar keeps the news
                self.dialogs[key].open = False
                self.app.notice.text, self.app.notice.error = done, False
                self.app.fit_soon()
            self.app.ui.submit(lambda: file_request(path, suffixes), outcome, done,
                               timeout=LOAD_TIMEOUT, then=loaded)
        return accept

    def _open_recording(self, path: str, outcome: Outcome) -> None:
        try:
            self.app.open_recording(recording_path(path), outcome)
        except (CoopsimError, OSError) as exc:  # a bad path or a replay that cannot start: inline
            outcome.fail(str(exc))

    def draw(self) -> None:
        """Draw the bar and any open dialog."""
        if imgui.begin_main_menu_bar():
            self.height = imgui.get_window_size().y
            self._menu("File", self._file)
            self._menu("Arena", self._arena)
            self._menu("Managers", self._managers)
            self._menu("View", self._view)
            imgui.end_main_menu_bar()
        for dialog in self.dialogs.values():
            dialog.draw()

    def _menu(self, label: str, body: Callable[[], None]) -> None:
        opened = imgui.begin_menu(label)
        self.app.ui.mark(f"menu.{label}")
        if opened:
            body()
            imgui.end_menu()

    def _item(self, label: str, key: str, shortcut: str = "", selected: bool = False,
              enabled: bool = True) -> bool:
        clicked = imgui.menu_item(label, shortcut, selected, enabled)[0]
        self.app.ui.mark(f"menu.{key}")
        return clicked

    def _file(self) -> None:
        if self._item("Load scenario...", "load_scenario"):
            self.dialogs["scenario"].show()
        if self._item("Open recording...", "open_recording"):
            self.dialogs["recording"].show()
        if self._item("Back to live run", "back_to_live", enabled=self.app.replay is not None):
            self.app.back_to_live()
        run = getattr(self.app.link, "run", None) or {}  # fresher than the layout
        recording = bool(run.get("recording", self.app.ui.layout.get("recording", False)))
        if self._item("Record", "record", selected=recording, enabled=RECORD_ID is not None):
            self.app.ui.send(Request("record", params=(0 if recording else 1,)),
                             self.app.notice, "recording stopped" if recording
                             else "recording started")
        if RECORD_ID is None and imgui.is_item_hovered(imgui.HoveredFlags_.allow_when_disabled):
            imgui.set_tooltip("this simulation cannot start recording on demand; "
                              "set 'record' in the scenario's [SETTINGS]")
        imgui.separator()
        if self._item("Quit", "quit", "Ctrl+Q"):
            self.app.close()

    def _arena(self) -> None:
        for path in bundled("worlds", (".world",)):
            if self._item(path.stem, f"arena.{path.stem}"):
                self.app.ui.send(Request("load", str(path)), self.app.notice,
                                 f"loaded arena {path.stem}", timeout=LOAD_TIMEOUT,
                                 then=lambda _r: self.app.fit_soon())
        imgui.separator()
        if self._item("Load from file...", "arena.file"):
            self.dialogs["world"].show()

    def _managers(self) -> None:
        for key, manager in self.app.managers.items():
            if self._item(key.capitalize(), f"manager.{key}", selected=manager.open):
                manager.open = not manager.open

    def _view(self) -> None:
        scene = self.app.scene
        if self._item("Sensor rays", "rays", "S", scene.show_rays):
            scene.show_rays = not scene.show_rays
        if self._item("Robot names", "names", "N", self.app.show_names):
            self.app.show_names = not self.app.show_names
        if self._item("Fit world to window", "fit", "F"):
            self.app.fit()
