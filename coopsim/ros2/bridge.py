"""The live bridge: a run's robots as ROS 2 topics over DDS (``coopsim run --ros2``).

A hook on the stepper hands each new snapshot to the bridge's thread (never blocking the step);
the thread publishes from the latest one: ``/clock``, ``/tf`` and every robot's odometry at
``rate`` Hz of sim time (every step in lockstep, where ROS controllers answer each step), scans
at their module's rate, ``/map`` and ``/tf_static`` (transient local) whenever the layout
changes. ``/R/cmd_vel`` Twists are read by a thread of their own at a bounded rate (each
robot's newest, :mod:`.cmdvel`) and go into the robot's command slot as a network client's
motion command would (:mod:`.drive`), so leases, lockstep attachment and the motion module's
limits are the same for ROS nodes as for ZeroMQ clients.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from ..model.errors import CoopsimError, NotAllowedError
from ..model.statedoc import DocKey
from ..sim.slots import Owner
from . import messages as m
from .cmdvel import CmdVelReaders
from .dds import LATCHED, Participant
from .external import ExternalTopics
from .drive import TwistRefused, drive_of
from .feedback import WRENCH, messages as feedback_messages
from .graph import GraphInfo
from .images import camera_messages
from .messages import CAMERA_INFO, IMAGE
from .scene import RosScene

log = logging.getLogger(__name__)

DEFAULT_RATE = 50.0  # Hz of sim time: /clock, /tf and odometry in realtime mode
WAKE = 0.1  # s the thread sleeps at most between two looks at the run (stop, layout)


@dataclass(frozen=True)
class RosTopic:
    """One topic of the bridge (docs/reference/ros2.md is generated from :data:`TOPICS`).

    Attributes:
        name: The topic; ``R`` stands for a robot's namespace (its name, ``-`` turned into
            ``_``), ``S`` for a squad, ``LABEL`` for a module's label.
        type: Its ROS type, short (``nav_msgs/Odometry``): the constant the code writes.
        when: When it is published (or, for ``subscribed``, what is read), QoS where it is
            not reliable, volatile, keep last 10.
        frame: Its ``header.frame_id`` ("" where none applies).
        subscribed: coopsim reads it rather than publishes it.
    """

    name: str
    type: str
    when: str
    frame: str = ""
    subscribed: bool = False


#: Every topic of a run with ``--ros2``: each robot's, then the run's.
TOPICS = (
    RosTopic("/R/odom", m.ODOMETRY, "`--ros2-rate` in realtime, every step in lockstep: the "
             "exact motion (noisy wheel odometry is the `odometry` module's); covariances x, "
             "y, yaw 1e-6, z, roll, pitch 1e6 (unobserved); in a 3D world height, full "
             "orientation and the 6-DoF twist, covariances all 1e-6",
             "pose in `R/odom`, twist in `R/base_link`"),
    RosTopic("/R/scan", m.SCAN, "at the ranging module's `rate` (> 0), else 10 Hz of sim "
             "time: the highest ranked range finder's; ranges from the mount, +inf for nothing "
             "(REP 117), the sonar's with the robot's radius added (`range_min` that radius), "
             "the lidar's no return (0) below `range_min`; `range_max` the module's "
             "`max_range` (+ the radius for the sonar), `scan_time` the scan's period, "
             "`intensities` empty", "`R/laser` (or the file's link)"),
    RosTopic("/R/scan_LABEL", m.SCAN, "as `/R/scan`, for every further ranging module",
             "`R/LABEL`"),
    RosTopic("/R/points", m.CLOUD, "with `/R/scan` when its lidar casts more than one "
             "channel: float32 `x`, `y`, `z`, dense", "`R/base_link`"),
    RosTopic("/R/camera3d/image_raw", IMAGE, "each time a `camera3d` with `publish` 1 "
             "renders: `rgb8`", "`R/camera3d`"),
    RosTopic("/R/camera3d/depth", IMAGE, "with the image, when `depth` is 1: `32FC1`, m along "
             "the optical axis, +inf for nothing", "`R/camera3d`"),
    RosTopic("/R/camera3d/camera_info", CAMERA_INFO, "with each image: `plumb_bob`, no "
             "distortion, K and P from `fov` and size; the principal point ((width - 1) / 2, "
             "(height - 1) / 2)", "`R/camera3d`"),
    RosTopic("/R/imu", m.IMU, "with the odometry, for a robot with the `imu` module (REP 145): "
             "`angular_velocity` and `linear_acceleration` its reading (rad/s; m/s², +9.81 on z "
             "at rest), covariances zero (unknown); `orientation` the true attitude "
             "(covariance 1e-6)", "`R/base_link` (or the file's link)"),
    RosTopic("/R/robot_description", m.STRING, "at the start and on layout changes, for a "
             "robot from an URDF: the file's text (rviz2 RobotModel: *Description Topic* "
             "`/R/robot_description`, *TF Prefix* `R`); transient local, keep last 1"),
    RosTopic("/R/joint_states", m.JOINT_STATE, "with the odometry, for a robot with a 3D arm "
             "(its joints base to flange, `joint_1` .. `joint_6` for the `irb120`) or from a "
             "description file (every moving joint): angles (rad), velocities (rad/s) and "
             "efforts (N m; a bag leaves the last two empty)", "(`name` says the joints)"),
    RosTopic("/R/cmd_vel", m.TWIST, "best effort (accepts reliable publishers); each robot's "
             "newest is applied, at most 1000 a second", "`R/base_link`", subscribed=True),
    RosTopic("/R/external/pose", "geometry_msgs/PoseStamped", "for a robot marked "
             "`external`: its pose (docs/in-the-loop.md)", "`map`", subscribed=True),
    RosTopic("/R/external/odom", m.ODOMETRY, "for a robot marked `external`: its pose",
             "`map`", subscribed=True),
    RosTopic("/clock", m.CLOCK, "with the odometry: sim time since the run's start or reset"),
    RosTopic("/tf", m.TF, "with the odometry: `R/odom` → `R/base_link`; with each image "
             "`R/base_link` → `R/camera3d`; arms' and described robots' links"),
    RosTopic("/tf_static", m.TF, "at the start and when robots come or go: `map` → `R/odom`, "
             "`R/base_link` → `R/laser`; meshes and terrain as `scenery/MESH_n`, "
             "`scenery/terrain`; transient local, keep last 1"),
    RosTopic("/map", m.GRID, "at the start and on layout changes; transient local, keep last "
             "1: walls and static objects rasterised at 0.05 m (100 occupied, 0 free), one cell "
             "of wall around the floor; `info.origin` is cell (0, 0)'s outer corner; rows go "
             "along y", "`map`"),
    RosTopic("/squads/S/feedback", WRENCH, "each step, for a squad under shared control "
             "(docs/in-the-loop.md): its feedback force (N)", "`map`"),
)


#: The keys of ``/sim state``'s ``ros2`` (docs/reference/state.md is generated from them).
ROS2_KEYS = (
    DocKey("domain", "integer", "the DDS domain id"),
    DocKey("loopback", "boolean", "DDS kept on 127.0.0.1 (`--ros2-discovery localhost`)"),
    DocKey("published", "integer", "messages written"),
    DocKey("errors", "integer", "publications that failed (the first is logged)"),
    DocKey("cmd_vel", "object", "the Twists of every `/R/cmd_vel`", fields=(
        DocKey("received", "integer", "Twists that reached coopsim"),
        DocKey("applied", "integer", "of them, stored as the robot's command"),
        DocKey("refused", "integer", "not finite, or beyond the motion module's limits"),
        DocKey("malformed", "integer", "could not be read as a Twist"),
        DocKey("dropped", "integer", "superseded by a newer Twist before they were read "
               "(docs/ros2.md, *Floods*)", since=13),
        DocKey("last_refusal", "string", "`ROBOT: why`"),
        DocKey("by_robot", "robot -> integer", "Twists applied"))),
    DocKey("external", "object", "external robots' poses taken from ROS 2 topics "
           "(docs/in-the-loop.md)", fields=(
        DocKey("received", "integer", "poses taken"),
        DocKey("malformed", "integer", "samples that could not be read"),
        DocKey("last_refusal", "string", "why the latest refused pose was refused"),
        DocKey("refused", "code -> integer", "poses refused, by error code (as a string)"))),
)
#: ``/sim state``'s ``ros2`` entry.
ROS2 = DocKey("ros2", "object", "the ROS 2 bridge's counts (docs/ros2.md)",
              present="a run with `--ros2`", fields=ROS2_KEYS)


@dataclass
class Counts:
    """What the bridge did, for ``/sim state``'s ``ros2`` entry."""

    published: int = 0  # messages written
    received: int = 0  # cmd_vel messages that reached coopsim
    applied: int = 0  # of them, stored as the robot's command
    refused: int = 0  # not finite, or beyond the motion module's limits
    malformed: int = 0  # could not be read as a Twist
    dropped: int = 0  # superseded by a newer one before they were read (.cmdvel's bound)
    errors: int = 0  # publications that failed (the first is logged)
    last_refusal: str = ""
    by_robot: dict = field(default_factory=dict)  # robot -> cmd_vel applied


