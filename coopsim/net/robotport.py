"""One robot's commands: what a request to ``/robotN`` (any of its module names) does.

Command ids are unique across modules, so the id says which module is meant, and the command's
declared kind says how to answer it (:mod:`coopsim.model.commands`): ``read`` from the last
completed step's snapshot, ``motion`` into the robot's command slot (in lockstep answered after
the step that used it: see :class:`Reply`), ``action`` between two steps. A port has no socket
and no thread of its own: the robot hub (:mod:`coopsim.net.robothub`) serves every robot's port
from the thread that owns the world, so the changes it makes run in place; when something else
serves, they are queued to the stepper.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import Hashable

from ..model.errors import NotAllowedError, ProtocolError, UnknownNameError
from ..model.capabilities import Answerer, Offloaded, capability
from ..model.commands import EXTERNAL_ROBOT
from ..model.module import RobotInfo
from ..model.plugins import MODULES
from ..sim.deadman import DEAD_MAN_MAX, safe_row
from . import protocol as p
from .exchange import Plan, check_motion, plan_of, reply_wire
from .imagereads import Rendering
from .protocol import Command, Message, robot_commands
from .server import reply_errors

CALL_WAIT = 5.0  # s to wait for the stepper to carry out a queued change


@dataclass(frozen=True)
class Reply:
    """A lockstep motion command's reply, due once the step of ``generation`` has run."""

    msg: Message
    generation: int
    plan: Plan | None = None  # protocol 13: an exchange's, whose reply carries its reads


@dataclass(frozen=True)
class Later:
    """An offloaded action's reply (coopsim.net.offload), due once ``future`` is done.

    Attributes:
        msg: The request.
        future: Its job's ``run()``.
        finish: ``finish(sim, result) -> text``, on the thread owning the World.
        key: The connection whose share it counts in.
    """

    msg: Message
    future: Future
    finish: object
    key: Hashable


