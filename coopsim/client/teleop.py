"""Driving one robot by hand over the network: the session the viewer's ``T`` and ``coopsim
teleop ROBOT`` both use (docs/in-the-loop.md, *Teleoperation*).

A :class:`Teleop` takes the robot with a *teleop claim* (command 4, params ``[2]``): the
connection owns it while the person drives; the controller it displaced gets error 13 meanwhile
and has it back, without a claim, on :meth:`Teleop.close` (a release), when this connection
closes, or when it stays silent for the lease. Each :meth:`Teleop.apply` turns an
:class:`~coopsim.model.teleop.Intent` into the robot's own motion command:

- ``motors`` (differential drive): wheel speeds for the forward speed and turn rate, from the
  layout's ``axle``; ``left`` and ``up`` are ignored;
- ``velocity`` (holonomic): the body velocity turned into the world frame by the compass;
- ``rotors`` (quadrotors, with ``mocap``): velocity and altitude through the flight cascade,
  the outer loop here (:mod:`coopsim.client.teleopfly`), the attitude and rate loops in the
  module (``set_thrust_attitude``); still, it hovers where it is;
- ``tool`` (arms): the tool point jogged in the world frame (forward = +x, left = +y, up = +z)
  with ``move_to``; still, the joints stop.

:class:`TeleopThread` sends the intent at once when it changes (a key's change reaches the
robot's motion command by the next step: ``benchmarks/suite/teleop.py``) and again every
``period`` s (it keeps the lease; a quadrotor's loop runs at that rate).
"""

from __future__ import annotations

import math
import threading

from ..model.errors import ProtocolError
from ..model.teleop import STILL, Intent, Speeds
from .teleopfly import Hover

TELEOP_CLAIM = 2  # claim params [2]: take for teleop, give back on release (protocol 10)
PERIOD = 0.05  # s between two sends of an unchanged intent (20 Hz)
ARM_SPEED = 0.1  # m/s: the most an arm's tool is jogged at, whatever the linear speed
KINDS = ("motors", "velocity", "rotors", "tool")  # the motion modules driven, first wins


def drive_kind(modules) -> str:
    """Which of :data:`KINDS` a robot with these modules is driven by ("" when none)."""
    if "rotors" in modules and "mocap" not in modules:
        modules = [m for m in modules if m != "rotors"]  # no position to close the loop on
    return next((k for k in KINDS if k in modules), "")


class Teleop:
    """A person driving one robot.

    Args:
        client: A :class:`~coopsim.client.Client` (its sockets are used from one thread).
        name: The robot's network name.
        speeds: Top speeds the intents are fractions of.

    Raises:
        ProtocolError: no such robot (5), or it has nothing teleop can drive (6).
    """

    def __init__(self, client, name: str, speeds: Speeds = Speeds()) -> None:
        self.client, self.name, self.speeds = client, name, speeds
        state = client.sim().state()
        entry = next((r for r in state.get("robots", []) if r.get("name") == name), None)
        if entry is None:
            raise ProtocolError(5, f"there is no robot {name!r} to drive")
        self.kind = drive_kind(entry.get("modules", ()))
        if not self.kind:
            raise ProtocolError(6, f"{name} ({entry.get('type')}) has no module teleop drives "
                                   f"(one of {', '.join(KINDS)}; quadrotors need mocap)")
        self.axle = float(entry.get("axle") or 2.0 * float(entry.get("radius", 0.1)))
        self.robot = client.robot(name)
        self.dt = float(client.sim().status().get("dt", 0.01))
        self.hover = Hover(self.robot, self.dt) if self.kind == "rotors" else None
        self.taken_from = ""
        self.last: Intent = STILL

    def take(self) -> str:
        """Claim the robot for teleop; return the server's sentence (it names the owner it
        was taken from, if any)."""
        reply = self.robot.call(4, params=(TELEOP_CLAIM,))
        if reply.params and reply.params[0]:
            self.taken_from = reply.text.partition("(taken from ")[2].rstrip(")")
        return reply.text

    def apply(self, intent: Intent) -> None:
        """Send the robot's motion command for ``intent`` (at the current speeds)."""
        self.last = intent
        getattr(self, f"_{self.kind}")(intent)

    def _motors(self, i: Intent) -> None:
        v, w = i.forward * self.speeds.linear, i.turn * self.speeds.angular
        if i.still:
            self.robot.motors.stop()
            return
        self.robot.motors.set_speeds(v - w * self.axle / 2.0, v + w * self.axle / 2.0)

    def _velocity(self, i: Intent) -> None:
        if i.still:
            self.robot.velocity.stop()
            return
        yaw = self.robot.compass.read()[0]
        f, lft = i.forward * self.speeds.linear, i.left * self.speeds.linear
        c, s = math.cos(yaw), math.sin(yaw)
        self.robot.velocity.set_velocity(f * c - lft * s, f * s + lft * c,
                                         i.turn * self.speeds.angular)

    def _rotors(self, i: Intent) -> None:
        self.hover.fly(i, self.speeds)

    def _tool(self, i: Intent) -> None:
        if i.still:
            if "joints" in self.robot.module_labels:
                self.robot.joints.stop()
            return
        x, y, z = self.robot.tool.read()[:3]
        step = min(self.speeds.linear, ARM_SPEED) * PERIOD * 2.0  # ahead of the next send
        self.robot.tool.move_to(x + i.forward * step, y + i.left * step, z + i.up * step, 0.3)

    def close(self) -> None:
        """Stop the robot (a quadrotor hovers: its controller gets it back flying) and give
        it back (release: the displaced controller owns it again)."""
        try:
            if self.kind != "rotors":
                self.apply(STILL)
            self.robot.release()
        except ProtocolError:
            pass  # the run is gone, or an operator took the robot: nothing to give back


class TeleopThread:
    """Sends a :class:`Teleop`'s intent from its own thread (the viewer's window thread and a
    terminal's key loop never wait on the network).

    Args:
        teleop: The session (it is used from this thread only once started).
        period: s between two sends of an unchanged intent.
    """

    def __init__(self, teleop: Teleop, period: float = PERIOD) -> None:
        self.teleop, self.period = teleop, period
        self.error = ""  # the sentence that ended driving (another took the robot ...)
        self.sent = 0  # motion commands sent
        self._intent, self._changed = STILL, False
        self._cond = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name=f"teleop-{teleop.name}",
                                        daemon=True)

    def start(self, take: bool = True) -> "TeleopThread":
        """Take the robot (unless the caller did: ``take`` False) and start sending."""
        if take:
            self.teleop.take()
        self._thread.start()
        return self

    def set(self, intent: Intent, speeds: Speeds | None = None) -> None:
        """Drive at ``intent`` from now on (sent at once when it changed)."""
        with self._cond:
            if speeds is not None:
                self.teleop.speeds = speeds
            if intent != self._intent or speeds is not None:
                self._intent, self._changed = intent, True
                self._cond.notify()

    def stop(self) -> None:
        """Stop sending, stop the robot and give it back."""
        with self._cond:
            self._stop = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(5.0)

    @property
    def alive(self) -> bool:
        """True while driving (False once stopped or after an error)."""
        return self._thread.is_alive()

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    if not self._changed and not self._stop:
                        self._cond.wait(self.period)
                    if self._stop:
                        break
                    intent, self._changed = self._intent, False
                self.teleop.apply(intent)
                self.sent += 1
        except ProtocolError as exc:
            self.error = exc.text  # taken by an operator, the run ended ...
        finally:
            self.teleop.close()
