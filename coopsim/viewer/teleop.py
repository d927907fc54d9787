"""Driving a robot from the viewer: ``T`` takes the robot picked (the one selected, else the
one under the pointer, else the only one) and gives it back; while driving, the keys of ROS's
teleop_twist_keyboard (docs/in-the-loop.md) and a gamepad (viewer/teleoppad.py) drive it.

The control sits on the window's event stack (``window.push_handlers``), above the window's
own handlers: while driving it takes its keys (u i o j k l m , . with Shift for sideways,
PageUp/PageDown for up/down, q/z w/x e/c for the speeds) and lets the others through. Keys are
a dead-man: the intent is the sum of the keys held now, and nothing moves once they are let
go. The session (coopsim.client.teleop) runs on its own thread, so the window never waits on
the network; its robot is given back when driving ends (``T``, Escape, the window closing).
"""

from __future__ import annotations

import math
import threading

from imgui_bundle import imgui
from pyglet.event import EVENT_HANDLED
from pyglet.window import key

from ..client import Client
from ..client.teleop import Teleop, TeleopThread
from ..model.errors import CoopsimError
from ..model.teleop import SPEED_KEYS, STILL, Intent, Speeds, held_intent
from .teleoppad import Gamepad

#: pyglet key symbol -> teleop_twist_keyboard's character (Shift gives the upper row's).
_CHARS = {key.U: "u", key.I: "i", key.O: "o", key.J: "j", key.K: "k", key.L: "l",
          key.M: "m", key.COMMA: ",", key.PERIOD: ".", key.Q: "q", key.Z: "z", key.W: "w",
          key.X: "x", key.E: "e", key.C: "c"}
_SHIFTED = {",": "<", ".": ">"}
_UPDOWN = {key.PAGEUP: Intent(up=1.0), key.PAGEDOWN: Intent(up=-1.0)}
PICK_REACH = 3.0  # robot radii from its centre that a pointer still picks it within
HUD_COLOR = (1.0, 0.85, 0.3, 1.0)


def _char(symbol: int, modifiers: int) -> str:
    char = _CHARS.get(symbol, "")
    if char and modifiers & key.MOD_SHIFT:
        return _SHIFTED.get(char, char.upper())
    return char


