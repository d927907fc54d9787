"""``camera3d``: an RGB-D image camera in a 3D world, rendered offscreen by MuJoCo.

The camera sits at ``x``, ``y``, ``z`` (m) in the body frame of the robot's chassis, looking
along the body's +x turned by ``yaw`` (deg, + = left) and tilted by ``pitch`` (deg, + = down);
it moves and tilts with the body (a quadrotor's camera rolls with it). Images are ``width`` x
``height`` pixels with a vertical field of view ``fov`` (deg, square pixels), clipped at
``near`` and ``far`` (m); depth is the distance along the optical axis (ROS's depth image), m.
``noise`` adds Gaussian noise of that standard deviation to each colour level (0..255, rounded
and clipped) and ``depth_noise`` (m) to each depth, from a generator seeded by the run's seed,
the robot's name and the step for a read, from the run's generator for a published image: the
same run gives the same images. A camera does not see its own robot.

Images render in the run's render process (coopsim.physics.mujoco.renderproc). A camera nobody
reads costs nothing: an image is rendered when a client reads one (command ``read``, answered
between two steps on the thread that owns the world; an in-process driver's read gives it as
numpy) or, for a camera whose ``publish`` is 1, at its ``rate`` (Hz) for the recording and the
ROS 2 and Foxglove bridges: rendered from its due step's state while the world steps on and
published at the camera's next due step, one period later. The reading is the step of the
camera's latest published image (0 before any, or when it does not publish): while no camera
publishes the step leaves the module out altogether. Only an engine with a renderer
(``mujoco``) renders: elsewhere a read answers error 4.
"""

from __future__ import annotations

import logging
import math
import zlib
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ...model.commands import Command
from ...model.errors import SimulationError
from ...model.images import (MOUNT, ImageReading, View, depth_mm, encode, encode_frame,
                              framed, intrinsics, parse_request, png, unpng)
from ...model.module import Module
from ...model.params import ParamSpec
from .common import rate

log = logging.getLogger(__name__)

SIDE = 4096  # pixels: the largest width or height (a 4K frame; 100,000 is refused)


@dataclass(frozen=True)
class Image:
    """One published image (immutable: it travels in snapshots).

    Attributes:
        step, time: When it was rendered (s). rgb: (h, w, 3) uint8, read-only.
        depth: (h, w) float32 m (+inf: nothing within far), read-only, or None.
        fov, near, far: The camera's vertical field of view (deg) and clipping distances (m).
        mount: The camera's x, y, z (m), yaw, pitch (deg) on its body when it rendered (the
            bridges' camera frame, coopsim.model.images.optical_pose); None: not known (a
            recording's images: the bridges take the scenario's).
        published: The step whose snapshot first carried it (one camera period after
            ``step``: rendered meanwhile in the render process), -1 when not known (replayed).
    """

    step: int
    time: float
    rgb: np.ndarray
    depth: np.ndarray | None
    fov: float
    near: float
    far: float
    mount: tuple | None = None
    published: int = -1


@dataclass(frozen=True)
class Images:
    """The latest published image of every camera that publishes: robot name -> Image."""

    seen: Mapping[str, Image]


