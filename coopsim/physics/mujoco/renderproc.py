"""Camera images rendered in a process of their own (``camera3d``): one render process per run.

Why a process: rendering then runs on another core beside the stepper (a published image is
rendered while the world steps on), and the run's process never opens an OpenGL context, so a
process that draws with pyglet (the viewer, ``coopsim bench smoke``, an env's ``render``) can
hold cameras too: PyOpenGL binds one platform (EGL or GLX) a process.

The process starts on the first image and lives as long as the run's engine. The run sends it
the compiled model once (again after a layout change recompiles it) and, per request, the state
the images need: ``qpos`` and the mocap bodies' poses; it computes the geoms' poses
(``mj_kinematics``) and renders with :class:`coopsim.physics.mujoco.camera.Renderer`. The pixels
come back through shared memory (an unlinked file mapped by both, its descriptor passed over a
Unix socket); the messages are pickles over a socket pair. Noise is not drawn here: the run
draws it from its own seeded stream, so images stay bit-identical for the same seed.

Requests are queued: :meth:`RenderProcess.submit` returns at once and :meth:`RenderProcess.take`
waits for a key's images (a published camera is taken at its next due step, so its image renders
while the world steps). A render process that dies is said in one sentence
(:class:`~coopsim.model.errors.SimulationError`, error 8 on a read); the run goes on and the
next request starts a new process.

Run as ``python -m coopsim.physics.mujoco.renderproc FD FDS`` by :class:`RenderProcess` only.
"""

from __future__ import annotations

import functools
import mmap
import os
import socket
import subprocess
import sys
import tempfile
import weakref
from multiprocessing.connection import Connection

import numpy as np

from ...model.errors import SimulationError

SHM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None  # memory, not disk, where there


