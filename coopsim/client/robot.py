"""A robot on the network: its modules as attributes, each module's commands as methods.

The attributes are built from the robot's own answer to command 3 (``commands``), so the client
needs no table of ids: ``bot.motors.set_speeds(0.3, 0.3)`` sends whatever id the robot declares
for ``motors.set_speeds``. What a method returns depends on the command's kind: a ``read``
returns a :class:`~coopsim.model.driver.Reading` (a list of floats with ``text`` and ``step``),
a ``motion`` a :class:`~coopsim.model.driver.StepInfo`, an ``action`` its reply text.

:meth:`Robot.loop` also watches that the simulation is still there, so a controller does not
outlive it: when ``$COOPSIM_SIM_PID`` (set for the controllers a run launches) names a process
that is gone, or :data:`MAX_TIMEOUTS` requests in a row timed out and the name server does not
answer either, the loop ends the program with one line saying so.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from typing import Iterator, Sequence

from ..model.commands import TELEOPERATED, TIMEOUT, UNKNOWN_NAME, Command
from ..model.driver import Reading, StepInfo
from ..model.errors import ProtocolError
from ..net.protocol import PROTOCOL_VERSION, Message
from .images import IMAGE_FRAMES_SINCE, IMAGE_MODULES, framed_text, image_reading
from .process import SIM_PID_ENV, _process_gone

_COMMANDS, _DETACH, _MODULES, _CLAIM, _RELEASE = 3, 2, 1, 4, 5
_PARAM_LIST, _PARAM_GET, _PARAM_SET = 10, 12, 13
_EXTERNAL_POSE = 20  # protocol 10: an external robot's pose (docs/in-the-loop.md)
MAX_TIMEOUTS = 3  # requests in a row without a reply before the loop asks the name server
PROBE_TIMEOUT = 1.0  # s the name server has to answer that probe
TELEOP_POLL = 0.1  # s between two tries of a motion command while a person drives the robot
QUEUED_POLL = 0.25  # s between two looks at /sim while a loop waits for a queued command's step
FINISHED_EVERY = 4  # of those looks, every how many also asks (state document) if it finished
QUEUED = "lockstep: queued"  # a lockstep motion reply's note before the step that uses it


class SimulationGone(SystemExit):
    """The simulation a control loop drives is gone; ends the program with its sentence."""


class ModuleProxy:
    """One module of a remote robot; every command it declares is a method.

    Positional arguments are the command's data (floats); a string argument, or ``text=``,
    goes in the text field (``bot.target.read_color("red")``).
    """

    def __init__(self, robot: "Robot", label: str, commands: list[Command]) -> None:
        self._robot, self.label = robot, label
        self._commands = {c.name: c for c in commands}

    def __getattr__(self, name: str):
        command = self.__dict__.get("_commands", {}).get(name)
        if command is None:
            raise AttributeError(f"module {self.label} has no command {name!r}")

        def call(*args, text=""):
            return self._robot.invoke(command, args, text)
        call.__name__ = call.__qualname__ = name
        call.__doc__ = command.doc  # the server's listing carries it: help(bot.motors.stop)
        self.__dict__[name] = call  # made once: a loop's later calls find it as an attribute
        return call

    def __dir__(self):
        return [*super().__dir__(), *self._commands]

    def commands(self) -> dict[str, Command]:
        """The module's commands by name, as the robot lists them (id, arity, kind, ``doc``)."""
        return dict(self._commands)


