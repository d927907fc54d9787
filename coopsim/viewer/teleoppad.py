"""A gamepad or joystick for teleop, through pyglet's input devices (``pyglet.input``).

The first controller pyglet finds (a gamepad with a game-controller mapping: Xbox,
PlayStation, most USB pads) is opened when driving starts and polled every frame; a plain
joystick (no mapping) is read as one: its x/y axes as the left stick, z/rz as the right, its
first button as the dead-man. The mapping (docs/in-the-loop.md) is
:func:`coopsim.model.teleop.pad_intent`'s: hold the left shoulder button (the dead-man), the
left stick drives forward/back and turns, the right stick moves sideways and up/down.
"""

from __future__ import annotations

import logging

from ..model.teleop import STILL, Intent, pad_intent

log = logging.getLogger(__name__)


class Gamepad:
    """The gamepad teleop reads (none until :meth:`poll` finds one)."""

    def __init__(self) -> None:
        self.device = None
        self.name = ""
        self._looked = False
        self._intent = STILL

    def _find(self) -> None:
        """Open the first controller, else the first joystick (once per driving)."""
        self._looked = True
        try:
            import pyglet.input

            found = pyglet.input.get_controllers() or pyglet.input.get_joysticks()
        except Exception as exc:  # noqa: BLE001 -- no input backend: keyboard only
            log.info("teleop: no gamepad: %s", exc)
            return
        if not found:
            return
        device = found[0]
        try:
            device.open()
        except Exception as exc:  # noqa: BLE001 -- busy or gone: keyboard only
            log.info("teleop: cannot open %s: %s", device, exc)
            return
        self.device = device
        self.name = getattr(device, "name", "") or getattr(getattr(device, "device", None),
                                                           "name", "gamepad")

    def poll(self) -> Intent:
        """Read the sticks and the dead-man now (pyglet fills them as its events arrive)."""
        if self.device is None and not self._looked:
            self._find()
        d = self.device
        if d is None:
            return STILL
        if hasattr(d, "leftshoulder"):  # a controller: its analog vectors are y up
            left, right = d.left_analog, d.right_analog
            self._intent = pad_intent(left.x, left.y, right.x, right.y, bool(d.leftshoulder))
        else:  # a joystick: y is down-positive in pyglet's joystick axes
            buttons = getattr(d, "buttons", []) or [False]
            self._intent = pad_intent(d.x, -d.y, getattr(d, "z", 0.0), -getattr(d, "rz", 0.0),
                                      bool(buttons[0]))
        return self._intent

    def intent(self) -> Intent:
        """The intent of the latest poll."""
        return self._intent

    def describe(self) -> str:
        """The HUD's words for it."""
        return f"gamepad {self.name}: hold LB" if self.device is not None else "no gamepad"

    def close(self) -> None:
        """Let the device go (driving ended); the next driving looks again."""
        if self.device is not None:
            try:
                self.device.close()
            except Exception:  # noqa: BLE001 -- unplugged meanwhile
                pass
        self.device, self.name, self._looked, self._intent = None, "", False, STILL
