"""Driving one robot by hand over the network: the session the viewer's ``T`` and ``coopsim
teleop ROBOT`` both use (docs/in-the-loop.md, *Teleoperation*).

A :class:`Teleop` takes the robot with a *teleop claim* (command 4, params ``[2]``): the
connection owns it while the person drives; the controller it displaced gets error 13 meanwhile
and has it back, without a claim, on :meth:`Teleop.close` (a release), when this connection
closes, or when it stays silent for the lease. Each :meth:`Teleop.apply` turns an
:class:`~coopsim.model.teleop.Intent` into the robot's own motion command:

- *wheels* (a ``set_speeds`` of two wheel speeds: differential drives): the wheel speeds of
  the forward speed and turn rate, from the layout's ``axle``; ``left`` and ``up`` ignored;
- *planar* (a ``set_velocity`` of vx, vy, yaw rate: holonomic robots): the body velocity turned
  into the world frame by the robot's heading (``/sim`` list_robots);
- *flyer* (a ``set_thrust_attitude``, with a ``mocap`` reading: quadrotors): velocity and
  altitude through the flight cascade, the outer loop here (:mod:`coopsim.client.teleopfly`),
  the attitude and rate loops in the module; still, it hovers where it is;
- *jog* (a ``move_to`` action: arms): the tool point jogged in the world frame (forward = +x,
  left = +y, up = +z); still, every ``stop`` the robot lists (the joints stop).

The drive is found by the commands the robot lists (command 3), never by module labels, so
a plugin's module with the same commands is driven the same way.

:class:`TeleopThread` sends the intent at once when it changes (a key's change reaches the
robot's motion command by the next step: ``benchmarks/suite/teleop.py``) and again every
``period`` s (it keeps the lease; a quadrotor's loop runs at that rate).
"""

from __future__ import annotations

import math
import sys
import threading

from ..model.commands import TELEOPERATED
from ..model.errors import ProtocolError
from ..model.teleop import STILL, Intent, Speeds
from .teleopfly import Hover

TELEOP_CLAIM = 2  # claim params [2]: take for teleop, give back on release (protocol 10)
PERIOD = 0.05  # s between two sends of an unchanged intent (20 Hz)
ARM_SPEED = 0.1  # m/s: the most an arm's tool is jogged at, whatever the linear speed
#: What teleop drives, first found wins: a drive kind and the command it is found by (the
#: robot's own listing, command 3: a motion command's name and its data count, or an action).
DRIVES = (("wheels", "set_speeds", 2), ("planar", "set_velocity", 3),
          ("flyer", "set_thrust_attitude", 4), ("jog", "move_to", 3))
RELEASE_STEER = 6  # /squads command 6 release: text the squad (protocol 12)
STEER = 4  # /squads command 4 steer: text the squad, data [vx, vy, vz, yaw_rate] (protocol 10)
PERSON_STEER = 2  # steer params [2]: a person's, as a teleop claim (protocol 14)
POSE_MODULE = "mocap"  # the pose a flyer's outer loop closes on (the flight cascade's input)


def find_drive(robot) -> tuple[str, str]:
    """(drive kind, the module carrying its command) of a :class:`~coopsim.client.robot.Robot`
    by the commands it lists; ("", "") when teleop drives none of them."""
    for kind, name, count in DRIVES:
        for label in robot.module_labels:
            command = getattr(robot, label).commands().get(name)
            if command is None or command.data[0] > count or command.data[1] < count:
                continue
            if kind == "flyer" and POSE_MODULE not in robot.module_labels:
                continue  # no position to close the loop on
            return kind, label
    return "", ""


