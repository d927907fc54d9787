"""A virtual Xbox 360 pad through the kernel's uinput device (/dev/uinput), with no package:
the legacy ``uinput_user_dev`` set-up written to the device, then ``input_event`` records.
pyglet finds it in /dev/input/event* and maps it with its game-controller database (the
X360 Controller entry: bus 3, vendor 0x045e, product 0x028e, version 0x0110)."""

from __future__ import annotations

import fcntl
import os
import struct

UI_SET_EVBIT, UI_SET_KEYBIT, UI_SET_ABSBIT = 0x40045564, 0x40045565, 0x40045567
UI_DEV_CREATE, UI_DEV_DESTROY = 0x5501, 0x5502
EV_SYN, EV_KEY, EV_ABS = 0, 1, 3
#: xpad's buttons in code order (pyglet numbers them so: BTN_TL is b4, the left shoulder).
BUTTONS = (0x130, 0x131, 0x133, 0x134, 0x136, 0x137, 0x13A, 0x13B, 0x13C, 0x13D, 0x13E)
BTN_TL = 0x136
#: ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_RZ (a0..a5 of the mapping) and the hat.
STICKS, TRIGGERS, HAT = (0, 1, 3, 4), (2, 5), (0x10, 0x11)
FULL = 32767


class VirtualPad:
    """``with VirtualPad() as pad: pad.hold(lefty=1.0, deadman=True)`` (lefty: up +1)."""

    def __enter__(self) -> "VirtualPad":
        self.fd = os.open("/dev/uinput", os.O_WRONLY | os.O_NONBLOCK)
        for ev in (EV_KEY, EV_ABS):
            fcntl.ioctl(self.fd, UI_SET_EVBIT, ev)
        for code in BUTTONS:
            fcntl.ioctl(self.fd, UI_SET_KEYBIT, code)
        absmax, absmin = [0] * 64, [0] * 64
        for code in (*STICKS, *TRIGGERS, *HAT):
            fcntl.ioctl(self.fd, UI_SET_ABSBIT, code)
        for code in STICKS:
            absmin[code], absmax[code] = -FULL - 1, FULL
        for code in TRIGGERS:
            absmax[code] = 255
        for code in HAT:
            absmin[code], absmax[code] = -1, 1
        name = b"coopsim virtual X360 pad".ljust(80, b"\0")
        setup = name + struct.pack("<4HI", 3, 0x045E, 0x028E, 0x0110, 0)
        setup += struct.pack("<64i", *absmax) + struct.pack("<64i", *absmin)
        setup += struct.pack("<128i", *([0] * 128))  # absfuzz, absflat
        os.write(self.fd, setup)
        fcntl.ioctl(self.fd, UI_DEV_CREATE)
        return self

    def _event(self, kind: int, code: int, value: int) -> None:
        os.write(self.fd, struct.pack("llHHi", 0, 0, kind, code, value))

    def hold(self, lefty: float = 0.0, leftx: float = 0.0, deadman: bool = False) -> None:
        """Set the left stick (fractions, y up) and the left shoulder button, then sync."""
        self._event(EV_ABS, 0, int(leftx * FULL))
        self._event(EV_ABS, 1, int(-lefty * FULL))  # evdev's y is down-positive
        self._event(EV_KEY, BTN_TL, int(deadman))
        self._event(EV_SYN, 0, 0)

    def __exit__(self, *exc) -> None:
        fcntl.ioctl(self.fd, UI_DEV_DESTROY)
        os.close(self.fd)