class Camera3d(Module):
    """RGB and depth images rendered by MuJoCo from a camera mounted on the chassis.

    - **Geometry.** The camera sits at ``x``, ``y``, ``z`` (m) in the chassis's body frame and
      looks along the body's +x turned by ``yaw`` (degrees, + = left) and tilted by ``pitch``
      (degrees, + = down): it moves, rolls and pitches with the body. Images are ``width`` ×
      ``height`` pixels, rows top first, square pixels, with a vertical field of view ``fov``
      (degrees); the pinhole intrinsics are fx = fy = (height / 2) / tan(fov / 2), cx = (width
      − 1) / 2, cy = (height − 1) / 2 (pixels; ROS's and OpenCV's convention: the first pixel's
      centre is 0). Nothing nearer than ``near`` or farther than ``far`` (m) is seen. A camera
      does not see its own robot: every geom of the tree of bodies its chassis roots (rotors,
      arms, links) is left out of its images, as the 3D range sensors skip them; another
      robot's camera sees them.
    - **What it shows.** Floor, walls, objects and robots in their colours (an object's and a
      robot's ``color``), lit by a headlight at the camera; no shadows, reflections or sky
      (each cost more than the image on a software renderer).
    - **Depth** is the distance along the optical axis (the z of ROS's depth images), m,
      float32; ``+inf`` where nothing lies within ``far``.
    - **Noise.** ``noise`` adds Gaussian noise of that standard deviation to each colour level
      (0..255, rounded and clipped), ``depth_noise`` (m) to each depth. A read's noise comes
      from a generator seeded by the run's seed, the robot's name and the step; a published
      image's from the run's generator, drawn in the run's process when the image is published:
      the same seed gives the same images.
    - **Where it renders.** In a render process of the run's own, started with the first image
      (the run's process never opens an OpenGL context, so a process that draws with pyglet can
      hold cameras too). A render process that dies is said in one sentence (error 8 on a read)
      and the next image starts a new one.
    - **Cost.** A camera nobody reads costs nothing. An image is rendered when a client reads
      one (command ``read``, 5000; within the image budgets, error 18 beyond:
      docs/protocol.md, *Image budgets*) or, with ``publish 1``, at the camera's
      ``rate`` (Hz; 0 = every step) for the recording, ROS 2 and bag exports; a published image
      shows the step it is due and is published one camera period later, so the stepper never
      waits for it. On Mesa's software renderer a 160 x 120 image costs about 1 ms, a 640 x 480
      RGB-D image 5-10 ms.
    - **Reading it.** ``bot.camera3d.read()`` (Python client) returns the image as a numpy
      array: (height, width, 3) uint8 RGB; ``read("depth")`` a (height, width) float32 depth
      image in metres; ``read("rgbd")`` the RGB array with the depth as ``.depth``; every
      result also has ``.rgb``, ``.step``, ``.time``, ``.k`` (fx, fy, cx, cy) and ``.near``,
      ``.far``. ``read("rgb png")`` asks for PNG on the wire (smaller, slower). Any other
      client sends command 5000 with the text ``[rgb|depth|rgbd] [raw|png] [frame]``:
      docs/protocol.md, *Camera images*, says what the reply holds.
    - **How an image travels.** The Python client asks for the pixels raw in a second ZeroMQ
      frame (no base64, no copy); ``cf.image_frames = False`` asks for base64 in the text.
      Other languages: read every frame of the reply (docs/protocol.md, *The pixels in a
      frame of their own*); the JSON gateway answers with base64.
    - **Out.** Published images go into the recording (format 6: a PNG per image, depth to the
      millimetre; docs/recording-format.md) and out as ROS 2 ``sensor_msgs/Image`` on
      ``/<robot>/camera3d/image_raw`` (``rgb8``) and ``/<robot>/camera3d/depth`` (``32FC1``)
      with ``sensor_msgs/CameraInfo`` on ``/<robot>/camera3d/camera_info`` (frame
      ``<robot>/camera3d``), live with ``coopsim run --ros2`` and in ``coopsim export
      --rosbag``; and to Foxglove as ``foxglove.RawImage`` on ``/robots/<robot>/camera3d`` and
      ``/robots/<robot>/camera3d/depth`` (the live bridge, to subscribers only, and ``coopsim
      export --foxglove``).
    - **The camera's frame.** ``<robot>/camera3d`` is an optical frame (ROS's REP 103
      convention for cameras: z along the optical axis, x to the image's right, y down it),
      placed at the mount (``x``, ``y``, ``z``, ``yaw``, ``pitch`` on the body when the image
      was rendered). With each image ROS 2's ``/tf`` gets ``<robot>/base_link`` →
      ``<robot>/camera3d`` and Foxglove's ``/tf/cameras`` ``<robot>`` → ``<robot>/camera3d``
      (docs/ros2.md, docs/foxglove.md), so rviz2 and Foxglove place the image where the camera
      is.
    - **Refused.** A size outside 1..4096 pixels (0, or 100,000 × 100,000), ``fov`` outside
      1..170 degrees (0 and 180 are refused), ``near`` below 1 mm: at the scenario's ``param``
      line (``file:line: parameter width = 100000 is out of range [1, 4096]``, exit 2) or over
      the network with error 4 and the range; nothing is rendered or allocated. A read on an
      engine without a renderer (the 2D engines, ``aerial``) is error 4 (``camera3d renders
      images with MuJoCo: the aerial engine has no renderer (use engine mujoco)``). Where the
      renderer cannot start, a read is error 8 with one sentence saying what is missing
      (``camera3d cannot render: MuJoCo's egl renderer needs libEGL with Mesa (Debian: libegl1
      libegl-mesa0 libgl1-mesa-dri) and PyOpenGL (...); set MUJOCO_GL=egl or osmesa``).

    On the wire (robot endpoint commands; the protocol's section 3):

    - ``read`` (5000): request text ``[rgb|depth|rgbd] [raw|png] [frame]`` (optional;
      default ``rgb raw``); reply an image rendered now from the world of the last completed
      step (a read: open to every connection): params ``[step, width, height]``, data ``[time
      s, fx, fy, cx, cy (pixels), near, far (m)]``, text one line per image, ``<encoding>
      <format> <base64>``; with the last word ``frame`` (protocol 11) ``<encoding> <format>
      frame <offset> <length>`` and the pixels raw in a second ZeroMQ frame after the message
      (*Camera images* below); error 4 for other words or on an engine without a renderer,
      error 8 when the renderer cannot start, error 18 over the image budgets (version 12,
      *Image budgets* below)
    """

    label = "camera3d"
    mount = "xyz_yaw"  # a described robot's ``sensor camera3d LINK`` sets x, y, z and yaw
    description = ("RGB-D image camera (3D engines): width x height pixels, vertical fov (deg), "
                   "depth m along the optical axis; rendered on read, or at rate when published")
    params = (
        ParamSpec("width", "int", "image width, pixels", 160, 1, SIDE, "px"),
        ParamSpec("height", "int", "image height, pixels", 120, 1, SIDE, "px"),
        ParamSpec("fov", "float", "vertical field of view, degrees", 60.0, 1.0, 170.0, "deg"),
        ParamSpec("near", "float", "nearest distance seen, m", 0.01, 0.001, 100.0, "m"),
        ParamSpec("far", "float", "farthest distance seen, m", 50.0, 0.01, 10000.0, "m"),
        ParamSpec("x", "float", "mount point forward of the body origin, m", 0.0, -10.0, 10.0,
                  "m"),
        ParamSpec("y", "float", "mount point left of the body origin, m", 0.0, -10.0, 10.0, "m"),
        ParamSpec("z", "float", "mount point above the body origin, m", 0.0, -10.0, 10.0, "m"),
        ParamSpec("yaw", "float", "camera turned left of the body's x, degrees", 0.0, -180.0,
                  180.0, "deg"),
        ParamSpec("pitch", "float", "camera tilted down, degrees", 0.0, -90.0, 90.0, "deg"),
        ParamSpec("noise", "float", "std of Gaussian noise on each colour level (0..255)", 0.0,
                  0.0, 255.0, "levels"),
        ParamSpec("depth_noise", "float", "std of Gaussian noise on each depth, m", 0.0, 0.0,
                  10.0, "m"),
        ParamSpec("publish", "int", "1: render at rate for the recording and the bridges "
                  "(0: only when read)", 0, 0, 1, ""),
        ParamSpec("depth", "int", "1: published images carry depth too", 1, 0, 1, ""),
        rate(),
    )
    commands = (Command(5000, "read", "camera3d", kind="read", text="opt",
                        doc="an image rendered now: text '[rgb|depth|rgbd] [raw|png] [frame]' "
                            "(default rgb raw); reply text one line per image "
                            "'<encoding> <format> <base64>' (with frame: '<encoding> <format> "
                            "frame <offset> <length>', the pixels in a ZeroMQ frame after the "
                            "message), params [step, width, height], "
                            "data [time s, fx, fy, cx, cy px, near, far m]"),)
    fields = ("published",)
    #: the step leaves the kind out while every camera's ``publish`` is 0 (coopsim.sim.sensing)
    idle_unless = "publish"

    @classmethod
    def sense(cls, frame, rows, p, prev):
        return np.where(p["publish"] > 0, float(frame.step), prev[:, 0])[:, None]

    @classmethod
    def measure(cls, frame, rows, p, prev, rng):
        """The cameras with ``publish`` 1 publish the image queued at their previous due step
        (rendered meanwhile by the render process, beside the stepper: one period late, stamped
        with the step it shows) and queue this step's; the reading is the step of each
        camera's latest published image (0 before any, or when it does not publish)."""
        out = prev.copy()
        pub = np.nonzero(p["publish"] > 0)[0]
        if not len(pub) or frame.state3d is None:
            return out
        picks = [{k: p[k][i] for k in p} for i in pub.tolist()]
        names = [frame.names[rows[i]] for i in pub.tolist()]
        old = frame.extra.get(cls.label)
        seen = dict(old.seen) if old is not None else {}
        for i, name, (tag, shot) in zip(pub.tolist(), names, _taken(frame.physics, names)):
            if shot is None or _stale(tag[0], frame, p["rate"][i]):
                continue
            (step, time, q), (rgb, depth) = tag, shot
            rgb, depth = noisy(rgb, depth, q, rng)  # the run's generator: seeded
            rgb.flags.writeable = False
            if depth is not None:
                depth.flags.writeable = False
            mount = tuple(float(q[k]) for k in MOUNT)  # the bridges' camera frame (/tf)
            seen[name] = Image(step, time, rgb, depth, float(q["fov"]), float(q["near"]),
                               float(q["far"]), mount, frame.step)
            out[i, 0] = float(step)
        views = [view(frame.state3d[rows[i]], q, bool(q["depth"]))
                 for i, q in zip(pub.tolist(), picks)]
        try:
            frame.physics.render_submit(views, [int(rows[i]) for i in pub.tolist()],
                                        [(cls.label, n) for n in names],
                                        [(frame.step, frame.time, q) for q in picks])
        except SimulationError as exc:  # the run goes on; the next due step tries again
            log.warning("%s", exc)
        if seen or old is not None:  # no board before the first image
            alive = set(frame.names)
            frame.extra[cls.label] = Images(MappingProxyType(
                {n: s for n, s in seen.items() if n in alive}))
        return out

    @classmethod
    def record(cls, snap, after):
        """The images published after step ``after`` (recording format 6): ``{"robots":
        [name...], "steps": [step...], "times": [s...], "rgb": [PNG...], "depth": [16-bit
        PNG of mm, or empty...], "lens": [[fov deg, near m, far m]...]}``; None if none."""
        board = snap.extra.get(cls.label)
        names = [n for n, i in board.seen.items() if max(i.step, i.published) > after] \
            if board else []
        if not names:
            return None
        shots = [board.seen[n] for n in names]
        return {"robots": names, "steps": [i.step for i in shots],
                "times": [i.time for i in shots], "rgb": [png(i.rgb) for i in shots],
                "depth": [b"" if i.depth is None else png(depth_mm(i.depth)) for i in shots],
                "lens": [[i.fov, i.near, i.far] for i in shots]}

    @classmethod
    def replay(cls, data, board, robots):
        """The images a recorded step carries (its ``record``) over the previous step's
        (cameras that published none keep theirs; robots gone are dropped)."""
        alive = set(robots)
        seen = {n: i for n, i in board.seen.items() if n in alive} if board is not None else {}
        for k, name in enumerate(data["robots"] if data else ()):
            rgb = unpng(data["rgb"][k])
            depth = None
            if data["depth"][k]:
                mm = unpng(data["depth"][k])
                depth = np.where(mm == 0, np.inf, mm / 1000.0).astype(np.float32)
                depth.flags.writeable = False
            rgb.flags.writeable = False
            seen[name] = Image(data["steps"][k], data["times"][k], rgb, depth, *data["lens"][k])
        return Images(MappingProxyType(seen)) if seen else board

    #: The robot server checks a read's text with this before queueing the render on the
    #: world's thread (error 4 at once, whatever the load).
    check_read_text = staticmethod(parse_request)

    @classmethod
    def read_local(cls, command, sim, robot: str, values, text: str) -> ImageReading:
        """A ``read`` by an in-process driver (``bot.camera3d.read(text)``, on the thread that
        owns the world): the image as numpy, as the network client gives it
        (:class:`ImageReading`; the text's format word is ignored)."""
        kind, _ = parse_request(text)
        snap = sim.snapshot
        q = {s.name: values[s.name] for s in cls.params}
        (rgb, depth), = _render(sim.world.engine, snap.index[robot], q, kind != "rgb")
        rgb, depth = noisy(rgb, depth, q, stream(sim.seed, robot, snap.step))
        rgb, depth = (rgb if kind != "depth" else None), (depth if kind != "rgb" else None)
        out = np.asarray(rgb if rgb is not None else depth).view(ImageReading)
        out.rgb, out.depth, out.step, out.time = rgb, depth, snap.step, snap.time
        out.k = intrinsics(int(q["width"]), int(q["height"]), q["fov"])
        out.near, out.far = float(q["near"]), float(q["far"])
        return out

    @classmethod
    def read_world(cls, command, sim, robot: str, values, text: str) -> tuple:
        """A ``read`` rendered now, on the thread that owns the world: (text, params, data)
        of the reply (coopsim.model.images), and its pixel frame when the text ends with
        ``frame`` (protocol 11)."""
        kind, fmt = parse_request(text)
        snap = sim.snapshot
        q = {s.name: values[s.name] for s in cls.params}
        row = snap.index[robot]  # its camera does not see its own robot
        (rgb, depth), = _render(sim.world.engine, row, q, kind != "rgb")
        rgb, depth = noisy(rgb, depth, q, stream(sim.seed, robot, snap.step))
        asked = (rgb if kind != "depth" else None, depth if kind != "rgb" else None, fmt)
        reply = encode_frame(*asked) if framed(text) else (encode(*asked),)  # frame: protocol 11
        w, h = int(q["width"]), int(q["height"])
        return reply[0], (snap.step, w, h), (snap.time, *intrinsics(w, h, q["fov"]), q["near"],
                                             q["far"]), *reply[1:]


    @classmethod
    def read_bytes(cls, values, text: str) -> tuple[int, str]:
        """The bytes of pixels a ``read`` with ``text`` renders (3 a pixel for rgb, 4 for
        depth, 7 for rgbd), what the image budgets count (coopsim.net.imagereads), and the
        image in words (``a 160x120 rgbd image``)."""
        kind, _ = parse_request(text)
        w, h = int(values["width"]), int(values["height"])
        return w * h * (3 * (kind != "depth") + 4 * (kind != "rgb")), f"a {w}x{h} {kind} image"

    @classmethod
    def read_submit(cls, command, sim, robot: str, values, text: str, slot: int) -> "ReadJob":
        """A ``read`` whose render is queued now (the thread that owns the world: the view
        and the state of this step) and answered later (:class:`ReadJob`), so the world steps
        on while the render process renders (coopsim.net.imagereads)."""
        kind, _ = parse_request(text)
        snap = sim.snapshot
        if robot not in snap.index:
            raise SimulationError(f"/{robot} is not in the simulation any more")
        q = {s.name: values[s.name] for s in cls.params}
        engine, row = sim.world.engine, snap.index[robot]
        key = ("read", slot)
        engine.render_submit([view(engine.state3d()[row], q, kind != "rgb")], [row], [key])
        return ReadJob(engine, key, text, q, (snap.step, snap.time),
                       stream(sim.seed, robot, snap.step))


