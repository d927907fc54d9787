"""``leds``: coloured LEDs on the robot (the e-puck's ring, the Kilobot's RGB LED, ARGoS's LEDs).

Up to eight LEDs; a robot uses the first ``count``. Their colours are set over the network
(``set``: one colour for every LED; ``set_each``: a colour per LED, those not given off) and
kept until set again (actions carried out between two steps: the colour shows from the next
step on). A colour is R, G, B, each an integer 0..255; off is 0, 0, 0. Other robots' ``camera``
modules see lit LEDs; the viewer and Foxglove draw them.

Until a controller sets them, the LEDs show the colours of the module's parameters: ``color``
for every LED and ``color0`` .. ``color7`` for one (-1: as ``color``), each packed as below, so
a scenario lights them with ``param leds.color 16711680`` (red) at load, at a reset and when an
event or ``param_set`` changes them; a bad colour is refused at its ``param`` line (exit 2) or
with error 4 and the range. The first ``set`` or ``set_each`` takes over until the next reset.

Each LED's colour is stored and read as one number, ``R * 65536 + G * 256 + B`` (the reading's
``led0`` .. ``led7``, and the streamed and recorded columns of the same names).
"""

from __future__ import annotations

import numpy as np

from ...model.commands import OUT_OF_RANGE, Command
from ...model.compiled import jit
from ...model.errors import ProtocolError
from ...model.kernel import StateField
from ...model.module import Column, Module
from ...model.params import ParamSpec

SLOTS = 8
WHITE = 255 * 65536 + 255 * 256 + 255  # the largest packed colour
SET = SLOTS  # index of the stored command's flag: 1 once a controller set the colours


def pack(r: float, g: float, b: float) -> float:
    """One colour as a number, R * 65536 + G * 256 + B."""
    return float(int(r) * 65536 + int(g) * 256 + int(b))


def unpack(value) -> np.ndarray:
    """(…, 3) R, G, B (0..255) of packed colours ``value``."""
    v = np.asarray(value, dtype=np.int64)
    return np.stack(((v >> 16) & 255, (v >> 8) & 255, v & 255), axis=-1)


def _colours(data, what: str) -> list[float]:
    """Packed colours of R, G, B triplets ``data``; error 4 for what is no colour."""
    if len(data) % 3:
        raise ProtocolError(OUT_OF_RANGE, f"leds {what}: colours come as R, G, B triplets, got "
                                          f"{len(data)} numbers")
    out = []
    for i in range(0, len(data), 3):
        rgb = data[i:i + 3]
        if any(not 0 <= c <= 255 or c != int(c) for c in rgb):
            raise ProtocolError(OUT_OF_RANGE, f"leds {what}: {list(rgb)} is not a colour (R, G, "
                                              "B must be integers in [0, 255]); nothing changed")
        out.append(pack(*rgb))
    return out


@jit()
def leds_actuate(views, rows, params, state, commands, out, drive):
    """``leds``: the colours robots ``rows`` show this step (packed; a controller's once its
    stored command's ``set`` flag is 1, else the parameters' ``color<i>``, -1 taking
    ``color``; LEDs from ``count`` on off) into ``out`` (n, 9: the colours, the flag) and the
    state's ``shown`` (N, 8). params: count, color, color0 .. color7."""
    shown, seen = state
    for k in range(len(rows)):
        i = rows[k]
        count = params[k, 0]
        for j in range(SLOTS):
            if commands[k, SET] > 0:
                c = commands[k, j]
            else:
                c = params[k, 2 + j] if params[k, 2 + j] >= 0 else params[k, 1]
            c = c if j < count else 0.0
            out[k, j] = c
            shown[i, j] = c
        out[k, SET] = commands[k, SET]
        seen[i] = True


