"""What every panel shares: the link, requests in flight with their outcome, and widget marks.

The widget layer is Dear ImGui (imgui-bundle's pyglet backend): panels are plain functions of the
current state, redrawn every frame, so a form never holds a copy of the world that could go stale.
Each widget drawn through :meth:`Ui.mark` leaves its rectangle in ``Ui.marks``; the tests (and
anyone scripting the viewer) click widgets by name through the window's own event handlers.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Callable

from imgui_bundle import imgui

from ..model.errors import ProtocolError
from .connection import Link
from .forms import FormError, Request

ERROR_COLOR = imgui.ImVec4(1.0, 0.42, 0.38, 1.0)
OK_COLOR = imgui.ImVec4(0.55, 0.9, 0.55, 1.0)
DIM_COLOR = imgui.ImVec4(0.7, 0.7, 0.7, 1.0)
FIELD_WIDTH = 130.0  # px for a number field


class Outcome:
    """The message under a form: what the last request did, or why nothing was sent."""

    def __init__(self) -> None:
        self.text = ""
        self.error = False
        self.pending: Future | None = None
        self._ok = ""
        self._then: Callable | None = None

    def start(self, future: Future, ok: str, then: Callable | None = None) -> None:
        """Follow ``future``; show ``ok`` when it succeeds, the server's sentence when not."""
        self.pending, self._ok, self._then = future, ok, then
        self.text, self.error = "sending...", False

    def fail(self, text: str) -> None:
        """Show an error at once (nothing was sent)."""
        self.pending, self.text, self.error = None, text, True

    def poll(self) -> None:
        """Pick up the result of the request in flight, if it has come."""
        future = self.pending
        if future is None or not future.done():
            return
        self.pending = None
        exc = future.exception()
        if exc is None:
            self.text, self.error = self._ok, False
            if self._then is not None:
                self._then(future.result())
        else:
            self.text = exc.text if isinstance(exc, ProtocolError) else str(exc)
            self.error = True

    def show(self) -> None:
        """Draw the message (if any) in the current window."""
        self.poll()
        if self.text:
            imgui.push_text_wrap_pos(0.0)
            imgui.text_colored(ERROR_COLOR if self.error else OK_COLOR, self.text)
            imgui.pop_text_wrap_pos()


class Ui:
    """The state panels share.

    Args:
        link: The connection to the simulation.
    """

    def __init__(self, link: Link) -> None:
        self.link = link
        self.marks: dict[str, tuple[float, float, float, float]] = {}
        self.enabled: dict[str, bool] = {}  # whether each marked button could be clicked

    @property
    def layout(self) -> dict:
        """The latest layout, or an empty one while none has come."""
        return self.link.layout or {"objects": [], "robots": [], "targets": [], "parts": [],
                                    "sections": [], "floor": {"length": 0, "width": 0}}

    def mark(self, key: str) -> None:
        """Remember where the last widget was drawn (x0, y0, x1, y1; ImGui pixels, y down)."""
        lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.marks[key] = (lo.x, lo.y, hi.x, hi.y)

    def send(self, request: Request, outcome: Outcome, ok: str, then: Callable | None = None,
             timeout: float = 3.0) -> None:
        """Send ``request`` and report into ``outcome`` (changes refresh the layout)."""
        changes = request.command not in ("status", "state", "list_robots", "list_objects",
                                          "list_targets")
        future = self.link.submit(request.service, request.id, request.text, request.params,
                                  request.data, timeout=timeout, refresh=changes)
        outcome.start(future, ok, then)

    def submit(self, build: Callable[[], Request], outcome: Outcome, ok: str,
               then: Callable | None = None, timeout: float = 3.0) -> None:
        """Check a form with ``build`` and send its request; a FormError shows and sends nothing."""
        try:
            request = build()
        except FormError as exc:
            outcome.fail(str(exc))
            return
        self.send(request, outcome, ok, then, timeout)

    def button(self, label: str, key: str, enabled: bool = True) -> bool:
        """A button that is marked as ``key``; True when clicked."""
        imgui.begin_disabled(not enabled)
        clicked = imgui.button(label)
        imgui.end_disabled()
        self.mark(key)
        self.enabled[key] = enabled
        return clicked

    def field(self, label: str, key: str, value: str, width: float = FIELD_WIDTH) -> str:
        """A one-line text field marked as ``key``; returns its (possibly edited) text."""
        imgui.set_next_item_width(width)
        _, value = imgui.input_text(label, value)
        lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        self.marks[key] = (lo.x, lo.y, lo.x + width, hi.y)  # the box, not its label
        return value

    def fields(self, prefix: str, values: dict[str, str], labels: dict[str, str]) -> None:
        """Text fields for ``values`` (edited in place), one row each, marked ``prefix.key``."""
        for key, label in labels.items():
            values[key] = self.field(f"{label}##{prefix}.{key}", f"{prefix}.{key}", values[key])