class RenderProcess:
    """The run's side of its render process: queues requests and takes their images back."""

    def __init__(self) -> None:
        self._proc = self._conn = self._fds = None
        self._mm = None
        self._model = None  # the model the process holds (identity)
        self._slots: dict = {}  # key -> (offset, bytes) in the shared memory
        self._top = 0  # the first free byte of the shared memory
        self._open: dict = {}  # request id -> [(key, shape of rgb, shape of depth or None)]
        self._busy: dict = {}  # key -> the request id its slot is written by
        self._done: dict = {}  # key -> (tag, (rgb, depth)) or its request's SimulationError
        self._next = 0
        self._finalizer = None
        self._pid = 0  # the process that started it

    # -- the run's calls ----------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The render process's id, None while none runs."""
        return self._proc.pid if self._proc is not None else None

    def render(self, model, data, views: list, hide: list | None = None) -> list[tuple]:
        """Each view's (rgb, depth or None) now (:meth:`mujoco.camera.Renderer.render`)."""
        keys = [("now", i) for i in range(len(views))]
        self.submit(model, data, views, hide, keys)
        return [self.take(k)[1] for k in keys]

    def submit(self, model, data, views: list, hide: list | None, keys: list,
               tags: list | None = None) -> None:
        """Queue one request rendering ``views`` (``hide``: each one's geom ids not seen, or
        None) of the state in ``data``; view i's images are taken with ``keys[i]``, along
        with ``tags[i]`` (anything: what the caller needs to know of them then)."""
        if not views:
            return
        self._inherited()
        hide = hide if hide is not None else [None] * len(views)
        tags = tags if tags is not None else [None] * len(views)
        try:
            self._started()
            if model is not self._model:
                self._drain()  # the process renders requests in order: none is pending
                self._conn.send(("model", model))
                self._model = model
            sizes = [v.height * v.width * (3 + 4 * bool(v.depth)) for v in views]  # rgb, depth
            offsets = self._place(keys, sizes)
            items = [(v, ids, off) for v, ids, off in zip(views, hide, offsets)]
            shapes = [(key, (v.height, v.width, 3), (v.height, v.width) if v.depth else None,
                       off, tag) for v, key, off, tag in zip(views, keys, offsets, tags)]
            rid, self._next = self._next, self._next + 1
            self._conn.send(("render", rid, data.qpos.copy(), data.mocap_pos.copy(),
                             data.mocap_quat.copy(), items))
        except (OSError, EOFError) as exc:
            raise self._died(exc) from None
        self._open[rid] = shapes
        for key, *_ in shapes:
            self._busy[key] = rid
            self._done.pop(key, None)

    def take(self, key):
        """(tag, (rgb, depth or None)) of ``key``'s latest request (waiting for it), None when
        it has none (never asked, or lost with a process that died); removed once taken.

        Raises:
            SimulationError: the request failed (the renderer cannot start here: the sentence
                says what is missing), or the process died waiting.
        """
        self._inherited()
        while key in self._busy:
            self._receive()
        done = self._done.pop(key, None)
        if isinstance(done, SimulationError):
            raise done
        return done

    def ready(self, key) -> bool:
        """Whether :meth:`take` of ``key`` would return at once: the replies already sent
        are received (never waiting for one)."""
        self._inherited()
        try:
            while self._open and self._conn.poll(0):
                self._receive()
        except (OSError, EOFError) as exc:
            raise self._died(exc) from None
        return key not in self._busy

    def fileno(self) -> int | None:
        """The socket replies come back on (readable when images are back), None while no
        process runs."""
        return self._conn.fileno() if self._conn is not None else None

    def shared_bytes(self) -> int:
        """Bytes of the shared memory mapped now (0: none)."""
        return len(self._mm) if self._mm is not None else 0

    def trim(self, keep: int) -> bool:
        """Unmap the shared memory when it is larger than ``keep`` bytes and nothing is in
        flight, in both processes (the next request maps a new one of the size it needs):
        a 4096 x 4096 RGB-D read's 200 MB are not kept for the 160 x 120 ones after it.
        Returns False when a request still renders (try again later)."""
        if self._mm is None or len(self._mm) <= keep:
            return True
        try:
            while self._open and self._conn.poll(0):  # the replies already back: received
                self._receive()
            if self._open:  # a request still renders into it: later
                return False
            self._conn.send(("unshare",))
        except (OSError, EOFError) as exc:
            raise self._died(exc) from None
        _unmap(self._mm)
        self._mm, self._slots, self._top = None, {}, 0
        return True

    def close(self) -> None:
        """Stop the process (a later request starts a new one)."""
        if self._finalizer is not None:
            self._finalizer()
        self._proc = self._conn = self._fds = self._mm = self._model = None
        self._slots, self._top, self._open, self._busy = {}, 0, {}, {}

    # -- the process ----------------------------------------------------------------------------

    def _inherited(self) -> None:
        """Forget a render process this process inherited through fork (an environment's
        worker copying the run): not its to talk to or stop; its own starts on its next image."""
        if self._proc is not None and self._pid != os.getpid():
            self._finalizer.detach()
            self._finalizer = None
            self.close()
            self._done = {}

    def _started(self) -> None:
        """Start the process if none runs."""
        if self._proc is not None:
            return
        self._pid = os.getpid()
        ours, theirs = socket.socketpair()
        fds_ours, fds_theirs = socket.socketpair()
        env = _environment()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", __name__, str(theirs.fileno()), str(fds_theirs.fileno())],
                pass_fds=(theirs.fileno(), fds_theirs.fileno()), env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        finally:
            theirs.close()
            fds_theirs.close()
        self._proc, self._fds = proc, fds_ours
        self._conn = Connection(ours.detach())
        self._finalizer = weakref.finalize(self, _stop, proc, self._conn, fds_ours)

    def _place(self, keys: list, sizes: list) -> list[int]:
        """The offsets of each key's bytes in the shared memory (slots kept per key; the
        memory grown, every slot laid out again, when the new ones do not fit)."""
        while any(key in self._busy for key in keys):  # a slot still being written
            self._receive()
        new = {k: s for k, s in zip(keys, sizes)
               if k not in self._slots or self._slots[k][1] < s}
        if self._mm is None or self._top + sum(new.values()) > len(self._mm):
            self._drain()
            have = len(self._mm) if self._mm is not None else 0
            self._share(max(2 * have, 2 * sum(sizes), 1 << 20))
            new = dict(zip(keys, sizes))
        for key, size in new.items():
            self._slots[key] = (self._top, size)
            self._top += size
        return [self._slots[k][0] for k in keys]

    def _share(self, size: int) -> None:
        """Map new shared memory of ``size`` bytes and hand it to the process (slots reset)."""
        fd, path = tempfile.mkstemp(prefix="coopsim-render-", dir=SHM_DIR)
        try:
            os.unlink(path)  # the mapping keeps it: nothing is left behind, even on a crash
            os.ftruncate(fd, size)
            self._mm = mmap.mmap(fd, size)
            self._conn.send(("shm", size))
            socket.send_fds(self._fds, [b"m"], [fd])
        finally:
            os.close(fd)
        self._slots, self._top = {}, 0

    def _drain(self) -> None:
        """Receive every pending request's images."""
        while self._open:
            self._receive()

    def _receive(self) -> None:
        """Receive one reply and copy its images out of the shared memory."""
        try:
            reply = self._conn.recv()
        except (OSError, EOFError) as exc:
            raise self._died(exc) from None
        shapes = self._open.pop(reply[1])
        for key, rgb, depth, off, tag in shapes:
            if self._busy.get(key) == reply[1]:
                del self._busy[key]
            if reply[0] != "done":
                self._done[key] = SimulationError(reply[2])
                continue
            n = rgb[0] * rgb[1] * 3
            colour = np.frombuffer(self._mm, np.uint8, n, off).reshape(rgb).copy()
            far = None
            if depth is not None:
                far = np.frombuffer(self._mm, np.float32, depth[0] * depth[1],
                                    off + n).reshape(depth).copy()
            self._done[key] = (tag, (colour, far))

    def _died(self, exc: BaseException) -> SimulationError:
        """Forget the dead process and its requests; the sentence a read answers."""
        code = None
        if self._proc is not None:
            try:
                code = self._proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:  # alive but mute: close() ends it
                pass
        how = (f"killed by signal {-code}" if code is not None and code < 0 else
               f"exit code {code}" if code is not None else type(exc).__name__)
        self.close()
        self._done = {}
        return SimulationError(f"camera3d's render process died ({how}); the run goes on and "
                               "the next image starts a new one")