class TeleopControl:
    """The viewer's teleop: key handlers (pushed on the window), the session, its HUD line.

    Args:
        window: The :class:`~coopsim.viewer.app.Viewer` (its link, camera, scene, notice).
    """

    def __init__(self, window) -> None:
        self.window = window
        self.robot = ""  # the robot being driven ("" when none)
        self.driver: TeleopThread | None = None
        self.speeds = Speeds()
        self.pointer = (0.0, 0.0)  # px, the latest mouse position
        self.pad = Gamepad()
        self._held: dict[int, str] = {}  # key symbol -> its character when pressed
        self._client: Client | None = None
        self._lock = threading.Lock()

    # -- picking and driving ------------------------------------------------------------------

    def pick(self) -> str:
        """The robot T drives: the window's selection (``selected``, when the view has one),
        else the one under the pointer, else the only robot; "" when none fits."""
        layout = self.window.link.layout or {}
        names = [r["name"] for r in layout.get("robots", [])]
        chosen = getattr(self.window, "selected", None)
        if chosen in names:
            return chosen
        frame = self.window.link.frame
        if frame is not None and len(frame.robots) == len(names):
            px, py = self.window.camera.to_world(*self.pointer)
            best, reach = "", math.inf
            for entry, (x, y, _) in zip(layout["robots"], frame.robots):
                d = math.hypot(x - px, y - py) / max(float(entry.get("radius", 0.2)), 0.05)
                if d <= PICK_REACH and d < reach:
                    best, reach = entry["name"], d
            if best:
                return best
        return names[0] if len(names) == 1 else ""

    def toggle(self) -> None:
        """T: give the robot back when driving, else take the one :meth:`pick` picks."""
        if self.robot:
            self.stop()
            return
        notice = self.window.notice
        if self.window.link.playback is not None:
            notice.fail("a replay cannot be driven: T drives robots of a live run")
            return
        name = self.pick()
        if not name:
            notice.fail("T drives a robot: point at one (or select it) first")
            return
        self.robot, self._held = name, {}
        notice.text, notice.error = f"taking {name} for teleop...", False
        threading.Thread(target=self._open, args=(name,), name="teleop-open",
                         daemon=True).start()

    def _open(self, name: str) -> None:
        """Connect, take the robot and start sending (on its own thread: it talks)."""
        notice = self.window.notice
        try:
            client = Client(self.window.link.nameserver, timeout=3.0, keys=self.window.live_keys)
            driver = TeleopThread(Teleop(client, name, self.speeds))
            said = driver.teleop.take()
            driver.start(take=False)
        except CoopsimError as exc:
            self.robot = ""
            notice.fail(f"cannot drive {name}: {getattr(exc, 'text', exc)}")
            return
        with self._lock:
            if self.robot != name:  # released while connecting
                driver.stop()
                client.close()
                return
            self.driver, self._client = driver, client
        notice.text, notice.error = f"driving {name} ({driver.teleop.kind}): {said}", False
        self.update()

    def stop(self) -> None:
        """Stop driving and give the robot back."""
        with self._lock:
            driver, client, name = self.driver, self._client, self.robot
            self.driver, self._client, self.robot, self._held = None, None, "", {}
        if driver is not None:
            driver.stop()
            back = driver.teleop.taken_from
            self.window.notice.text = f"gave {name} back" + (f" to {back}" if back else "")
            self.window.notice.error = False
        if client is not None:
            client.close()
        self.pad.close()

    def intent(self) -> Intent:
        """What the keys and the gamepad held now ask (the gamepad's wins when it is held)."""
        pad = self.pad.intent()
        if not pad.still:
            return pad
        keys = held_intent(self._held.values())
        for symbol, extra in _UPDOWN.items():
            if symbol in self._held:
                keys = Intent(keys.forward, keys.left, max(-1.0, min(1.0, keys.up + extra.up)),
                              keys.turn)
        return keys

    def update(self) -> None:
        """Hand the current intent to the session (it sends at once when it changed)."""
        driver = self.driver
        if driver is None:
            return
        if not driver.alive:  # taken by an operator, or the run ended
            error = driver.error
            self.stop()
            if error:
                self.window.notice.fail(f"driving stopped: {error}")
            return
        driver.set(self.intent(), self.speeds)

    # -- pyglet's event handlers (pushed on the window: first to see each event) ---------------

    def on_key_press(self, symbol, modifiers):
        if imgui.get_io().want_capture_keyboard:
            return None  # typing into a field
        if symbol == key.T:
            self.toggle()
            return EVENT_HANDLED
        if not self.robot:
            return None
        if symbol == key.ESCAPE:
            self.stop()
            return EVENT_HANDLED
        char = _char(symbol, modifiers)
        if char in SPEED_KEYS:
            self.speeds = self.speeds.scaled(char)
        elif char or symbol in _UPDOWN:
            self._held[symbol] = char
        else:
            return None
        self.update()
        return EVENT_HANDLED

    def on_key_release(self, symbol, modifiers):
        if self._held.pop(symbol, None) is None:
            return None
        self.update()
        return EVENT_HANDLED

    def on_mouse_motion(self, x, y, dx, dy):
        self.pointer = (x, y)

    def on_deactivate(self):
        self._held = {}  # keys let go while the window was not looking: nothing held
        self.update()

    # -- each frame ------------------------------------------------------------------------------

    def tick(self) -> None:
        """Poll the gamepad and notice a session that ended (called every frame; while
        driving the window draws its fast frames, so the pad is read 30 times a second)."""
        if self.robot:
            self.window._poke()
            self.pad.poll()
            self.update()

    def draw(self, top: float) -> None:
        """The HUD line while driving: the robot, its drive, the speeds, how to let go."""
        if not self.robot:
            return
        kind = self.driver.teleop.kind if self.driver is not None else "connecting"
        moving = "" if self.intent() == STILL else "  MOVING"
        imgui.set_next_window_pos((10.0, top + 40.0))
        flags = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.always_auto_resize |
                 imgui.WindowFlags_.no_inputs | imgui.WindowFlags_.no_saved_settings |
                 imgui.WindowFlags_.no_focus_on_appearing)
        imgui.begin("##teleop", None, flags)
        imgui.text_colored(HUD_COLOR, f"teleop {self.robot} ({kind}): "
                                      f"{self.speeds.linear:.2g} m/s, "
                                      f"{self.speeds.angular:.2g} rad/s{moving}")
        imgui.text(f"hold u i o j k l m , . (Shift: sideways; PgUp/PgDn up/down); "
                   f"{self.pad.describe()}; T gives it back")
        imgui.end()
