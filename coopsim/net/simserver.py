"""``/sim``: the simulation's control server (time, mode, what is in the world).

Every change is queued onto the stepper thread (:meth:`Stepper.call`) and answered when it has been
carried out, so the reply tells the truth. Reads (status, the lists, state) answer from the latest
snapshot and never wait for the stepper: ``state`` keeps the layout document of the current
layout (built once per layout, on the stepper thread: by the change itself when it came through
``/sim``, else between two steps, the last snapshot of the layout before answered meanwhile) and
puts each snapshot's poses into it. Poses
and sizes on the wire are SI (m, kg) and yaw is in radians; colours are params [R, G, B] 0-255.
``state`` answers a JSON document in text.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from typing import Callable

import zmq

from . import protocol as p
from ..model.errors import CoopsimError, NotAllowedError, ProtocolError
from ..model.limits import (MAX_STEPS, check_object_spec, check_robot_fields, check_target_spec,
                            shown)
from ..formats.files import load, scenario_from_world
from ..formats.keys import external_spec
from .protocol import Command, Message
from .server import Server, answer_errors, split_request
from ..model.snapshot import rule_metrics, wrapped_poses
from ..model.statedoc import DocKey
from ..sim.describe import posed_layout
from ..sim.meshsource import mesh_source
from ..model.meshwire import indexed, reply_fields
from ..model.scenerydoc import mesh_triangles
from ..sim.slots import LEASE_MAX
from ..model.specs import (COLORS, MODES, SHAPES, ExternalSpec, ObjectSpec, RobotSpec,
                           TargetSpec, WorldSpec, check_dt)

CALL_WAIT = 10.0  # s to wait for the stepper to carry out a change (a load can take a while)
# s a load's own thread waits for the stepper to put the new world in place: /sim answers
# meanwhile, so only a stuck stepper should end it (a first imported arm compiles kernels)
LOAD_WAIT = 120.0
STEP_WAIT = 8.0  # s a step command waits for its steps (under the gateway's 10 s timeout)


class SimServer(Server):
    """Serves ``/sim`` for one stepper.

    Args:
        ctx: ZeroMQ context.
        stepper: The run's Stepper.
        on_layout: Called (on the stepper thread) after robots were inserted or removed, so the
            network can open or close robot endpoints.
        bind: Address to bind.
        recording: The run (an object with ``start_recording(path) -> str``,
            ``stop_recording() -> str``, ``recording_path``, ``recording_error`` and
            ``folders``, the data folders ``load`` may read), or None when neither recording
            on demand nor loading is offered.
    """

    def __init__(self, ctx: zmq.Context, stepper, on_layout: Callable[[], None] = lambda: None,
                 bind: str = "127.0.0.1", recording=None, advertise: str | None = None,
                 configure: Callable | None = None) -> None:
        super().__init__(ctx, "/sim", p.SIM_COMMANDS, bind, advertise=advertise,
                         configure=configure)
        self.stepper = stepper
        self.on_layout = on_layout
        self.recording = recording
        # (layout key, World.describe(), the snapshot it was described at); replaced whole,
        # by the stepper's thread (_describe) or this one
        self._layout: tuple | None = None
        self._describing: tuple | None = None  # the layout key a _describe is queued for
        self._posed: tuple | None = None  # (snapshot, layout, its posed JSON without "}")
        self.more_state: list[Callable[[], dict]] = []  # other servers' /sim state entries
        self._request: tuple = ([], b"")  # (envelope, payload) of the request being answered
        self._loading: threading.Thread | None = None  # the load under way (_load)
        self._mesh_replies: dict = {}  # (path, read by MuJoCo) -> the mesh reply's fields
        self._done: deque = deque()  # (envelope, reply) of loads done, for the server thread
        if not stepper.running:  # described now, in place: the first read has it
            self._layout = self._on_stepper(self._describe)

    def handle(self, msg: Message, command: Command) -> Message:
        return getattr(self, f"_{command.name}")(msg)

    def _on_stepper(self, fn, *args):
        return self.stepper.call(fn, *args).result(CALL_WAIT)

    def _relayout(self, fn, *args, wait: float = CALL_WAIT):
        def change():
            result = fn(*args)
            self.stepper.refresh()
            self.on_layout()
            self._layout = self._describe()  # a read after the reply sees the change
            return result
        return self.stepper.call(change).result(wait)

    # -- time ---------------------------------------------------------------------------------

    def _status(self, msg: Message) -> Message:
        st = self.stepper.stats()
        params = (st.steps, int(st.paused), MODES.index(st.mode), st.missed,
                  len(self.stepper.snapshot.robots), len(st.attached))
        data = (st.time, self.stepper.sim.dt, st.speed, st.rtf, st.wall,
                self.stepper.slots.lease)
        return msg.reply(st.mode, params=params, data=data)

    def _pause(self, msg: Message) -> Message:
        self._on_stepper(self.stepper.pause)
        return self._status(msg)

    def _resume(self, msg: Message) -> Message:
        self._on_stepper(self.stepper.resume)
        return self._status(msg)

    def _step(self, msg: Message) -> Message:
        n = msg.params[0] if msg.params else 1
        if not 1 <= n <= MAX_STEPS:
            raise ProtocolError(p.OUT_OF_RANGE, f"step count must be 1..{MAX_STEPS}, not {n}")

        def queue():  # on the stepper thread: no step slips in between reading and queueing
            if not self.stepper.paused:
                raise NotAllowedError("step takes steps of a paused run: pause it first "
                                      "(command 2)")
            return self.stepper.step(n), self.stepper.step_cuts
        target, cuts = self._on_stepper(queue)
        if self.stepper.running:  # a long run of steps is answered with its progress so far
            # (a pause, resume or reset, from a ROS 2 service meanwhile, ends the wait)
            self.stepper.wait_steps(target, cuts, min(STEP_WAIT, max(1.0, n * 0.01)))
        return self._status(msg)

    def _reset(self, msg: Message) -> Message:
        self._relayout(self.stepper.reset)
        return self._status(msg)

    def _set_mode(self, msg: Message) -> Message:
        if msg.text not in MODES:
            raise ProtocolError(p.OUT_OF_RANGE, f"mode must be one of {', '.join(MODES)}, "
                                                f"not {msg.text!r}")
        self._on_stepper(self.stepper.set_mode, msg.text)
        return self._status(msg)

    def _set_speed(self, msg: Message) -> Message:
        if not 0.0 <= msg.data[0] <= 1000.0:
            raise ProtocolError(p.OUT_OF_RANGE, f"speed must be within 0..1000 (0 = as fast as "
                                                f"possible), not {shown(msg.data[0], 0.0, 1000.0)}")
        self._on_stepper(self.stepper.set_speed, msg.data[0])
        return self._status(msg)

    def _set_dt(self, msg: Message) -> Message:
        why = check_dt(msg.data[0])
        if why:
            raise ProtocolError(p.OUT_OF_RANGE, why)
        self._on_stepper(self.stepper.set_dt, msg.data[0])
        return self._status(msg)

    def _set_lease(self, msg: Message) -> Message:
        lease = msg.data[0]
        if not 0.05 <= lease <= LEASE_MAX:  # capped: a lease is how long a hung controller
            raise ProtocolError(p.OUT_OF_RANGE,  # may hold the run (and its robot)
                                f"lease must be within 0.05..{LEASE_MAX:g} s, not "
                                f"{shown(lease, 0.05, LEASE_MAX)}")
        self.stepper.slots.lease = lease
        return self._status(msg)

    def _detach(self, msg: Message) -> Message:
        if msg.text not in self.stepper.snapshot.robots:  # error 5, as set_param (25) answers
            raise ProtocolError(p.UNKNOWN_NAME, f"no robot named {msg.text!r}; command 10 lists "
                                                "the robots")
        was = self.stepper.slots.detach(msg.text)
        self.stepper.slots.release(msg.text)  # an operator's detach frees it from its owner too
        return msg.reply("detached" if was else "was not attached", params=(int(was),))

    # -- listing ------------------------------------------------------------------------------

    def _list_robots(self, msg: Message) -> Message:
        return list_robots(msg, self.stepper.snapshot)

    def _list_objects(self, msg: Message) -> Message:
        return list_objects(msg, self.stepper.snapshot)

    def _list_targets(self, msg: Message) -> Message:
        return list_targets(msg, self.stepper.snapshot)

    def _state(self, msg: Message) -> Message:
        snap, body = self._posed_json()
        st = self.stepper.stats()
        figures = dict(step=snap.step, time=snap.time, dt=self.stepper.sim.dt, mode=st.mode,
                       paused=st.paused, speed=st.speed, rtf=st.rtf, missed=st.missed,
                       realtime=dict(broken=st.rt_broken, late=st.late, rtf=st.recent_rtf),
                       error=self.stepper.error, finished=st.finished,
                       waiting_for=list(st.waiting), stalled=st.stalled,
                       recording=self.recording.recording_path if self.recording else "",
                       recording_error=self.recording.recording_error if self.recording else "",
                       attached=list(st.attached), owners=self.stepper.slots.owners(),
                       seed=self.stepper.sim.seed,
                       scenario=self.stepper.sim.scenario.path, rules=dict(snap.rules),
                       metrics=[n for n, _ in rule_metrics(snap.rules)],
                       engine_warnings=list(snap.extra.get("engine_warnings", ())))
        for more in self.more_state:
            figures.update(more())
        return msg.reply(join_json(body, figures), params=(snap.step, snap.layout_version))

    def _posed_json(self) -> tuple:
        """The latest snapshot whose layout is described, and that layout with its poses as
        JSON (without the closing brace), serialized once per snapshot however many clients
        ask.

        A read never waits for the stepper (busy for seconds: a kernel compiled as a loaded
        world's plan is built, a long step): a layout changed through ``/sim`` is described by
        the change itself (:meth:`_relayout`); one changed otherwise (a timed event, a grasp)
        is described by the stepper between two steps, and until then reads answer the last
        snapshot of the layout before, whole and consistent."""
        snap, key = self.stepper.view()
        described = self._layout
        if described is None:  # a server made beside a running loop: its first read waits
            described = self._layout = self._on_stepper(self._describe)
        if described[0] != key:
            self._describe_soon(key)
            posed = self._posed
            snap = posed[0] if posed is not None and posed[1] is described[1] else described[2]
        layout = described[1]
        posed = self._posed
        if posed is None or posed[0] is not snap or posed[1] is not layout:
            posed = self._posed = (snap, layout, json.dumps(posed_layout(layout, snap))[:-1])
        return snap, posed[2]

    def _describe(self) -> tuple:
        """On the stepper thread, where the world and its snapshot agree: (the layout key,
        ``World.describe()``, the snapshot)."""
        snap, key = self.stepper.view()
        return key, self.stepper.sim.world.describe(), snap

    def _describe_soon(self, key: tuple) -> None:
        """Have the stepper describe layout ``key`` between two steps (once per key)."""
        if self._describing == key:
            return
        self._describing = key

        def described(future) -> None:  # on the stepper thread (or here, if refused)
            if future.exception() is None:
                self._layout = future.result()
            self._describing = None
        self.stepper.call(self._describe).add_done_callback(described)

    # -- insert, update, remove ---------------------------------------------------------------

    def _insert_object(self, msg: Message) -> Message:
        self._relayout(self.stepper.sim.world.add_object, _object_spec(msg))
        return self._list_objects(msg)

    def _update_object(self, msg: Message) -> Message:
        self._relayout(self.stepper.sim.world.update_object, _object_spec(msg))
        return self._list_objects(msg)

    def _remove_object(self, msg: Message) -> Message:
        self._relayout(self.stepper.sim.world.remove_object, msg.text)
        return self._list_objects(msg)

    def _insert_robot(self, msg: Message) -> Message:
        spec = _robot_spec(msg)
        world = self.stepper.sim.world

        def insert():
            world.add_robot(spec)
            try:
                self.stepper.refresh()
                self.on_layout()  # its endpoints: may run out of descriptors
            except CoopsimError:
                world.remove_robot(spec.name)  # all or nothing: close what was opened
                self.stepper.refresh()
                self.on_layout()
                raise
        self._relayout(insert)
        return self._list_robots(msg)

    def _update_robot(self, msg: Message) -> Message:
        spec = _robot_spec(msg)
        world = self.stepper.sim.world

        def replace():
            old = world.remove_robot(spec.name)
            try:
                world.add_robot(spec)
            except CoopsimError:
                world.add_robot(old, check=False)  # back where it was
                raise
        self._relayout(replace)
        return self._list_robots(msg)

    def _remove_robot(self, msg: Message) -> Message:
        self._relayout(self.stepper.sim.world.remove_robot, msg.text)
        return self._list_robots(msg)

    def _insert_target(self, msg: Message) -> Message:
        index = self._relayout(self.stepper.sim.world.add_target, _target_spec(msg))
        return msg.reply(msg.text, params=(index,))

    def _update_target(self, msg: Message) -> Message:
        self._relayout(self.stepper.sim.world.update_target, msg.params[0], _target_spec(msg))
        return self._list_targets(msg)

    def _remove_target(self, msg: Message) -> Message:
        self._relayout(self.stepper.sim.world.remove_target, msg.params[0])
        return self._list_targets(msg)

    def _load(self, msg: Message) -> Message | None:
        """Load a file inside the run's data folders (error 6 outside them, with the reason).

        Reading the file and building its world (seconds for a large map) happen on a thread of
        their own: /sim goes on answering meanwhile, the stepper stepping, and the reply comes
        when the new scenario has replaced the old one (one load at a time: error 6 while
        another is under way)."""
        folders = getattr(self.recording, "folders", None)
        if folders is None:
            raise NotAllowedError("this simulation loads no files on request")
        if threading.current_thread() is self._thread:  # the request: answered later
            if self._loading is not None and self._loading.is_alive():
                raise NotAllowedError("another load is under way: wait for its reply")
            request = self._request
            self._loading = threading.Thread(target=lambda: self._done.append(
                (request[0], answer_errors(self, request[1]))), name="coopsim/sim-load",
                daemon=True)
            self._loading.start()
            return None
        spec = load(msg.text, folders)
        if isinstance(spec, WorldSpec):
            spec = scenario_from_world(spec)
        world = self.stepper.sim.build(spec)
        self._relayout(self.stepper.reset, spec, world, wait=LOAD_WAIT)
        return self._status(msg)

    def _serve_one(self, frames: list, total: int) -> None:
        envelope, payload, _ = split_request(frames, total)
        self._request = (envelope, payload)  # for a request answered later (_load)
        super()._serve_one(frames, total)
        self.idle()

    def idle(self) -> None:
        """Send the replies of loads done since (on the server's thread, the socket's)."""
        while self._done:
            envelope, reply = self._done.popleft()
            try:
                self.socket.send_multipart(envelope + [reply.to_wire()], zmq.NOBLOCK)
            except zmq.ZMQError:
                pass  # the peer went away: nothing to answer

    def _mesh(self, msg: Message) -> Message:
        """Protocol 11: a mesh's triangles, indexed and bounded (model/meshwire.py); the file
        found on the stepper's thread, read and decimated here, once per file."""
        words = msg.text.split()
        if len(words) not in (1, 2):
            raise ProtocolError(p.WRONG_ARITY, "text must be 'MESH_NAME' (a world mesh) or "
                                               f"'ROBOT FILE' (a robot's mesh), not {msg.text!r}")
        spec = self._on_stepper(mesh_source, self.stepper.sim.world, words)
        key = (spec.path, spec.vertices is None)
        if key not in self._mesh_replies:
            try:
                tris = mesh_triangles(spec)
                self._mesh_replies[key] = reply_fields(*indexed(tris), len(tris))
            except (OSError, ValueError) as exc:
                raise ProtocolError(p.FAILED, f"mesh {msg.text}: its file cannot be read "
                                              f"({exc})") from None
        params, data = self._mesh_replies[key]
        return msg.reply(params=params, data=data)

    def _record(self, msg: Message) -> Message:
        if self.recording is None:
            raise NotAllowedError("this simulation cannot record on demand")
        on = msg.params[0] if msg.params else 1
        if on not in (0, 1):
            raise ProtocolError(p.OUT_OF_RANGE, "record takes params [1] (start) or [0] (stop)")
        path = self.recording.start_recording(msg.text) if on else self.recording.stop_recording()
        return msg.reply(path, params=(on,))

    def _set_param(self, msg: Message) -> Message:
        robot, _, rest = msg.text.partition(" ")
        dotted, _, word = rest.partition(" ")
        module, dot, name = dotted.partition(".")
        if not dot or bool(word) == bool(msg.data):
            raise ProtocolError(p.WRONG_ARITY, "text must be '<robot> <module>.<parameter>' with "
                                               "the value in data, or '... <word>' for a word")
        value = self._on_stepper(self.stepper.sim.set_param, robot, module, name,
                                 word or msg.data[0])
        if isinstance(value, str):
            return msg.reply(f"{robot} {dotted} {value}")
        return msg.reply(f"{robot} {dotted}", data=(float(value),))


#: The run's figures ``/sim state`` adds to the posed layout (the replay's ``/sim`` answers the
#: same keys: docs/reference/state.md is generated from them).
RUN_KEYS = (
    DocKey("step", "integer", "the step the document's poses are of"),
    DocKey("time", "number, s", "that step's simulated time"),
    DocKey("dt", "number, s", "the step length"),
    DocKey("mode", "string", "`realtime`, `lockstep` or (a replay) `playback`"),
    DocKey("paused", "boolean", "the run is paused"),
    DocKey("speed", "number", "the speed asked (`set_speed`), 0 = as fast as possible"),
    DocKey("rtf", "number", "the real-time factor (sim s per wall s)"),
    DocKey("missed", "integer", "realtime deadlines missed"),
    DocKey("attached", "list of names", "the robots whose controllers lockstep waits for"),
    DocKey("owners", "robot -> string", "how each owned robot's owner is named (`the "
           "connection from 127.0.0.1:52114`, `client key 'alice' (...)`; section 3, "
           "*Ownership*); `{}` in replays"),
    DocKey("seed", "integer", "the scenario's seed"),
    DocKey("scenario", "string or null", "the scenario file's path (\"\" for one built in "
           "code)"),
    DocKey("waiting_for", "list of strings", "lockstep only: the robots whose controllers a "
           "step has waited for longer than 0.5 s, or `[\"N more controller(s) to attach\"]` "
           "before the first step; empty otherwise"),
    DocKey("stalled", "number, s", "since the last step while `waiting_for` is not empty, "
           "else 0"),
    DocKey("realtime", "object", "the realtime steps of the last second of wall time; all "
           "0/false in lockstep, while paused and in replays", fields=(
        DocKey("late", "number 0..1", "the share that missed their deadline; 0 until a "
               "second has passed or 20 steps were taken since the start or a reset"),
        DocKey("rtf", "number", "the real-time factor they achieved"),
        DocKey("broken", "boolean", "`late` > 0.05 and `rtf` < 0.95 x the speed asked: the "
               "run falls behind the wall clock (`coopsim.model.snapshot.realtime_broken`, "
               "shared with the CLI and the viewer)"))),
    DocKey("error", "string", "why the run paused itself after a failing step (a driver or "
           "rule that raised names itself); in a replay why playing stopped (`playback "
           "stopped at T s, before the damage: ...`, docs/recording-format.md); \"\" "
           "normally"),
    DocKey("finished", "string", "why the run ended (`duration 20 s reached`, `RULE: "
           "REASON`), \"\" while it goes on; a finished run answers but takes no step, "
           "motion commands answer error 6"),
    DocKey("recording", "string", "the file being recorded (`/sim` 26), or \"\""),
    DocKey("recording_error", "string", "why writing the recording failed (`recording to F "
           "failed after N steps written: No space left on device; the run goes on without "
           "recording`), or \"\""),
    DocKey("rules", "label -> object", "each rule's fields: `{\"stop_when_all_at_target\": "
           "{\"at_target\": 3, \"all_since\": null}}`; timed events are `events` (`{events: "
           "[{name, at, done, step, time}], applied}`), monitors `monitors` (`{metrics: {name: "
           "value}, summary: {name: {max, mean, final, max_after}}, after}`)"),
    DocKey("metrics", "list of names", "the state stream's metrics, in its order: "
           "`LABEL.NAME` for each number of a rule's `metrics` field (`monitors.distance`)"),
    DocKey("engine_warnings", "list of strings", "what the engine could not do as the world "
           "asked without ending the run, each said (and logged) once since the world was "
           "built or reset (mujoco: `the world's contacts overflowed MuJoCo's arena ...`); "
           "`[]` in replays; a headless run's summary ends with a `warning` line for each",
           since=7),
)


def join_json(body: str, more: dict) -> str:
    """A JSON object's text without its closing brace, completed with the items of ``more``
    (keys not in it): one small dump per reply instead of the whole document."""
    tail = json.dumps(more)
    return body + (", " + tail[1:] if len(tail) > 2 else "}")


def list_robots(msg: Message, snap) -> Message:
    """Reply to list_robots (10) from a snapshot; the replay's /sim answers with it too."""
    return msg.reply("\n".join(snap.robots), params=(len(snap.robots),),
                     data=wrapped_poses(snap.poses).ravel().tolist())


def list_objects(msg: Message, snap) -> Message:
    """Reply to list_objects (11) from a snapshot."""
    return msg.reply("\n".join(snap.objects), params=(len(snap.objects),),
                     data=wrapped_poses(snap.object_poses).ravel().tolist())


def list_targets(msg: Message, snap) -> Message:
    """Reply to list_targets (12) from a snapshot."""
    data = [v for t in snap.targets for v in t.position]
    return msg.reply("\n".join(t.color for t in snap.targets), params=(len(snap.targets),),
                     data=data)


def _color(msg: Message, default) -> tuple[int, int, int]:
    if not msg.params:
        return default
    if len(msg.params) != 3:
        raise ProtocolError(p.OUT_OF_RANGE, "colour is params [R, G, B], each 0..255")
    return tuple(msg.params)


def _two_words(msg: Message, what: str) -> tuple[str, str]:
    words = msg.text.split()
    if len(words) != 2:
        raise ProtocolError(p.WRONG_ARITY, f"text must be '<name> <{what}>', not {msg.text!r}")
    return words[0], words[1]


def _object_spec(msg: Message) -> ObjectSpec:
    """The object of insert/update_object, checked against the model's limits (the files' rules
    and sentences): a bad name, size, pose, mass or colour is error 4."""
    name, shape = _two_words(msg, "shape")
    if shape not in SHAPES:
        raise ProtocolError(p.OUT_OF_RANGE, f"shape must be one of {', '.join(SHAPES)}")
    l, w, h, x, y, z, yaw, mass = msg.data
    spec = ObjectSpec(name, shape, (l, w, h), (x, y, z), yaw, mass, _color(msg, (150, 150, 150)))
    check_object_spec(spec)
    return spec


def _robot_spec(msg: Message) -> RobotSpec:
    """The robot of insert/update_robot; its name, pose and colour are checked here (the files'
    rules and sentences, error 4) before anything reaches the stepper, and the names its type
    derives when the world builds it (check_robot_spec)."""
    words = msg.text.split()
    name, rtype = _two_words(msg, "type") if words[2:3] != ["external"] else words[:2]
    x, y, z, yaw = msg.data
    spec = RobotSpec(rtype, name, (x, y, z), yaw, _color(msg, (40, 90, 230)),
                     external=_external_words(words[3:]) if len(words) > 2 else None)
    check_robot_fields(spec)
    return spec


def _external_words(words: list[str]) -> ExternalSpec:
    """Protocol 11: insert_robot's ``name type external [stale S] [max_speed V] [max_jump M]
    [max_rate HZ]`` makes an external robot, the words of a [ROBOT_n] ``external`` line."""
    try:
        return external_spec(words)
    except CoopsimError as exc:
        raise ProtocolError(p.OUT_OF_RANGE, f"insert_robot: {exc}") from None


def _target_spec(msg: Message) -> TargetSpec:
    if msg.text not in COLORS:
        raise ProtocolError(p.OUT_OF_RANGE, f"target colour must be one of {', '.join(COLORS)}")
    spec = TargetSpec(msg.text, tuple(msg.data))
    check_target_spec(spec)
    return spec