class RobotPort:
    """What one robot answers.

    Args:
        robot: Robot network name (``robot1``).
        modules: Module label -> the robot's ParamValues.
        stepper: The run's Stepper.
        endpoint: The endpoint clients connect to.
        driver: The ParamValues of the robot's in-process driver, or None.
    """

    def __init__(self, robot: str, modules: dict, stepper, endpoint: str, driver=None,
                 info=None) -> None:
        self.name = f"/{robot}"
        self.robot = robot
        self.stepper = stepper
        self.endpoint = endpoint
        self.requests = 0  # requests served (the CLI says when a controller never sent one)
        self.errors: dict[int, int] = {}  # error code -> error replies sent with it
        self.last_error = ""  # the latest error reply's text
        # Who sent the request being served: the hub sets it before each request (it serves one
        # at a time) and turns it into an Owner only when a command needs one (motion, claim,
        # parameter writes, actions).
        self.caller = None
        self.arrival: float | None = None  # the request's arrival (perf_counter s), by the hub
        self.identify = None  # the hub's caller -> Owner
        self.offload = None  # the hub's Offload: actions solved off the stepper in real time
        self.images = None  # the hub's ImageReads: image reads' budgets, rendered beside it
        self.set_modules(modules, driver, info)

    def note_error(self, reply: Message) -> None:
        """Count an error reply this robot sent (the CLI says what a failing controller got)."""
        self.errors[reply.error] = self.errors.get(reply.error, 0) + 1
        self.last_error = reply.text

    def set_modules(self, modules: dict, driver=None, info=None) -> None:
        """Serve these modules from now on (after a reset or an update of the robot).

        Args:
            modules: Module label -> the robot's ParamValues.
            driver: Its driver's ParamValues, or None.
            info: Its RobotInfo (name, type, joint limits), handed to command checks.
        """
        self.modules = modules
        self.driver = driver
        self.info = info or RobotInfo(self.robot)
        self.classes = {label: MODULES.get(label) for label in modules}
        self.commands = robot_commands(self.classes.values())
        self.exchanges: dict[tuple, Plan] = {}  # checked exchanges (coopsim.net.exchange)

    def unknown(self, msg: Message) -> Message:
        """Name the module a foreign command id belongs to, when one does."""
        owner = next((label for label, m in MODULES.items()
                      if any(c.id == msg.command for c in m.commands)), None)
        if owner is None:
            return msg.fail(p.UNKNOWN_COMMAND, f"{self.name} has no command {msg.command}")
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
        slots, owner = self.stepper.slots, self._owner()
        was = self.robot in slots.attached()
        if owner is not None and slots.owner(self.robot):
            slots.release(self.robot, owner.key)  # error 11 when another owns it; detaches too
        else:
            slots.detach(self.robot)
        return msg.reply("detached" if was else "was not attached", params=(int(was),))

    def _claim(self, msg: Message) -> Message:
        owner = self._owner()
        if owner is None:
            raise NotAllowedError("claim needs a network connection")
        how = msg.params[0] if msg.params else 0
        if how not in (0, 1, 2):
            raise ProtocolError(p.OUT_OF_RANGE, f"claim takes params [0], [1] (force) or [2] "
                                                f"(teleop: force, and give it back on release), "
                                                f"got [{how}]")
        dead_man = msg.data[0] if msg.data else None
        if dead_man is not None and not 0.0 <= dead_man <= DEAD_MAN_MAX:  # NaN fails too
            raise ProtocolError(p.OUT_OF_RANGE, f"claim's data [dead man] is 0 (none) or a "
                                                f"deadline within 0..{DEAD_MAN_MAX:g} s, not "
                                                f"{dead_man!r}")
        if how == 2 and self.robot in self.stepper.sim.external.tracks:  # protocol 12: 17
            raise ProtocolError(EXTERNAL_ROBOT, (
                f"{self.robot} is an external robot: its pose comes from its pose stream, so "
                "a teleop claim (params [2]) is refused: it would displace the stream "
                "(docs/in-the-loop.md)"))
        slots = self.stepper.slots
        taken = slots.claim(self.robot, owner, force=how == 1, teleop=how == 2,
                            dead_man=dead_man)
        armed = slots.dead.deadline_of(self.robot, owner.key)
        text = f"claimed by {owner.label}" + (f" with a {armed:g} s dead man" if armed else "") \
            + (f" (taken from {taken})" if taken else "")
        return msg.reply(text, params=(int(bool(taken)),))

    def _release(self, msg: Message) -> Message:
        owner = self._owner()
        was = self.stepper.slots.release(self.robot, owner.key if owner else None)
        return msg.reply("released" if was else "was not owned", params=(int(was),))

    def _external_pose(self, msg: Message) -> Message:
        """An external robot's pose (protocol 10, docs/in-the-loop.md): the connection
        sending it owns the robot (error 11 for another's), a bad pose is error 14, a flood
        error 15; nothing changes on an error and the run goes on."""
        owner = self._owner()
        self.stepper.sim.external.check_shape(self.robot, msg.data)  # 14 before 11, counted
        if owner is not None:
            self.stepper.slots.claim(self.robot, owner)  # error 11: another connection's
        self.stepper.sim.external.receive(self.robot, msg.data, self.arrival)
        snap = self.stepper.snapshot
        return msg.reply("external", params=(snap.step,), data=(snap.time,))

    def _exchange(self, msg: Message):
        """Protocol 13: the motion command of ``params[0]`` with ``data``, answered (after its
        step in lockstep) with the reads of ``params[1:]`` (:mod:`coopsim.net.exchange`)."""
        plan = plan_of(self, msg.params)
        check_motion(msg, plan)
        reply = self._move(msg, plan.motion, plan)  # its data are the motion's
        if isinstance(reply, Reply):
            return reply
        return reply_wire(self, plan, "realtime")  # a frame the hub sends as it is

    def _owner(self):
        """The Owner the request being served comes from (None: not from the network)."""
        if self.caller is None or self.identify is None:
            return None
        return self.identify(self.caller)

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
        self.stepper.slots.check_writer(self.robot, self._owner())  # error 11: not the owner's
        stored = self._on_stepper(self.stepper.sim.set_param, self.robot, module, name, value)
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
        if hasattr(self.classes[command.module], "read_world"):
            return self._read_world(msg, command)
        snap = self.stepper.snapshot
        if self.robot not in snap.index:
            raise UnknownNameError(f"{self.name} is not in the simulation any more")
        row = snap.reading(self.robot, command.module)
        answerer = capability(self.classes[command.module], Answerer, default=True)
        text, data = answerer.answer_robot(command, self.robot, row, msg.text, snap)
        self.stepper.sim.external.served(self.robot)  # pose -> reading served
        return msg.reply(text, params=_stamp(snap, self.robot, command.module), data=data)

    def _read_world(self, msg: Message, command: Command) -> Message:
        """A read the module answers from the world itself (``read_world``: camera3d renders
        an image), between two steps on the thread that owns it; open to everyone as reads
        are. Its reply may be megabytes: only requests are held to 64 KiB. A module may answer
        binary frames after (text, params, data): sent after the message (protocol 11)."""
        module = self.classes[command.module]
        if self.robot not in self.stepper.snapshot.index:
            raise UnknownNameError(f"{self.name} is not in the simulation any more")
        check = getattr(module, "check_read_text", None)
        if check is not None:  # a bad request refused here, not queued on the world's thread
            check(msg.text)
        values = self.modules[command.module]
        sizer = getattr(module, "read_bytes", None)
        if self.images is not None and sizer is not None:  # protocol 12: error 18
            size, what = sizer(values, msg.text)
            self.images.check(size, what)
            if hasattr(module, "read_submit") and self.stepper.mode == "realtime" \
                    and self.stepper.owns_world():
                return self._read_later(msg, command, module, size)
            self.images.rendered(size)  # its memory given back after, as a later one's
        text, params, data, *frames = self._on_stepper(
            module.read_world, command, self.stepper.sim, self.robot,
            self.modules[command.module], msg.text)
        return msg.reply(text, params=params, data=data, frames=frames)

    def _read_later(self, msg: Message, command: Command, module, size: int) -> Rendering:
        """In real time, on the stepper's thread: the read's render queued (error 18 over the
        connection's or everyone's budget of images in flight), answered by the hub once
        the image is back (coopsim.net.imagereads): the world steps on meanwhile."""
        owner = self._owner()
        key = owner.key if owner is not None else None
        slot = self.images.admit(key, size)
        values, sim = self.modules[command.module], self.stepper.sim
        return Rendering(msg, lambda: module.read_submit(command, sim, self.robot, values,
                                                         msg.text, slot), key, size, slot)

    def _move(self, msg: Message, command: Command, plan: Plan | None = None):
        """Motion commands (``plan``: an exchange's). The reply's text is the mode; in
        lockstep it comes after the step (a :class:`Reply` the hub sends once that step has
        run)."""
        module = self.classes[command.module]
        refuse_external(self.stepper.sim, self.robot, command)  # protocol 11: error 17
        values = module.command_row(command, msg.data, self.modules[command.module], self.info)
        if self.stepper.finished:
            raise NotAllowedError(f"the run has finished ({self.stepper.finished})")
        lockstep, slots, owner = self.stepper.mode == "lockstep", self.stepper.slots, self._owner()
        safe = None
        if slots.dead_man_armed(self.robot, owner):  # the fallback, should its holder go silent
            safe = safe_row(module, self.modules[command.module], self.info)
        generation = slots.put(self.robot, command.module, values, attach=lockstep,
                               owner=owner, safe=safe)
        if lockstep:
            return Reply(msg, generation, plan)
        snap = self.stepper.snapshot
        return msg.reply("realtime", params=(snap.step,), data=(snap.time,))

    def _act(self, msg: Message, command: Command) -> Message:
        """Action commands (every command whose declared kind is ``action``, of any module):
        the owner's alone, as motion and parameter writes are (error 11 from another
        connection, before anything is queued); carried out between two steps."""
        module, stepper = self.classes[command.module], self.stepper
        stepper.slots.check_writer(self.robot, self._owner(),
                                   f"actions ({command.module} {command.name} here)")
        later = self._offloaded(msg, command, module)  # after the owner check: offloaded too
        if later is not None:
            return later

        def act():
            text = module.act(command, stepper.sim, self.robot, msg)
            stepper.refresh()  # a read right after the action shows its effect
            return text
        return msg.reply(self._on_stepper(act))

    def _offloaded(self, msg: Message, command: Command, module) -> Later | None:
        """In real time, an :class:`Offloaded` module's action: its job prepared from the
        world now, queued to the solver thread, answered by the hub once solved (None: not
        offloaded, carried out now). Error 12 when the connection's share is in flight."""
        offloaded = capability(module, Offloaded)
        stepper, offload = self.stepper, self.offload
        if offloaded is None or offload is None or stepper.mode != "realtime" \
                or not stepper.running:
            return None
        owner = self._owner()
        key = owner.key if owner is not None else None
        offload.admit(key)
        try:
            job = self._on_stepper(offloaded.prepare, command, stepper.sim, self.robot, msg,
                                   offload.seconds)
            return Later(msg, offload.submit(job.run), job.finish, key)
        except BaseException:
            offload.answered(key)
            raise

    def finish(self, later: Later) -> Message:
        """The reply to an offloaded action whose job is done (on the thread that serves)."""
        def apply():
            text = later.finish(self.stepper.sim, later.future.result())
            self.stepper.refresh()  # as for an action carried out now
            return text
        try:
            return reply_errors(self.name, later.msg,
                                lambda: later.msg.reply(self._on_stepper(apply)))
        finally:
            self.offload.answered(later.key)

    def _on_stepper(self, fn, *args):
        """Run ``fn`` where the World may be touched: in place when the hub serves from the
        stepper's own thread (or before its loop runs); else queued to it."""
        return self.stepper.run_now(fn, *args, timeout=CALL_WAIT)


def _stamp(snap, robot: str, module: str) -> tuple[int, ...]:
    """A read reply's params: ``(step,)``, or ``(step, taken)`` when the module updates at its
    own rate (coopsim.sim.rates): the step its held reading was taken at."""
    taken = snap.extra.get("taken")
    steps = taken.steps.get(module) if taken is not None else None
    row = snap.index[robot]
    if steps is None or row >= len(steps):
        return (snap.step,)
    return (snap.step, int(steps[row]))


def refuse_external(sim, robot: str, command: Command) -> None:
    """Error 17 (protocol 11) for a motion command to an external robot: its pose is its
    stream's (docs/in-the-loop.md), so a command would only be overridden the next step."""
    if robot in sim.external.tracks:
        raise ProtocolError(EXTERNAL_ROBOT, f"{robot} is an external robot: its pose comes "
                                            f"from its pose stream, so motion command "
                                            f"{command.name} ({command.id}) is refused "
                                            "(docs/in-the-loop.md)")