class ReadJob:
    """A queued ``read``: :meth:`ready` says whether its image is back, :meth:`finish` gives
    the reply's (text, params, data, *frames) as :meth:`Camera3d.read_world` does (both on
    the thread that owns the world)."""

    def __init__(self, engine, key, text: str, q: Mapping, when: tuple, rng) -> None:
        self.engine, self.key, self.text, self.q, self.when, self.rng = \
            engine, key, text, q, when, rng

    def ready(self) -> bool:
        """Whether the image is back (never waits)."""
        return self.engine.render_ready(self.key)

    def finish(self) -> tuple:
        """The reply's fields: the image with its noise, encoded as asked."""
        got = self.engine.render_take(self.key)
        if got is None:
            raise SimulationError("camera3d: the image was lost (the world was reloaded or "
                                  "the render process restarted): read again")
        rgb, depth = got[1]
        kind, fmt = parse_request(self.text)
        rgb, depth = noisy(rgb, depth, self.q, self.rng)
        asked = (rgb if kind != "depth" else None, depth if kind != "rgb" else None, fmt)
        reply = encode_frame(*asked) if framed(self.text) else (encode(*asked),)
        q, (step, time) = self.q, self.when
        w, h = int(q["width"]), int(q["height"])
        return reply[0], (step, w, h), (time, *intrinsics(w, h, q["fov"]), q["near"],
                                        q["far"]), *reply[1:]


