"""A robot on the network: one thread and one ROUTER socket serving all of the robot's modules.

Every module port of a robot (``/robot1/motors``, ``/robot1/sonar``...) resolves to this one
socket; command ids are unique per module, so the id says which module is meant. The thread never
touches pymunk: reads answer from the last completed step's snapshot, motor commands go into the
robot's command slot, and parameter changes are queued onto the stepper thread.
"""

from __future__ import annotations

import zmq

from . import protocol as p
from ..model.errors import ProtocolError, UnknownNameError
from .protocol import Command, Message
from .server import Server

STEP_WAIT = 0.5  # s a lockstep motor reply waits for its step before answering "not yet"
CALL_WAIT = 5.0  # s to wait for the stepper to carry out a queued change
SPEED_SANITY = 100.0  # m/s: larger wheel speeds are an error; up to it they saturate at max_speed


class RobotServer(Server):
    """Serves one robot's modules.

    Args:
        ctx: ZeroMQ context.
        robot: Robot network name (``robot1``).
        modules: Module label -> the robot's ParamValues (read-only use from this thread).
        stepper: The run's Stepper.
        bind: Address to bind.
    """

    def __init__(self, ctx: zmq.Context, robot: str, modules: dict, stepper,
                 bind: str = "127.0.0.1") -> None:
        super().__init__(ctx, f"/{robot}", p.ROBOT_COMMANDS, bind)
        self.robot = robot
        self.modules = modules
        self.stepper = stepper

    def handle(self, msg: Message, command: Command) -> Message:
        if command.module and command.module not in self.modules:
            raise ProtocolError(p.UNKNOWN_COMMAND,
                                f"{self.name} has no {command.module} module (command "
                                f"{command.id}); it has: {', '.join(self.modules)}")
        if command.module == "motors" and command.id in p.MOTION_COMMANDS:
            return self._move(msg, command)
        if command.module and command.name.startswith("read"):
            return self._read(msg, command)
        return getattr(self, f"_{command.name}")(msg)

    # -- generic commands ---------------------------------------------------------------------

    def _modules(self, msg: Message) -> Message:
        return msg.reply(",".join(self.modules), params=(len(self.modules),))

    def _detach(self, msg: Message) -> Message:
        was = self.stepper.slots.detach(self.robot)
        return msg.reply("detached" if was else "was not attached", params=(int(was),))

    def _param_list(self, msg: Message) -> Message:
        values = self._module(msg.text)
        names = list(values.specs)
        return msg.reply("\n".join(names), data=[float(values[n]) for n in names])

    def _param_info(self, msg: Message) -> Message:
        values, name = self._param(msg.text)
        spec = values.spec(name)
        text = "\n".join((spec.type, spec.unit, spec.description))
        return msg.reply(text, data=(float(spec.default), spec.min, spec.max, float(values[name])))

    def _param_get(self, msg: Message) -> Message:
        values, name = self._param(msg.text)
        return msg.reply(msg.text, data=(float(values[name]),))

    def _param_set(self, msg: Message) -> Message:
        values, name = self._param(msg.text)
        module = msg.text.split(".", 1)[0]
        value = msg.data[0]
        future = self.stepper.call(self.stepper.sim.set_param, self.robot, module, name, value)
        return msg.reply(msg.text, data=(float(future.result(CALL_WAIT)),))

    def _module(self, label: str):
        try:
            return self.modules[label]
        except KeyError:
            raise UnknownNameError(f"{self.name} has no module {label!r} "
                                   f"(it has: {', '.join(self.modules)})") from None

    def _param(self, text: str):
        module, dot, name = text.partition(".")
        if not dot:
            raise ProtocolError(p.WRONG_ARITY, f"text must be <module>.<parameter>, not {text!r}")
        values = self._module(module)
        values.spec(name)
        return values, name

    # -- modules ------------------------------------------------------------------------------

    def _move(self, msg: Message, command: Command) -> Message:
        """Motor commands. The reply's text is the mode; in lockstep it comes after the step."""
        left, right = self._wheel_speeds(msg, command)
        lockstep = self.stepper.mode == "lockstep"
        generation = self.stepper.slots.put(self.robot, left, right, attach=lockstep)
        snap = self.stepper.wait_generation(generation, STEP_WAIT) if lockstep else None
        text = "realtime"
        if lockstep:
            text = "lockstep" if snap else "lockstep: queued, the step has not run yet"
        snap = snap or self.stepper.snapshot
        return msg.reply(text, params=(snap.step,), data=(snap.time,))

    def _wheel_speeds(self, msg: Message, command: Command) -> tuple[float, float]:
        max_speed = float(self.modules["motors"]["max_speed"])
        if command.name == "stop":
            return 0.0, 0.0
        if command.name == "set_power":
            if any(abs(v) > 100.0 for v in msg.data):
                raise ProtocolError(p.OUT_OF_RANGE, "power must be within -100..100 %, got "
                                                    f"{msg.data[0]:g}, {msg.data[1]:g}")
            return msg.data[0] / 100.0 * max_speed, msg.data[1] / 100.0 * max_speed
        if any(abs(v) > SPEED_SANITY for v in msg.data):
            raise ProtocolError(p.OUT_OF_RANGE,
                                f"wheel speeds {msg.data[0]:g}, {msg.data[1]:g} m/s are beyond "
                                f"+-{SPEED_SANITY:g} m/s (speeds over motors.max_speed saturate)")
        return msg.data[0], msg.data[1]

    def _read(self, msg: Message, command: Command) -> Message:
        snap = self.stepper.snapshot
        if self.robot not in snap.index:
            raise UnknownNameError(f"{self.name} is not in the simulation any more")
        row = snap.reading(self.robot, command.module)
        if command.name == "read_color":
            colors = [t.color for t in snap.targets]
            if msg.text not in colors:
                raise UnknownNameError(f"no {msg.text!r} target (targets: "
                                       f"{', '.join(colors) or 'none'})")
            i = colors.index(msg.text)
            return msg.reply(msg.text, params=(snap.step,), data=row[2 * i:2 * i + 2].tolist())
        text = ",".join(t.color for t in snap.targets) if command.module == "target" else ""
        return msg.reply(text, params=(snap.step,), data=row.tolist())

    def _reset(self, msg: Message) -> Message:
        def zero():
            self.stepper.sim.zero_reading(self.robot, "odometry")
            self.stepper.refresh()  # a read right after the reset shows the zeros
        self.stepper.call(zero).result(CALL_WAIT)
        return msg.reply("odometry reset")