def _unmap(mm) -> None:
    """Close a mapping now (dropped with its last view when one is still alive)."""
    if mm is not None:
        try:
            mm.close()
        except BufferError:  # a view of it is alive: it goes with that view
            pass


def _environment() -> dict:
    """The render process's environment: this one's, with MuJoCo's GL backend (``egl`` when
    unset) and PyOpenGL's platform matching it, whatever this process (a viewer's: GLX) has."""
    env = dict(os.environ)
    backend = env.setdefault("MUJOCO_GL", "egl").strip().lower()
    if backend in ("egl", "osmesa"):
        env["PYOPENGL_PLATFORM"] = backend
    else:
        env.pop("PYOPENGL_PLATFORM", None)
    env.setdefault("LP_NUM_THREADS", "0")  # Mesa renders in its one thread: the run has the
    # other core (its worker threads fought the stepper: 2.5x slower an image)
    return env


def _stop(proc, conn, fds) -> None:
    """Ask the process to end, then make sure it has (finalizer: no other state)."""
    try:
        conn.send(("quit",))
    except (OSError, EOFError, ValueError):
        pass
    for end in (conn, fds):
        try:
            end.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# -- the render process itself --------------------------------------------------------------------


class _Child:
    """The render process's state: the model, its data, the renderer and the shared memory."""

    def __init__(self, fds: socket.socket) -> None:
        from .camera import Renderer

        self.fds, self.renderer = fds, Renderer()
        self.model = self.data = self.mm = None

    def shm(self, size: int) -> None:
        """Map the shared memory whose descriptor comes next on the descriptor socket."""
        _, fds, _, _ = socket.recv_fds(self.fds, 1, 1)
        try:
            self.mm = mmap.mmap(fds[0], size)
        finally:
            os.close(fds[0])

    def unshare(self) -> None:
        """Drop the shared memory (the run released it) and the read-back buffers kept for
        images larger than a megabyte (the next image of that size makes them again)."""
        _unmap(self.mm)
        self.mm = None
        self.renderer.forget_buffers(1 << 20)
        if self.renderer.pixels() > 1 << 22:  # its GL buffer grew for a huge image: reopen
            self.renderer.close()  # at the size the next image needs

    def set_model(self, model) -> None:
        """Hold ``model`` (a layout's compiled model) and data for it."""
        import mujoco

        self.model, self.data = model, mujoco.MjData(model)

    def render(self, qpos, mocap_pos, mocap_quat, items: list) -> None:
        """Render ``items`` ((view, hidden geom ids or None, offset)) into the shared memory."""
        import mujoco

        model, data = self.model, self.data
        data.qpos[:], data.mocap_pos[:], data.mocap_quat[:] = qpos, mocap_pos, mocap_quat
        mujoco.mj_kinematics(model, data)  # the geoms' poses: all an image needs but the
        mujoco.mj_comPos(model, data)  # lights (a light may track a body's subtree)
        mujoco.mj_camlight(model, data)
        outs = []
        for view, _, off in items:  # each image straight into its slot: no copy
            h, w = view.height, view.width
            rgb = np.frombuffer(self.mm, np.uint8, h * w * 3, off).reshape(h, w, 3)
            depth = np.frombuffer(self.mm, np.float32, h * w, off + rgb.nbytes).reshape(h, w) \
                if view.depth else None
            outs.append((rgb, depth))
        self.renderer.render(model, data, [v for v, _, _ in items], [ids for _, ids, _ in items],
                             outs)


