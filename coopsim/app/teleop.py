"""``coopsim teleop ROBOT``: drive a robot from a terminal with teleop_twist_keyboard's keys.

The terminal is put in raw mode (every key arrives at once, none echoed) and restored on the
way out, whatever ends it. A key's move lasts while the key repeats and drops
:data:`~coopsim.model.teleop.TERMINAL_HOLD` s after the last one (the dead-man); Ctrl+C or
Ctrl+D releases the robot and ends the command (its displaced controller has it back).
"""

from __future__ import annotations

import os
import select
import sys
import time

import click

from ..model.errors import CoopsimError
from ..model.teleop import Speeds, TerminalKeys

HELP = """Driving {robot} ({kind}) with coopsim teleop: hold a key (teleop_twist_keyboard's)
---------------------------
Moving around:        Holonomic (with Shift):    Up/down:
   u    i    o           U    I    O               t : up (+z)
   j    k    l           J    K    L               b : down (-z)
   m    ,    .           M    <    >
k or any other key: stop; nothing is held for {hold:g} s after a key: stop
q/z : increase/decrease max speeds by 10%
w/x : increase/decrease only linear speed by 10%
e/c : increase/decrease only angular speed by 10%
Ctrl+C or Ctrl+D: give the robot back and quit
"""


def teleop_command(robot: str | None, nameserver: str | None, speed: float, turn: float,
                   group: str | None = None, dead_man: float | None = None) -> None:
    """Drive ``robot`` (or steer squad ``group``) from this terminal until Ctrl+C/Ctrl+D;
    exit 2 when driving stopped because the robot was taken or the run ended. ``dead_man``:
    the server's deadline for this terminal's silence, s (None: the server's 0.5 s)."""
    from ..client import Client
    from ..client.teleop import GroupTeleop, Teleop, TeleopThread

    if (robot is None) == (group is None):
        raise CoopsimError("coopsim teleop drives one robot (ROBOT) or steers one squad "
                           "(--group SQUAD): name one of them")

    fd = sys.stdin.fileno()
    if not os.isatty(fd):
        raise CoopsimError("coopsim teleop reads keys from a terminal; stdin is not one")
    keys = TerminalKeys(Speeds(speed, turn))
    with Client(nameserver, timeout=3.0) as client:
        session = Teleop(client, robot, keys.speeds, dead_man) if group is None else \
            GroupTeleop(client, group, keys.speeds)
        robot = robot or f"squad {group}"
        driver = TeleopThread(session)
        said = driver.teleop.take()
        out = sys.stderr
        out.write(HELP.format(robot=robot, kind=session.kind, hold=keys.hold))
        out.write(f"{said}\n")
        out.flush()
        driver.start(take=False)  # taken above, to say by whom before the terminal goes raw
        try:
            _key_loop(fd, keys, driver, out)
        finally:
            driver.stop()
    back = f"; {session.taken_from} has it back" if session.taken_from else ""
    click.echo(f"released {robot}{back} ({driver.sent} commands sent)", err=True)
    if driver.error:
        raise CoopsimError(f"driving {robot} stopped: {driver.error}")


def _key_loop(fd: int, keys: TerminalKeys, driver, out) -> None:
    """Read keys in raw mode until a quit key or the driver's end; the terminal is restored."""
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    shown = None
    try:
        while driver.alive:
            ready = select.select([fd], [], [], 0.05)[0]
            now = time.monotonic()
            if ready:
                chunk = os.read(fd, 32).decode("utf-8", "replace")
                if not chunk or not all(keys.press(k, now) for k in chunk):
                    return
            driver.set(keys.intent(now), keys.speeds)
            if keys.speeds != shown:
                shown = keys.speeds
                out.write(f"currently:\tspeed {shown.linear:.3g}\tturn {shown.angular:.3g}\r\n")
                out.flush()
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