class Teleop:
    """A person driving one robot.

    Args:
        client: A :class:`~coopsim.client.Client` (its sockets are used from one thread).
        name: The robot's network name.
        speeds: Top speeds the intents are fractions of.
        dead_man: The server stops the robot after this many s without a command from this
            session (protocol 12: claim data; None: the server's default, 0.5 s).

    Raises:
        ProtocolError: no such robot (5), or it has nothing teleop can drive (6).
    """

    def __init__(self, client, name: str, speeds: Speeds = Speeds(),
                 dead_man: float | None = None) -> None:
        self.client, self.name, self.speeds = client, name, speeds
        self.dead_man = dead_man
        self.sim = client.sim()
        entry = next((r for r in self.sim.state().get("robots", []) if r.get("name") == name),
                     None)
        if entry is None:
            raise ProtocolError(5, f"there is no robot {name!r} to drive")
        self.robot = client.robot(name)
        self.kind, self.module = find_drive(self.robot)
        if not self.kind:
            raise ProtocolError(6, f"{name} ({entry.get('type')}) has no command teleop drives "
                                   f"({', '.join(d[1] for d in DRIVES)}; a flyer needs "
                                   f"{POSE_MODULE} too)")
        self.axle = float(entry.get("axle") or 2.0 * float(entry.get("radius", 0.1)))
        self.dt = float(self.sim.status().get("dt", 0.01))
        self.drive = getattr(self.robot, self.module)
        self.hover = Hover(self.robot, self.module, POSE_MODULE, self.dt) \
            if self.kind == "flyer" else None
        self.taken_from = ""
        self.last: Intent = STILL

    def take(self) -> str:
        """Claim the robot for teleop; return the server's sentence (it names the owner it
        was taken from, if any)."""
        data = () if self.dead_man is None else (self.dead_man,)
        reply = self.robot.call(4, params=(TELEOP_CLAIM,), data=data)
        if reply.params and reply.params[0]:
            self.taken_from = reply.text.partition("(taken from ")[2].rstrip(")")
        return reply.text

    def apply(self, intent: Intent) -> None:
        """Send the robot's motion command for ``intent`` (at the current speeds)."""
        self.last = intent
        getattr(self, f"_{self.kind}")(intent)

    def halt(self) -> None:
        """Every motion command named ``stop`` the robot lists (wheels, joints ...)."""
        for label in self.robot.module_labels:
            proxy = getattr(self.robot, label)
            if "stop" in proxy.commands() and proxy.commands()["stop"].kind == "motion":
                proxy.stop()

    def _wheels(self, i: Intent) -> None:
        v, w = i.forward * self.speeds.linear, i.turn * self.speeds.angular
        if i.still:
            self.drive.stop()
            return
        self.drive.set_speeds(v - w * self.axle / 2.0, v + w * self.axle / 2.0)

    def _planar(self, i: Intent) -> None:
        if i.still:
            self.drive.stop()
            return
        yaw = self.sim.list_robots()[self.name][2]  # the heading: body to world
        f, lft = i.forward * self.speeds.linear, i.left * self.speeds.linear
        c, s = math.cos(yaw), math.sin(yaw)
        self.drive.set_velocity(f * c - lft * s, f * s + lft * c, i.turn * self.speeds.angular)

    def _flyer(self, i: Intent) -> None:
        self.hover.fly(i, self.speeds)

    def _jog(self, i: Intent) -> None:
        if i.still:
            self.halt()
            return
        x, y, z = self.drive.read()[:3]
        step = min(self.speeds.linear, ARM_SPEED) * PERIOD * 2.0  # ahead of the next send
        self.drive.move_to(x + i.forward * step, y + i.left * step, z + i.up * step, 0.3)

    def close(self) -> None:
        """Stop the robot (a flyer hovers: its controller gets it back flying) and give it
        back (release: the displaced controller owns it again)."""
        try:
            if self.kind != "flyer":
                self.apply(STILL)
            self.robot.release()
        except ProtocolError:
            pass  # the run is gone, or an operator took the robot: nothing to give back


class GroupTeleop:
    """A person steering a squad under shared control (docs/in-the-loop.md, *Steering a
    group*): an intent becomes the squad's velocity set point, ``/squads`` command 4 ``steer``
    (world frame: forward +x, left +y, up +z, m/s; turn, rad/s); the robots keep formation
    and avoid obstacles themselves. Duck-typed as :class:`Teleop` for :class:`TeleopThread`.

    Args:
        client: A :class:`~coopsim.client.Client`.
        squad: The squad's name.
        speeds: Top speeds the intents are fractions of.
    """

    kind = "group"

    def __init__(self, client, squad: str, speeds: Speeds = Speeds()) -> None:
        self.client, self.name, self.speeds = client, squad, speeds
        self.endpoint = client.lookup("/squads", "rep")
        self.last: Intent = STILL
        self.taken_from = ""  # the connection steering the squad before this person took it
        self._told = False  # the sentence of a steer refused with error 13 was printed

    def take(self) -> str:
        """Steer it still once, as a person (the server says at once when the squad is not
        steerable); return a sentence naming the connection it was taken from, if any."""
        reply = self._steer(STILL)
        if reply is not None and "(taken from " in reply.text:
            self.taken_from = reply.text.partition("(taken from ")[2].rstrip(")")
            return f"steering squad {self.name} (taken from {self.taken_from})"
        return f"steering squad {self.name}"

    def apply(self, intent: Intent) -> None:
        """Send the squad's velocity for ``intent``."""
        self._steer(intent)

    def _steer(self, intent: Intent):
        """A person's steer (``/squads`` 4, params ``[2]``, protocol 14): it takes the squad
        from the connection steering it. Another person took it from this one (error 13):
        the sentence once on stderr, and the next send tries again (given back when that
        person lets go); the reply, or None while refused."""
        self.last = intent
        v, w = self.speeds.linear, self.speeds.angular
        try:
            reply = self.client.request(self.endpoint, STEER, self.name, (PERSON_STEER,),
                                        (intent.forward * v, intent.left * v, intent.up * v,
                                         intent.turn * w))
        except ProtocolError as exc:
            if exc.code != TELEOPERATED:
                raise
            if not self._told:
                print(f"coopsim: {exc.text}; waiting", file=sys.stderr, flush=True)
                self._told = True
            return None
        self._told = False
        return reply

    def close(self) -> None:
        """Steer it still (it holds there: its formation and obstacle laws go on) and give its
        steering up (protocol 12: another connection may steer it now; the one this person
        took it from has it back)."""
        try:
            self.apply(STILL)
            self.client.request(self.endpoint, RELEASE_STEER, self.name)
        except ProtocolError:
            pass  # the run is gone, or a server before protocol 12 (no release: error 2)


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