def _serve(conn: Connection, fds: socket.socket) -> None:
    """Answer requests until the run's end of the socket closes or says quit."""
    child = _Child(fds)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] == "quit":
            return
        if msg[0] == "model":
            child.set_model(msg[1])
        elif msg[0] == "shm":
            child.shm(msg[1])
        elif msg[0] == "unshare":
            child.unshare()
        elif msg[0] == "render":
            try:
                child.render(*msg[2:])
                reply = ("done", msg[1])
            except SimulationError as exc:  # the renderer cannot start: its sentence
                reply = ("error", msg[1], str(exc))
            except Exception as exc:  # noqa: BLE001 -- the run gets one sentence, not a hang
                reply = ("error", msg[1], f"camera3d could not render: "
                                          f"{type(exc).__name__}: {exc}")
            try:
                conn.send(reply)
            except OSError:  # the run has gone: nobody to answer
                return


@functools.lru_cache(maxsize=None)
def missing() -> str:
    """Why camera3d cannot render here, one sentence ("" when it can), as a render process
    finds it (once a process: it costs a process start)."""
    env = _environment()
    done = subprocess.run([sys.executable, "-m", __name__, "check"], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"camera3d's render process could not start ({tail})"
    return done.stdout.strip()


def main(argv: list[str]) -> int:
    """The render process's entry: ``argv`` holds the two socket descriptors (or ``check``:
    print why it cannot render, nothing when it can)."""
    if argv[:1] == ["check"]:
        from .camera import missing as missing_here

        print(missing_here())
        return 0
    conn = Connection(int(argv[0]))
    fds = socket.socket(fileno=int(argv[1]))
    if hasattr(os, "SCHED_BATCH"):  # Linux: a request waking this process does not preempt
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))  # the stepper that sent it
    try:
        _serve(conn, fds)
    finally:
        conn.close()
        fds.close()
    return 0


if __name__ == "__main__":  # pragma: no cover -- run by RenderProcess in its own process
    sys.exit(main(sys.argv[1:]))
