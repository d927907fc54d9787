"""RGB and depth images of a MuJoCo world, rendered offscreen by MuJoCo's own renderer, in the
run's render process (:mod:`coopsim.physics.mujoco.renderproc`), never the run's own process.

Headless: the OpenGL context comes from EGL (Mesa's software renderer where there is no GPU)
or OSMesa, as ``MUJOCO_GL`` says (``egl``, the default here, or ``osmesa``; ``glfw`` needs a
display). The renderer is built on first use (a world whose cameras nobody reads never starts
the process) and rebuilt when the model is recompiled (a layout change) or a larger image is
asked for. A view may leave geoms out (its own robot's): they are moved to a hidden geom group
while its scene is made. What is drawn is what is seen: a described robot's link that has
visual geometry shows it, in the file's colours, its collision geometry being in MuJoCo's
group 3, which no image draws (:func:`coopsim.physics.mujoco.imported.attach`); the headlight
(:data:`HEADLIGHT`) lights a mid-grey floor mid-grey.

Per call: one ``mjv_updateScene`` for every view, then for each view the scene's camera (and
its headlight) is put at the view's pose, ``mjr_render`` draws into the offscreen buffer and
``mjr_readPixels`` reads colour and depth back. Shadows, reflections, the skybox and
multisampling are off: with Mesa's software renderer a shadow map alone cost 100 ms an image.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from ...model.errors import SimulationError
from ...model.images import View

GEOMS = 10000  # the scene's most geoms (MuJoCo's Renderer's default)
#: The headlight (ambient, diffuse, specular; the world has no other light): mostly ambient,
#: so that a surface reads near its own colour whatever its angle to the camera (a mid-grey
#: floor seen from above at 30 degrees reads about 115/255, facing the camera 134; MuJoCo's
#: default 0.1 ambient and 0.4 diffuse gave at most 59).
HEADLIGHT = ((0.7, 0.7, 0.7), (0.35, 0.35, 0.35), (0.1, 0.1, 0.1))
HIDDEN = 5  # the geom group a view's own robot is moved to while its scene is made
BACKENDS = ("egl", "osmesa", "glfw")


def context_class():
    """The GLContext class ``MUJOCO_GL`` names (``egl`` when unset).

    Raises:
        SimulationError: one sentence saying what is missing.
    """
    backend = os.environ.get("MUJOCO_GL", "").strip().lower() or "egl"
    if backend not in BACKENDS:
        raise SimulationError(f"camera3d cannot render: MUJOCO_GL={backend!r} is none of "
                              f"{', '.join(BACKENDS)}")
    try:
        with _one_thread():
            return _import(backend)
    except (ImportError, OSError, AttributeError) as exc:
        raise SimulationError(_missing(backend, exc)) from None


@contextlib.contextmanager
def _one_thread():
    """Mesa's llvmpipe renders in the calling thread while this is open (``LP_NUM_THREADS``
    0, read when its screen is made): its worker threads, fighting the stepper for 2 cores,
    made a 160 x 120 image 2.5x slower. The variable is put back after, so the processes
    the run starts (the viewer) keep their threads; a value the user set is kept."""
    old = os.environ.get("LP_NUM_THREADS")
    if old is None:
        os.environ["LP_NUM_THREADS"] = "0"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("LP_NUM_THREADS", None)


def _import(backend: str):
    """The GLContext class of ``backend`` (importing mujoco.egl makes EGL's display)."""
    if backend == "egl":
        from mujoco.egl import GLContext
    elif backend == "osmesa":
        from mujoco.osmesa import GLContext
    else:
        from mujoco.glfw import GLContext
    return GLContext


def _missing(backend: str, exc: BaseException) -> str:
    """The sentence for a renderer that cannot start."""
    need = {"egl": "libEGL with Mesa (Debian: libegl1 libegl-mesa0 libgl1-mesa-dri) and "
                   "PyOpenGL", "osmesa": "libOSMesa (Debian: libosmesa6) and PyOpenGL",
            "glfw": "a display and the glfw package"}[backend]
    return (f"camera3d cannot render: MuJoCo's {backend} renderer needs {need} "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
            "set MUJOCO_GL=egl or osmesa")


def missing() -> str:
    """Why camera3d cannot render in this process, in one sentence ("" when it can): a context
    is opened and freed (the first one also starts EGL or OSMesa for the process). Run by a
    render process: :func:`coopsim.physics.mujoco.renderproc.missing` asks one."""
    try:
        gl = context_class()
        with _one_thread():
            gl(16, 16).free()
    except SimulationError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 -- EGL and OSMesa raise many kinds
        return _missing(os.environ.get("MUJOCO_GL") or "egl", exc)
    return ""


class Renderer:
    """Offscreen renderer of one MuJoCo model (built on first :meth:`render`)."""

    def __init__(self) -> None:
        self._model = None
        self._size = (0, 0)
        self._gl = self._ctx = self._scene = None
        self._buffers: dict = {}  # (h, w, depth) -> read-back buffers (see _scratch)

    def _ready(self, model, width: int, height: int) -> None:
        """Open (or reopen) the context for ``model`` with a buffer of at least this size."""
        import mujoco

        size = (max(width, self._size[0]), max(height, self._size[1]))
        if model is self._model and size == self._size:
            return
        self.close()
        gl = context_class()
        try:
            with _one_thread():
                self._gl = gl(*size)
                self._gl.make_current()
        except Exception as exc:  # noqa: BLE001 -- EGL/OSMesa raise many unrelated types
            self._gl = None
            raise SimulationError(_missing(os.environ.get("MUJOCO_GL") or "egl", exc)) from None
        model.vis.global_.offwidth, model.vis.global_.offheight = size
        model.vis.quality.offsamples = 0  # no multisampling: 5x faster on Mesa's llvmpipe
        light = model.vis.headlight
        light.ambient[:], light.diffuse[:], light.specular[:] = HEADLIGHT
        light.active = 1
        self._ctx = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._ctx)
        self._ctx.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self._scene = mujoco.MjvScene(model, maxgeom=GEOMS)
        for flag in ("mjRND_SHADOW", "mjRND_REFLECTION", "mjRND_SKYBOX"):
            self._scene.flags[getattr(mujoco.mjtRndFlag, flag)] = 0
        self._option, self._camera = mujoco.MjvOption(), mujoco.MjvCamera()
        self._option.geomgroup[HIDDEN] = 0
        self._perturb = mujoco.MjvPerturb()
        self._model, self._size = model, size

    def render(self, model, data, views: list[View], hide: list | None = None,
               outs: list | None = None) -> list[tuple]:
        """Each view's (rgb (h, w, 3) uint8, depth (h, w) float32 m or None), rows top first;
        depth along the optical axis, +inf where nothing lies within ``far``.

        Args:
            hide: Per view, the geom ids it does not see (its own robot's: an int array) or
                None; views hiding the same geoms share one scene update.
            outs: Per view, the (rgb, depth) arrays to write it into (else new ones).
        """
        import mujoco

        if not views:
            return []
        self._ready(model, max(v.width for v in views), max(v.height for v in views))
        self._gl.make_current()
        hide = hide if hide is not None else [None] * len(views)
        out: list = [None] * len(views)
        groups: dict = {}
        for i, ids in enumerate(hide):
            key = None if ids is None or not len(ids) else tuple(np.asarray(ids).tolist())
            groups.setdefault(key, []).append(i)
        for key, members in groups.items():
            ids = np.array(key if key is not None else (), dtype=np.int64)
            saved = model.geom_group[ids].copy()
            model.geom_group[ids] = HIDDEN  # a group the scene leaves out (why: one update
            try:  # per robot instead of a Python pass over the scene's geoms)
                mujoco.mjv_updateScene(model, data, self._option, self._perturb, self._camera,
                                       mujoco.mjtCatBit.mjCAT_ALL, self._scene)
            finally:
                model.geom_group[ids] = saved
            for i in members:
                out[i] = self._one(views[i], outs[i] if outs is not None else None)
        return out

    def _one(self, view: View, out: tuple | None = None) -> tuple:
        """Render and read back one view (the scene is updated already), into ``out`` ((h, w,
        3) uint8, (h, w) float32 or None: the shared memory) when given."""
        import mujoco

        top = view.near * np.tan(np.radians(view.fov) / 2.0)
        for cam in self._scene.camera:
            cam.pos[:], cam.forward[:], cam.up[:] = view.pos, view.forward, view.up
            cam.frustum_near, cam.frustum_far = view.near, view.far
            cam.frustum_top, cam.frustum_bottom, cam.frustum_center = top, -top, 0.0
            cam.frustum_width = top * view.width / view.height  # half width: square pixels
            cam.orthographic = 0
        for i in range(self._scene.nlight):  # the headlight goes with the camera
            light = self._scene.lights[i]
            if light.headlight:
                light.pos[:], light.dir[:] = view.pos, view.forward
        rect = mujoco.MjrRect(0, 0, view.width, view.height)
        mujoco.mjr_render(rect, self._scene, self._ctx)
        rgb_buf, depth_buf, mask = self._scratch(view)
        mujoco.mjr_readPixels(rgb_buf, depth_buf, rect, self._ctx)
        rgb, depth = out if out is not None else (
            np.empty((view.height, view.width, 3), np.uint8),
            np.empty((view.height, view.width), np.float32) if view.depth else None)
        rgb[...] = rgb_buf[::-1]  # rows top first
        if depth is not None:  # reversed z: d = near (far - z) / (z (far - near)), 0 at far
            depth[...] = depth_buf[::-1]
            np.less_equal(depth, 0.0, out=mask)
            # float32 throughout: the buffer holds 24 bits, float64 would only cost time
            depth *= np.float32(view.far - view.near)
            depth += np.float32(view.near)
            np.divide(np.float32(view.near * view.far), depth, out=depth)
            np.copyto(depth, np.float32(np.inf), where=mask)
        return rgb, depth

    def _scratch(self, view: View) -> tuple:
        """The read-back buffers of a view's size, kept: a fresh megabyte array per image was
        a fresh mapping the kernel faulted in page by page (twice the image's cost)."""
        key = (view.height, view.width, bool(view.depth))
        held = self._buffers.get(key)
        if held is None:
            h, w = key[:2]
            held = self._buffers[key] = (
                np.empty((h, w, 3), np.uint8), np.empty((h, w), np.float32) if key[2] else None,
                np.empty((h, w), bool))
        return held

    def pixels(self) -> int:
        """The pixels of the offscreen buffer open now (0: none)."""
        return self._size[0] * self._size[1]

    def forget_buffers(self, above: int) -> None:
        """Drop the kept read-back buffers of images over ``above`` pixels (a huge read's
        are not kept for good)."""
        for key in [k for k in self._buffers if k[0] * k[1] > above]:
            del self._buffers[key]

    def close(self) -> None:
        """Free the GL resources (a later render opens them again)."""
        if self._ctx is not None:
            self._ctx.free()
        if self._gl is not None:
            self._gl.free()
        self._gl = self._ctx = self._scene = self._model = None
        self._size = (0, 0)