def _stale(step: int, frame, rate: float) -> bool:
    """Whether an image rendered at ``step`` is older than two of its camera's periods (its
    camera stopped publishing meanwhile): dropped, not published late."""
    period = max(1, round(1.0 / (rate * frame.dt))) if rate > 0 else 1
    return frame.step - step > 2 * period


def _taken(physics, names: list) -> list[tuple]:
    """(tag, (rgb, depth)) of the image queued for each of ``names`` at its camera's previous
    due step, (None, None) where none is (the first, or one lost with a render process that
    died: said once in the log)."""
    out = []
    for name in names:
        try:
            got = physics.render_take((Camera3d.label, name))
        except SimulationError as exc:
            log.warning("%s", exc)
            got = None
        out.append(got if got is not None else (None, None))
    return out


def view(state: np.ndarray, q: Mapping, depth: bool) -> View:
    """The :class:`View` of a camera with parameters ``q`` on a body of state ``state``
    (x, y, z m, quaternion w, x, y, z body to world, ...). Plain floats, not numpy: one
    camera's few products cost less so, once per image on the stepper's thread."""
    w, x, y, z = (float(v) for v in state[3:7])
    rot = ((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
           (2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
           (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))

    def turned(v):  # rot @ v
        return tuple(r[0] * v[0] + r[1] * v[1] + r[2] * v[2] for r in rot)
    yaw, pitch = math.radians(float(q["yaw"])), math.radians(float(q["pitch"]))
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    forward = turned((cp * cy, cp * sy, -sp))  # Rz(yaw) Ry(pitch) applied to +x
    up = turned((sp * cy, sp * sy, cp))  # ... and to +z
    mount = turned((float(q["x"]), float(q["y"]), float(q["z"])))
    pos = tuple(float(a) + b for a, b in zip(state[:3], mount))
    return View(pos, forward, up, float(q["fov"]), float(q["near"]), float(q["far"]),
                int(q["width"]), int(q["height"]), depth)


def _render(engine, row: int, q: Mapping, depth: bool) -> list[tuple]:
    """The image of robot ``row``'s camera (parameters ``q``) rendered now, its robot
    unseen: [(rgb, depth or None)]."""
    return engine.render_images([view(engine.state3d()[row], q, depth)], [row])


def stream(seed: int, robot: str, step: int) -> np.random.Generator:
    """The generator of robot ``robot``'s image noise at ``step``: the same run, the same
    images, whoever asks and whenever."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(robot.encode()), step])


def noisy(rgb: np.ndarray, depth: np.ndarray | None, q: Mapping, rng) -> tuple:
    """``rgb`` and ``depth`` with the camera's Gaussian noise (none drawn when it is 0)."""
    if q["noise"] > 0:
        levels = rgb + rng.standard_normal(rgb.shape, np.float32) * np.float32(q["noise"])
        rgb = np.clip(np.rint(levels), 0, 255).astype(np.uint8)
    if depth is not None and q["depth_noise"] > 0:
        depth = depth + rng.standard_normal(depth.shape, np.float32) * \
            np.float32(q["depth_noise"])
    return rgb, depth