class Robot:
    """A robot's modules, each an attribute (``bot.sonar``, ``bot.motors``...).

    Attributes:
        name: Network name. endpoint: Its server's endpoint.
        last: What the latest motion command returned (None before the first).
    """

    def __init__(self, client, name: str, endpoint: str) -> None:
        self.client, self.name, self.endpoint = client, name, endpoint
        self.last: StepInfo | None = None
        self._last_motion: tuple | None = None
        self._timeouts = 0  # requests in a row that got no reply
        self._exchanges: dict = {}  # (motion, reads) -> its Exchange (protocol 13, step())
        hello = self.call(0, params=(PROTOCOL_VERSION,))  # a server of another version says so
        #: Camera reads ask for their pixels in a frame of their own (protocol 11; False:
        #: base64 in the text, as a server of version 10 sends them).
        self.image_frames = bool(hello.params) and hello.params[0] >= IMAGE_FRAMES_SINCE
        reply = self.call(_COMMANDS)
        by_module: dict[str, list[Command]] = {}
        for line in reply.text.splitlines():
            command = Command.parse(line)
            if command.module:
                by_module.setdefault(command.module, []).append(command)
        self.module_labels = list(by_module)
        for label, commands in by_module.items():
            setattr(self, label, ModuleProxy(self, label, commands))

    def __getattr__(self, name: str):
        if name.startswith("_") or name in ("module_labels",):
            raise AttributeError(name)
        raise AttributeError(f"robot {self.name!r} has no module {name!r} (it has: "
                             f"{', '.join(self.module_labels)})")

    @property
    def time(self) -> float:
        """Sim time after the latest motion command, s (0 before the first)."""
        return self.last.time if self.last is not None else 0.0

    def call(self, command: int, text: str = "", params: Sequence[int] = (),
             data: Sequence[float] = ()) -> Message:
        """Send any robot command by id (see docs/protocol.md)."""
        try:
            reply = self.client.request(self.endpoint, command, text, params, data)
        except ProtocolError as exc:
            self._timeouts = self._timeouts + 1 if exc.code == TIMEOUT else 0
            raise
        self._timeouts = 0
        return reply

    #: A motion command refused because a person drives the robot (error 13) waits, polling
    #: every :data:`TELEOP_POLL` s, until the robot is given back, then goes through (one line
    #: on stderr says so); False: it raises :class:`~coopsim.client.RobotTeleoperated`.
    wait_while_teleoperated = True

    def invoke(self, command: Command, args: tuple, text: str = ""):
        """Send a declared module command; shape the reply by its kind."""
        if args:
            words = [a for a in args if isinstance(a, str)]
            data = [float(a) for a in args if not isinstance(a, str)]
            text = words[0] if words else text
        else:
            data = []
        if command.kind == "read" and command.module in IMAGE_MODULES:
            return image_reading(self._send_motion(command, framed_text(text, self.image_frames),
                                                   data))
        reply = self._send_motion(command, text, data)
        if command.kind == "read":
            return Reading(reply.data, reply.text, reply.params[0] if reply.params else 0)
        if command.kind == "motion":
            self._last_motion = (command, args, text)
            self.last = StepInfo(reply.params[0], reply.data[0], reply.text)
            return self.last
        return reply.text

    def step(self, motion: str, *data: float, read: Sequence[str] = ()):
        """Protocol 13: send a motion command and get the reads of the step that used it, in
        one request (robot command 6, ``exchange``; docs/protocol.md section 3, *Exchange*).

        ``bot.step("motors.set_speeds", 0.3, 0.3, read=("sonar", "gps"))`` is, in lockstep,
        one step: the motion command's reply, after the step, carrying that step's sonar and
        gps readings, bit for bit what ``bot.sonar.read()`` would answer right then. The
        exchange is checked once here and kept (:meth:`exchange` gives it to hold).

        Args:
            motion: ``module.command`` of a motion command.
            data: The motion command's numbers.
            read: Module labels whose ``read`` the reply carries.

        Returns:
            A :class:`~coopsim.client.exchange.Stepped`: a StepInfo (also in :attr:`last`)
            with each reading by label (``stepped["sonar"]``, ``stepped.sonar``).

        Raises:
            RemoteError: as the motion command would (11 owned, 6 finished or detached...);
                2 from a server of protocol 12 or older, which has no command 6.
        """
        key = (motion, tuple(read))
        exchange = self._exchanges.get(key)
        if exchange is None:
            exchange = self._exchanges[key] = self.exchange(motion, read)
        return exchange(*data)

    def exchange(self, motion: str, read: Sequence[str] = ()):
        """A prepared :class:`~coopsim.client.exchange.Exchange`: call it with the motion
        command's numbers (``ex = bot.exchange("motors.set_speeds", ("sonar",)); ex(0.3,
        0.3)``), as :meth:`step` does."""
        from .exchange import Exchange
        return Exchange(self, motion, read)

    def _send_motion(self, command: Command, text: str, data: list, params: tuple = ()):
        """:meth:`call` (its body, not a call of it: on every command of a loop),
        waiting while a teleop drives the robot when it is a motion command."""
        told = False
        while True:
            try:
                reply = self.client.request(self.endpoint, command.id, text, params, data)
                self._timeouts = 0
                return reply
            except ProtocolError as exc:
                if not self._waits(exc, command):
                    raise
                if not told:
                    print(f"coopsim: {exc.text}; waiting", file=sys.stderr, flush=True)
                    told = True
                time.sleep(TELEOP_POLL)

    def _waits(self, exc: ProtocolError, command: Command) -> bool:
        """``command`` failed with ``exc`` (the timeouts in a row counted): whether it is
        sent again, a motion command refused while a person drives the robot (error 13)."""
        self._timeouts = self._timeouts + 1 if exc.code == TIMEOUT else 0
        return exc.code == TELEOPERATED and command.kind == "motion" \
            and self.wait_while_teleoperated

    def repeat(self) -> StepInfo | None:
        """Send the latest motion command again (in lockstep: take one more step with it)."""
        return self.invoke(*self._last_motion) if self._last_motion else None

    def modules(self) -> list[str]:
        """Labels of the robot's modules."""
        return self.call(_MODULES).text.split(",")

    def peer(self, name: str) -> "Robot":
        """Another robot, for reading its modules."""
        return self.client.robot(name)

    _gone = False
    _sim = None  # /sim, once a loop waits for a queued command's step

    def _check_alive(self) -> None:
        """Raise SimulationGone when the simulator's process ended, or it stopped answering."""
        pid = os.environ.get(SIM_PID_ENV, "")
        if pid.isdigit() and _process_gone(int(pid)):
            self._gone = True
            raise SimulationGone(f"coopsim: the simulation (pid {pid}) is gone; the controller "
                                 f"of {self.name} stops")
        if self._timeouts >= MAX_TIMEOUTS and not self._nameserver_answers():
            self._gone = True
            raise SimulationGone(f"coopsim: the simulation at {self.client.nameserver} is gone "
                                 f"({self._timeouts} requests in a row got no reply and the "
                                 f"name server does not answer); the controller of {self.name} "
                                 "stops")

    def _nameserver_answers(self) -> bool:
        timeout, patient = self.client.timeout, self.client.patient
        self.client.timeout, self.client.patient = min(timeout, PROBE_TIMEOUT), False
        try:
            self.client.hello()
            return True
        except ProtocolError:
            return False
        finally:
            self.client.timeout, self.client.patient = timeout, patient

    def detach(self) -> None:
        """Leave lockstep: the simulation stops waiting for this controller (and the robot is
        released, when this connection owned it)."""
        self.call(_DETACH)

    def claim(self, force: bool = False, dead_man: float | None = None) -> str:
        """Own the robot: its motion commands are this connection's alone until :meth:`release`
        (docs/protocol.md section 3, *Ownership*); the first motion command claims it too.

        Args:
            force: Take it from another owner (for operators).
            dead_man: Protocol 12: stop the robot when this connection sends no motion
                command for this long, s (0 < T <= 60; 0 disarms; None: as it was).

        Returns:
            The server's sentence, ``claimed by <how it names this connection>``.

        Raises:
            RobotOwned: another connection owns it (error 11; the text names the owner).
        """
        data = () if dead_man is None else (float(dead_man),)
        return self.call(_CLAIM, params=(int(bool(force)),), data=data).text

    def send_pose(self, x: float, y: float, yaw: float = 0.0, *, z: float | None = None,
                  quat: Sequence[float] | None = None) -> float:
        """Send an external robot's pose (protocol 10, docs/in-the-loop.md): ``x, y`` m and
        ``yaw`` rad in the world frame, or with ``z`` (m) and ``quat`` (w, x, y, z) its 3D pose.
        It goes to the pose channel ``/external`` (protocol 11: off the simulation's stepping
        thread; its connection owns the robot's poses) where the server has one, else to the
        robot's own endpoint.

        Returns:
            The simulated time (s) of the step the server had taken when it took the pose.

        Raises:
            RemoteError: 14, the pose is refused (not finite, a teleport, off the floor, the
                robot is not external); 15, a flood; 11, another connection owns the robot.
        """
        data = (x, y, yaw) if quat is None else (x, y, z or 0.0, *quat)
        channel = self.pose_channel
        if channel is None:  # a server before protocol 11: the robot's own endpoint
            return self.call(_EXTERNAL_POSE, data=data).data[0]
        return self.client.request(channel, _EXTERNAL_POSE, self.name, data=data).data[0]

    @property
    def pose_channel(self) -> str | None:
        """The endpoint of ``/external``, the pose channel :meth:`send_pose` uses (protocol
        11: served off the simulation's stepping thread), or None where the server has none."""
        if not hasattr(self, "_channel"):
            try:
                self._channel = self.client.lookup("/external", "rep")
            except ProtocolError as exc:  # RemoteError is one: no such name before version 11
                if exc.code != UNKNOWN_NAME:
                    raise
                self._channel = None
        return self._channel

    def release(self) -> bool:
        """Give the robot up (it also leaves lockstep); True when this connection owned it.

        Raises:
            RobotOwned: another connection owns it.
        """
        return bool(self.call(_RELEASE).params[0])

    def get_param(self, module: str, name: str):
        """Current value of a module (or ``driver``) parameter (a word for text parameters)."""
        reply = self.call(_PARAM_GET, f"{module}.{name}")
        return reply.data[0] if reply.data else reply.text.split(" ", 1)[1]

    def set_param(self, module: str, name: str, value):
        """Set a module (or ``driver``) parameter; returns the stored value (errors if out of
        [min, max])."""
        if isinstance(value, str):
            return self.call(_PARAM_SET, f"{module}.{name} {value}").text.split(" ", 1)[1]
        return self.call(_PARAM_SET, f"{module}.{name}", data=(value,)).data[0]

    def params(self, module: str) -> dict[str, float]:
        """Every parameter of a module and its value (NaN for text parameters)."""
        reply = self.call(_PARAM_LIST, module)
        return dict(zip(reply.text.splitlines(), reply.data))

    def loop(self, steps: int | None = None, period: float = 0.05) -> Iterator[int]:
        """Control loop helper: yields 0, 1, 2...; send one motion command per iteration.

        In lockstep each iteration is one simulation step (the motor reply comes after the step):
        when the reply is ``lockstep: queued`` (the run is paused, or its first step waits for
        other controllers) the next iteration waits, asking ``/sim`` every :data:`QUEUED_POLL`
        s, until a step has used the command (or the run was reset or has finished), so a
        paused run holds the loop and each single step moves it one iteration.
        In real time (or on a real robot) iterations are paced to ``period`` s of wall time.
        On leaving the loop (end, break or exception) the robot is stopped and detached, so the
        simulation does not wait for a controller that has finished.

        Raises:
            SimulationGone: the simulation is gone (see the module's docstring); the program
                ends with one line, without a traceback.
        """
        i = 0
        try:
            while steps is None or i < steps:
                self._check_alive()
                started = time.monotonic()
                yield i
                i += 1
                if self.last is None or not self.last.lockstep:
                    time.sleep(max(0.0, period - (time.monotonic() - started)))
                elif self.last.note.startswith(QUEUED):
                    self._await_step(self.last.step)
        finally:
            if not self._gone:  # a gone simulation has nothing to stop or detach from
                self._stop_and_detach()

    def _await_step(self, step: int) -> None:
        """Wait until the run has taken a step after ``step`` (the one that uses a command
        answered ``queued``), was reset, or has finished without another step (a failed step
        ends a headless run); a simulation that stops answering ends the wait too (the loop's
        next check says so)."""
        try:
            sim = self._sim = self._sim or self.client.sim()
            for polls in itertools.count():
                if sim.status()["step"] != step:
                    return
                if polls % FINISHED_EVERY == 0 and sim.state()["finished"]:
                    return  # no step will use its command
                time.sleep(QUEUED_POLL)
        except ProtocolError:
            return

    def _stop_and_detach(self) -> None:
        try:
            for label in self.module_labels:  # every module that can stop, stops
                proxy = getattr(self, label)
                if "stop" in proxy.commands():
                    proxy.stop()
            self.detach()
        except ProtocolError:
            pass  # the simulation is gone or finished; nothing to detach from
