"""Protocol 13's exchange for the Python client: a motion command and reads in one request.

``bot.step("motors.set_speeds", 0.2, 0.2, read=("sonar",))`` sends robot command 6 with
``params = [100, 200]`` and ``data = [0.2, 0.2]``; in lockstep the reply comes after the step
that used the command and carries the sonar's reading of that step: one round trip a step
where ``bot.sonar.read()`` then ``bot.motors.set_speeds(...)`` took two (docs/protocol.md
section 3, *Exchange*).
"""

from __future__ import annotations

from typing import Sequence

from msgpack import packb as _packb

from ..model.commands import Command
from ..model.driver import Reading, StepInfo
from ..model.errors import ProtocolError
from ..net.protocol import EXCHANGE

#: What a robot's motion is sent as by ``Robot._send_motion``: the exchange waits while a
#: person drives the robot as a motion command does
_AS_MOTION = Command(EXCHANGE, "exchange", kind="motion")
_new = object.__new__


class Stepped(StepInfo):
    """What :meth:`Robot.step` returns: the step that used the motion command, its time (s)
    and mode note, as :class:`~coopsim.model.driver.StepInfo`; and each read asked for, by
    module label, as a :class:`~coopsim.model.driver.Reading` (``stepped["sonar"]``,
    ``stepped.sonar``). A reading's ``step`` is the step it was measured at (earlier than
    ``step`` only for a module reading at its own rate); its ``text`` is empty (a read's
    text, a target's colours, comes only with the read sent on its own)."""

    def __init__(self, step: int, time: float, note: str, readings: dict) -> None:
        super().__init__(step, time, note)
        object.__setattr__(self, "readings", readings)

    def __getitem__(self, label: str) -> Reading:
        return self.readings[label]

    def __getattr__(self, label: str) -> Reading:
        try:
            return self.__dict__["readings"][label]
        except KeyError:
            raise AttributeError(label) from None


class Exchange:
    """One prepared exchange of a robot: its motion command and reads, checked here once.

    Args:
        robot: The :class:`~coopsim.client.robot.Robot`.
        motion: ``module.command`` of a motion command (``motors.set_speeds``).
        read: Module labels whose ``read`` command the reply carries, in this order.

    Raises:
        AttributeError: the robot has no such module or command.
        ValueError: ``motion`` is not a motion command, or a module has no ``read``.
    """

    def __init__(self, robot, motion: str, read: Sequence[str] = ()) -> None:
        label, _, name = motion.partition(".")
        command = getattr(robot, label).commands().get(name)
        if command is None or command.kind != "motion":
            raise ValueError(f"{motion} is not a motion command of {robot.name}")
        ids = [command.id]
        for module in read:
            found = getattr(robot, module).commands().get("read")
            if found is None or found.kind != "read":
                raise ValueError(f"module {module} of {robot.name} has no read command")
            ids.append(found.id)
        self.robot, self.motion, self.labels = robot, command, tuple(read)
        self.params = tuple(ids)
        # the request's frame up to its data: [0, "", 6, ids, data] as one msgpack array, its
        # data array packed at each call (float64, as protocol.pack packs it)
        self._head = _packb([0, "", EXCHANGE, ids, []])[:-1]

    def __call__(self, *data: float) -> Stepped:
        """Send the motion command with ``data`` and return what the step read."""
        robot = self.robot
        # packed here and the reply's fields read without a Message: a lockstep loop's
        # every step, whose client side cost twice a bare request's
        wire = self._head + _packb(list(map(float, data)))
        try:
            _, text, _, params, values = robot.client.request_fields(robot.endpoint, wire)
        except ProtocolError as exc:
            if not robot._waits(exc, _AS_MOTION):
                raise
            reply = robot._send_motion(_AS_MOTION, "", [float(d) for d in data], self.params)
            text, params, values = reply.text, reply.params, reply.data
        else:
            robot._timeouts = 0
        readings, at = {}, 1
        for k, label in enumerate(self.labels):
            n = params[1 + 2 * k]
            readings[label] = Reading(values[at:at + n], "", params[2 + 2 * k])
            at += n
        robot.last = stepped = _new(Stepped)  # Stepped(...) without two levels of __init__
        stepped.__dict__.update(step=params[0], time=values[0], note=text, readings=readings)
        return stepped