class RosBridge:
    """Publish a live run to a ROS 2 graph and take ``cmd_vel`` from it.

    Args:
        stepper: The run's Stepper.
        domain: DDS domain id (ROS_DOMAIN_ID).
        loopback: Keep DDS on 127.0.0.1 (the default; docs/ros2.md).
        rate: Hz of sim time at which odometry, /tf and /clock go out in realtime mode.

    Raises:
        CoopsimError: cyclonedds is missing, the domain is out of range or cannot be joined,
            or ``rate`` is not positive.
    """

    def __init__(self, stepper, domain: int = 0, loopback: bool = True,
                 rate: float = DEFAULT_RATE) -> None:
        if not rate > 0:
            raise CoopsimError(f"--ros2-rate must be > 0 Hz, not {rate:g}")
        self.stepper, self.rate = stepper, float(rate)
        self.dds = Participant(domain, loopback)
        self.graph = GraphInfo(self.dds)  # /coopsim in `ros2 node list`
        self.dds.on_endpoint = self.graph.add
        self.domain, self.loopback = self.dds.domain_id, loopback
        #: The owner of the robots ROS drives: one for the whole graph (DDS does not say which
        #: node published a Twist), so a ZeroMQ client cannot take a robot ROS drives, nor ROS
        #: one a client owns (error 11's rules, docs/protocol.md section 3).
        self.owner = Owner(("ros2", self.domain), f"ROS 2 (DDS domain {self.domain})")
        self.counts = Counts()
        self._writers: dict[str, object] = {}
        self._readers: set[str] = set()  # robots whose cmd_vel is read
        self.cmd_vel = CmdVelReaders(self.dds, self._apply, self.counts)
        self._drives: dict[str, object] = {}
        self.external = ExternalTopics(stepper, self.dds)  # external robots' poses
        self._scene: tuple | None = None  # (layout key, RosScene)
        self._origins: dict = {}
        self._images: dict = {}  # robot -> the step of its camera3d image sent last
        self._next_odom = 0.0
        self._time = 0.0  # the sim time of the snapshot published from last, s
        self._feedback_step = -1  # the step whose feedback went out last
        self._latest = None
        self._new = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="coopsim-ros2", daemon=True)

    # -- life -----------------------------------------------------------------------------------

    def start(self) -> "RosBridge":
        """Publish the current layout, hook onto the steps, start the thread (once)."""
        if self._thread.ident is None:
            snap, key = self.stepper.view()
            self._publish(snap, key)
            self.stepper.hooks.append(self)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop publishing and leave the DDS domain."""
        self._stop.set()
        self._new.set()
        if self in self.stepper.hooks:
            self.stepper.hooks.remove(self)
        if self._thread.is_alive():
            self._thread.join(5.0)
        self.cmd_vel.close()
        self._readers.clear()
        self._writers.clear()
        self.graph.close()
        self.dds.close()

    def __call__(self, snap) -> None:
        """The stepper's hook: note the newest snapshot (on the stepper thread; no work)."""
        self._latest = snap
        self._new.set()

    def state(self) -> dict:
        """The ``ros2`` entry of ``/sim state``."""
        c = self.counts
        return {"ros2": {"domain": self.domain, "loopback": self.loopback,
                         "published": c.published, "errors": c.errors,
                         "cmd_vel": {"received": c.received, "applied": c.applied,
                                     "refused": c.refused, "malformed": c.malformed,
                                     "dropped": c.dropped, "last_refusal": c.last_refusal,
                                     "by_robot": dict(c.by_robot)},
                         "external": self.external.state()}}

    # -- publishing (the bridge's thread) ---------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            self._new.wait(WAKE)
            self._new.clear()
            if self._stop.is_set() or self._latest is None:
                continue
            try:
                snap, key = self.stepper.view()
                self._publish(snap, key)
            except Exception as exc:  # noqa: BLE001 - the bridge must never take the run down
                self.counts.errors += 1
                if self.counts.errors == 1:
                    log.warning("ros2 bridge: %s", exc)

    def _publish(self, snap, key) -> None:
        """Publish what is due at ``snap``."""
        if snap.time < self._time:
            self._rewind(snap.time)
        self._time = snap.time
        scene = self._scene_for(snap, key)
        ns = round(snap.time * 1e9)
        if self.stepper.mode == "lockstep" or snap.time + 1e-9 >= self._next_odom:
            self._next_odom = snap.time + 1.0 / self.rate
            self._write("/clock", m.CLOCK, m.clock(ns))
            self._write("/tf", m.TF, scene.transforms(snap, ns))
            self._write_each(m.ODOMETRY, scene.odometry(snap, ns))
            for topic, data in scene.imu(snap, ns):
                self._write(topic, m.IMU, data)
            for topic, short, data in scene.arm_messages(snap, ns):
                self._write(topic, short, data)
        self._write_each(m.SCAN, scene.scans(snap, ns))
        for topic, short, data in camera_messages(snap, self._images, scene.params):
            self._write(topic, short, data)
        for topic, data in scene.clouds():
            self._write(topic, m.CLOUD, data)
        self._feedback(snap)

    def _rewind(self, now: float) -> None:
        """Sim time went back (a reset: it starts over at 0): what is due is due from ``now``
        on, not once the run has caught up with the time it had reached (``/clock``, ``/tf``
        and odometry would stop for that long, and a ``use_sim_time`` node with them)."""
        self._next_odom = now
        self._images.clear()
        self._feedback_step = -1
        if self._scene is not None:
            for r in self._scene[1].robots:
                for s in r.scans:
                    s.due = min(s.due, now)

    def _feedback(self, snap) -> None:
        """Shared control's feedback force of each steered squad (docs/in-the-loop.md), once
        per step it was computed at."""
        if snap.step < self._feedback_step:
            self._feedback_step = -1  # a reset: the steps start over
        for topic, data in feedback_messages(snap, self._feedback_step):
            self._write(topic, WRENCH, data)
        self._feedback_step = max(self._feedback_step, snap.step - 1)

    def _write_each(self, short: str, messages) -> None:
        """Write (topic, payload) pairs of one type: the per-robot messages of a step (one
        lookup and one count update per message, no more: 100 robots write ~120 a step)."""
        writers, count = self._writers, 0
        for topic, data in messages:
            writer = writers.get(topic)
            if writer is None:
                writer = writers[topic] = self.dds.writer(topic, short)
            writer.write(data)
            count += 1
        self.counts.published += count

    def _write(self, topic: str, short: str, data: bytes, qos=None) -> None:
        writer = self._writers.get(topic)
        if writer is None:
            writer = self._writers[topic] = (self.dds.writer(topic, short, qos) if qos
                                             else self.dds.writer(topic, short))
        writer.write(data)
        self.counts.published += 1

    def _scene_for(self, snap, key) -> RosScene:
        if self._scene is not None and self._scene[0] == key and self._scene[1].fits(snap):
            return self._scene[1]
        (snap, key), layout, params, drives = self.stepper.call(self._describe).result(10.0)
        scene = RosScene(layout, snap, params, self._origins)
        self._origins = scene.origins
        self._scene = (key, scene)
        self._drives = drives
        ns = round(snap.time * 1e9)
        self._write("/map", m.GRID, scene.grid(ns), LATCHED)
        self._write("/tf_static", m.TF, scene.static_transforms(ns), LATCHED)
        for topic, data in scene.descriptions():
            self._write(topic, m.STRING, data, LATCHED)
        for r in scene.robots:
            if r.name in drives and r.name not in self._readers:
                self._readers.add(r.name)
                self.cmd_vel.add(r.name, f"/{r.ns}/cmd_vel")
        self.external.follow(scene.robots)  # external robots' pose topics
        return scene

    def _describe(self):
        """On the stepper thread: the snapshot and layout together, each robot's module
        parameters (ranges, rates) and how a Twist drives it."""
        world = self.stepper.sim.world
        params = {r.name: {label: values.as_dict() for label, values in r.modules.items()}
                  for r in world.robots}
        drives = {}
        for r in world.robots:
            drive = drive_of(r, params[r.name])
            if drive is not None:
                drives[r.name] = drive
        return self.stepper.view(), world.describe(), params, drives

    # -- cmd_vel (.cmdvel's thread) ---------------------------------------------------------------

    def _apply(self, robot: str, linear: tuple, angular: tuple) -> None:
        """One Twist (m/s, rad/s in the robot's base frame) into ``robot``'s command slot
        (lockstep: attaching it)."""
        c = self.counts
        drive, stepper = self._drives.get(robot), self.stepper
        snap = stepper.snapshot
        if drive is None or robot not in snap.index or stepper.finished:
            return
        try:
            yaw = float(snap.poses[snap.index[robot], 2])
            values = drive.command(linear, angular, yaw)
        except TwistRefused as exc:
            c.refused += 1
            c.last_refusal = f"{robot}: {exc}"
            return
        try:
            stepper.slots.put(robot, drive.module, values, attach=stepper.mode == "lockstep",
                              owner=self.owner)
        except NotAllowedError as exc:  # owned by another, or detached for holding the run
            c.refused += 1
            c.last_refusal = f"{robot}: {exc}"
            return
        c.applied += 1
        c.by_robot[robot] = c.by_robot.get(robot, 0) + 1