@jit()
def leds_sense(views, rows, params, state, normals, uniforms, prev, out):
    """``leds``: the colours shown this step (the state's ``shown``); before a robot's first
    step, the parameters' (``count``, ``color``, ``color<i>``)."""
    shown, seen = state
    for k in range(len(rows)):
        i = rows[k]
        for j in range(SLOTS):
            if seen[i]:
                out[k, j] = shown[i, j]
            elif j < params[k, 0]:
                out[k, j] = params[k, 2 + j] if params[k, 2 + j] >= 0 else params[k, 1]
            else:
                out[k, j] = 0.0


class Leds(Module):
    """Up to eight coloured LEDs whose colours a controller sets.

    Reading: 8 colours, each ``R · 65536 + G · 256 + B`` (0 = off); LEDs past ``count`` stay
    off. Set as actions (between two steps); streamed and recorded as columns
    ``led0``..``led7``; the viewer and Foxglove draw them as a ring of dots. Until a
    controller's first ``set``/``set_each`` (and again after a reset) they show the parameters'
    colours: ``param leds.color 16711680`` lights every LED red at load, ``param leds.color2
    255`` LED 2 blue; a bad colour is refused at its ``param`` line (``file:line: parameter
    color = 16777216 is out of range [0, 16777215]``, exit 2) or over the network
    (``param_set``: error 4 with the range).
    """

    label = "leds"
    description = "coloured LEDs: set every LED's colour or each one's (R, G, B 0..255); read back"
    params = (ParamSpec("count", "int", "LEDs in use (the first count; the others stay off)",
                        SLOTS, 1, SLOTS),
              ParamSpec("color", "int", "every LED's colour until a controller sets them, "
                        "R * 65536 + G * 256 + B (0 = off)", 0, 0, WHITE)) + tuple(
        ParamSpec(f"color{i}", "int", f"LED {i}'s colour until a controller sets them, "
                  "R * 65536 + G * 256 + B (-1: as color)", -1, -1, WHITE) for i in range(SLOTS))
    commands = (
        Command(2400, "set", "leds", data=(3, 3), kind="action",
                doc="R, G, B (0..255) for every LED"),
        Command(2401, "set_each", "leds", data=(3, 3 * SLOTS), kind="action",
                doc="R, G, B per LED from LED 0 on; LEDs not given are switched off"),
        Command(2402, "read", "leds", kind="read",
                doc="8 colours, each R * 65536 + G * 256 + B (0 = off)"),
    )
    fields = tuple(f"led{i}" for i in range(SLOTS))
    command_fields = tuple(f"led{i}" for i in range(SLOTS)) + ("set",)
    columns = tuple(Column(f"led{i}", 1.0, 1, i, stream=True) for i in range(SLOTS))
    draw = {"kind": "leds", "columns": [f"led{i}" for i in range(SLOTS)]}

    @classmethod
    def act(cls, command, sim, robot, msg):
        row = cls.colours_row(command, tuple(msg.data), sim.world.robot(robot).modules["leds"])
        sim.commands["leds"][sim.robots.index[robot]] = row
        return f"{sum(1 for c in row[:SLOTS] if c)} LEDs lit"

    @classmethod
    def colours_row(cls, command, data, params) -> tuple[float, ...]:
        """The stored colours (8) a ``set`` or ``set_each`` asks for; error 4 for what is no
        colour or more colours than LEDs."""
        count = int(params["count"])
        if command.name == "set":
            return tuple(_colours(data, "set") * count + [0.0] * (SLOTS - count) + [1.0])
        colours = _colours(data, "set_each")
        if len(colours) > count:
            raise ProtocolError(OUT_OF_RANGE, f"leds set_each: {len(colours)} colours for "
                                              f"{count} LEDs (leds.count); nothing changed")
        return tuple(colours + [0.0] * (SLOTS - len(colours)) + [1.0])

    # The colours shown this step, kept in the state (``shown``, packed; ``seen`` once shown)
    # for the reading and for other robots' cameras: one compiled call each (leds_actuate,
    # leds_sense)
    state_fields = (StateField("shown", (SLOTS,)),)
    kernel_views = ()
    kernel_actuate = leds_actuate
    kernel_sense = leds_sense
    kernel_rowwise = True
