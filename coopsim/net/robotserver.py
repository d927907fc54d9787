"""A robot on the network: one ROUTER socket serving all of the robot's modules.

Every module port of a robot (``/robot1/motors``, ``/robot1/sonar``...) resolves to this one
socket; command ids are unique across modules, so the id says which module is meant, and the
command's declared kind says how to answer it (:mod:`coopsim.model.commands`): ``read`` from the
last completed step's snapshot, ``motion`` into the robot's command slot (in lockstep answered
after the step that used it), ``action`` on the stepper thread. The server never touches pymunk;
parameter changes are queued onto the stepper thread too.
"""

from __future__ import annotations

import zmq

from ..model.errors import NotAllowedError, ProtocolError, UnknownNameError
from ..model.plugins import MODULES
from . import protocol as p
from .protocol import Command, Message, robot_commands
from .server import Server

STEP_WAIT = 0.5  # s a lockstep motor reply waits for its step before answering "not yet"
CALL_WAIT = 5.0  # s to wait for the stepper to carry out a queued change


class RobotServer(Server):
    """Serves one robot's modules.

    Args:
        ctx: ZeroMQ context.
        robot: Robot network name (``robot1``).
        modules: Module label -> the robot's ParamValues (read-only use from this thread).
        stepper: The run's Stepper.
        bind: Address to bind.
        driver: The ParamValues of the robot's in-process driver, or None.
    """

    def __init__(self, ctx: zmq.Context, robot: str, modules: dict, stepper,
                 bind: str = "127.0.0.1", driver=None) -> None:
        super().__init__(ctx, f"/{robot}", {}, bind)
        self.robot = robot
        self.stepper = stepper
        self.set_modules(modules, driver)

    def set_modules(self, modules: dict, driver=None) -> None:
        """Serve these modules from now on (after a reset or an update of the robot)."""
        self.modules = modules
        self.driver = driver
        self.classes = {label: MODULES.get(label) for label in modules}
        self.commands = robot_commands(self.classes.values())

    def unknown(self, msg: Message) -> Message:
        """Name the module a foreign command id belongs to, when one does."""
        owner = next((label for label, m in MODULES.items()
                      if any(c.id == msg.command for c in m.commands)), None)
        if owner is None:
            return super().unknown(msg)
        return msg.fail(p.UNKNOWN_COMMAND, f"{self.name} has no {owner} module (command "
                                           f"{msg.command}); it has: {', '.join(self.modules)}")

    def handle(self, msg: Message, command: Command) -> Message:
        if command.kind == "read":
            return self._read(msg, command)
        if command.kind == "motion":
            return self._move(msg, command)
        if command.kind == "action":
            return self._act(msg, command)
        return getattr(self, f"_{command.name}")(msg)

    # -- generic commands -------------------------------------------------------------------------

    def _modules(self, msg: Message) -> Message:
        return msg.reply(",".join(self.modules), params=(len(self.modules),))

    def _commands(self, msg: Message) -> Message:
        if msg.text and msg.text not in self.modules:
            raise UnknownNameError(f"{self.name} has no module {msg.text!r} "
                                   f"(it has: {', '.join(self.modules)})")
        rows = [c.describe() for c in sorted(self.commands.values(), key=lambda c: c.id)
                if not msg.text or c.module == msg.text]
        return msg.reply("\n".join(rows), params=(len(rows),))

    def _detach(self, msg: Message) -> Message:
        was = self.stepper.slots.detach(self.robot)
        return msg.reply("detached" if was else "was not attached", params=(int(was),))

    def _param_list(self, msg: Message) -> Message:
        values = self._values(msg.text)
        names = list(values.specs)
        data = [float(values[n]) if values.spec(n).type != "str" else float("nan")
                for n in names]
        return msg.reply("\n".join(names), data=data)

    def _param_info(self, msg: Message) -> Message:
        values, name = self._param(msg.text)
        spec = values.spec(name)
        if spec.type == "str":
            text = "\n".join(("str", spec.unit, spec.description, spec.default, values[name],
                              " ".join(spec.choices)))
            return msg.reply(text)
        text = "\n".join((spec.type, spec.unit, spec.description))
        return msg.reply(text, data=(float(spec.default), spec.min, spec.max, float(values[name])))

    def _param_get(self, msg: Message) -> Message:
        values, name = self._param(msg.text)
        if values.spec(name).type == "str":
            return msg.reply(f"{msg.text} {values[name]}")
        return msg.reply(msg.text, data=(float(values[name]),))

    def _param_set(self, msg: Message) -> Message:
        dotted, _, word = msg.text.partition(" ")
        values, name = self._param(dotted)
        is_str = values.spec(name).type == "str"
        if is_str != (not msg.data) or (is_str and not word):
            want = "text '<module>.<name> <word>' and no data" if is_str else "one value in data"
            raise ProtocolError(p.WRONG_ARITY, f"param_set of {dotted} takes {want}")
        module = dotted.split(".", 1)[0]
        value = word if is_str else msg.data[0]
        stored = self.stepper.call(self.stepper.sim.set_param, self.robot, module, name,
                                   value).result(CALL_WAIT)
        if is_str:
            return msg.reply(f"{dotted} {stored}")
        return msg.reply(dotted, data=(float(stored),))

    def _values(self, label: str):
        if label == "driver" and self.driver is not None:
            return self.driver
        try:
            return self.modules[label]
        except KeyError:
            extra = ", driver" if self.driver is not None else ""
            raise UnknownNameError(f"{self.name} has no module {label!r} "
                                   f"(it has: {', '.join(self.modules)}{extra})") from None

    def _param(self, text: str):
        module, dot, name = text.partition(".")
        if not dot:
            raise ProtocolError(p.WRONG_ARITY, f"text must be <module>.<parameter>, not {text!r}")
        values = self._values(module)
        values.spec(name)
        return values, name

    # -- module commands --------------------------------------------------------------------------

    def _read(self, msg: Message, command: Command) -> Message:
        snap = self.stepper.snapshot
        if self.robot not in snap.index:
            raise UnknownNameError(f"{self.name} is not in the simulation any more")
        row = snap.reading(self.robot, command.module)
        text, data = self.classes[command.module].answer(command, row, msg.text, snap)
        return msg.reply(text, params=(snap.step,), data=data)

    def _move(self, msg: Message, command: Command) -> Message:
        """Motion commands. The reply's text is the mode; in lockstep it comes after the step."""
        module = self.classes[command.module]
        values = module.command_row(command, msg.data, self.modules[command.module])
        if self.stepper.finished:
            raise NotAllowedError(f"the run has finished ({self.stepper.finished})")
        lockstep = self.stepper.mode == "lockstep"
        generation = self.stepper.slots.put(self.robot, command.module, values, attach=lockstep)
        snap = self.stepper.wait_generation(generation, STEP_WAIT) if lockstep else None
        text = "realtime"
        if lockstep:
            text = "lockstep" if snap else "lockstep: queued, the step has not run yet"
        snap = snap or self.stepper.snapshot
        return msg.reply(text, params=(snap.step,), data=(snap.time,))

    def _act(self, msg: Message, command: Command) -> Message:
        module, stepper = self.classes[command.module], self.stepper

        def act():
            text = module.act(command, stepper.sim, self.robot, msg)
            stepper.refresh()  # a read right after the action shows its effect
            return text
        return msg.reply(stepper.call(act).result(CALL_WAIT))
