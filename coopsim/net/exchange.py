"""Protocol 13's ``exchange`` (robot command 6): a motion command and reads in one request.

A lockstep controller's loop "read sensors, send motors" was two round trips a step; the
exchange makes it one: ``params = [motion id, read id, ...]``, ``data`` the motion command's
data. It is the motion command in every respect (checks, ownership, lockstep, patience), and
its reply, sent when the motion reply would be, carries the named reads taken from the same
snapshot a separate read would answer from right then::

    params = [step, n1, taken1, n2, taken2, ...]   data = [time, read1..., read2...]

``n`` is how many numbers a read gave and ``taken`` the step its reading was measured at (the
step itself unless the module reads at its own rate). Flat integers and floats only, so a
client in C or Octave slices the data by the counts (docs/protocol.md section 3, *Exchange*).

An exchange's check runs once per distinct ``params`` of a robot (:class:`Plan`, kept on the
port until its modules change): a loop sending the same exchange every step pays a dict
look-up, not a walk of its command table.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.capabilities import Answerer, capability
from ..model.errors import ProtocolError
from . import protocol as p
from .protocol import Command, Message

_PLANS_KEPT = 64  # distinct exchanges remembered a robot (a loop sends one or two)


@dataclass(frozen=True)
class Plan:
    """An exchange's checked ``params``: its motion command and its reads.

    Attributes:
        motion: The motion command (params[0]).
        reads: ``(command, module label, answerer)`` of each read (params[1:]), in order.
    """

    motion: Command
    reads: tuple


def plan_of(port, params: tuple) -> Plan:
    """The checked plan of an exchange's ``params`` for robot port ``port`` (cached).

    Raises:
        ProtocolError: 2 (unknown command) for an id the robot has not; 4 (out of range) for
            params[0] that is no motion command, or a later id that is no read the exchange
            can answer (a read needing text, or one rendered from the world: camera3d).
    """
    plans = port.exchanges
    found = plans.get(params)
    if found is None:
        found = _check(port, params)
        if len(plans) >= _PLANS_KEPT:
            plans.clear()
        plans[params] = found
    return found


def _check(port, params: tuple) -> Plan:
    motion = _command(port, params[0], "params[0]")
    if motion.kind != "motion":
        raise ProtocolError(p.OUT_OF_RANGE, (
            f"exchange: params[0] is a motion command's id; {motion.id} is {motion.module} "
            f"{motion.name} (kind {motion.kind or '-'}): send it on its own"))
    if motion.text == "req" or motion.params[0] > 0:  # a plugin's: the exchange carries data only
        raise ProtocolError(p.OUT_OF_RANGE, (
            f"exchange: {motion.id} ({motion.module} {motion.name}) needs text or params, which "
            "an exchange does not carry: send it on its own"))
    reads = []
    for k, cid in enumerate(params[1:], 1):
        command = _command(port, cid, f"params[{k}]")
        module = port.classes.get(command.module)
        if command.kind != "read" or command.text == "req" or hasattr(module, "read_world"):
            why = ("needs a text" if command.kind == "read" and command.text == "req" else
                   "is rendered from the world" if command.kind == "read" else
                   f"is of kind {command.kind or '-'}")
            raise ProtocolError(p.OUT_OF_RANGE, (
                f"exchange: params[{k}] names a read the exchange answers (kind read, no text, "
                f"not an image); {cid} is {command.module} {command.name}, which {why}: "
                "send it on its own"))
        answerer = capability(module, Answerer, default=True)
        reads.append((command, command.module, answerer))
    return Plan(motion, tuple(reads))


def _command(port, cid: int, where: str) -> Command:
    command = port.commands.get(cid)
    if command is None or cid == p.EXCHANGE or command.module == "":
        if command is None:
            raise ProtocolError(p.UNKNOWN_COMMAND, f"exchange: {where}: {port.name} has no "
                                                   f"command {cid}")
        raise ProtocolError(p.OUT_OF_RANGE, (
            f"exchange: {where} names a module's command; {cid} is the robot's own "
            f"{command.name}: send it on its own"))
    return command


def check_motion(msg: Message, plan: Plan) -> None:
    """Check the exchange's data as its motion command's request (error 3 with that command's
    sentence); the exchange's own check has found them finite already, so only the count is
    looked at here, without a request of its own made (on every step of a loop)."""
    lo, hi = plan.motion.data
    if not lo <= len(msg.data) <= hi:
        plan.motion.check(Message(0, "", plan.motion.id, (), msg.data))


def reply_wire(port, plan: Plan, mode: str, snap=None) -> bytes:
    """The exchange's reply frame: ``mode`` as text, the reads from ``snap`` (default: the
    stepper's latest, as a separate read now would answer); error 5 for a robot no longer in
    the simulation."""
    snap = snap if snap is not None else port.stepper.snapshot
    robot = port.robot
    row = snap.index.get(robot)
    if row is None:
        return p.pack(p.UNKNOWN_NAME, f"{port.name} is not in the simulation any more",
                      p.EXCHANGE, (), ())
    params, data = [snap.step], [snap.time]
    taken = snap.extra.get("taken")
    for command, module, answerer in plan.reads:
        _, values = answerer.answer_robot(command, robot, snap.readings[module][row], "", snap)
        steps = taken.steps.get(module) if taken is not None else None
        params += (len(values), int(steps[row]) if steps is not None and row < len(steps)
                   else snap.step)
        data += values
    if plan.reads:
        port.stepper.sim.external.served(robot)  # pose -> reading served
    return p.pack(p.OK, mode, p.EXCHANGE, params, data)
