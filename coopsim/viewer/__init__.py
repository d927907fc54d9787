"""The desktop viewer: a pyglet window in its own process, attached to a simulation or a replay
through its name server.

Importing this package loads neither pyglet nor any physics: a runner calls :func:`start_viewer`
to launch ``coopsim view`` as a child process, and only that child imports the window code
(:mod:`coopsim.viewer.app`). The viewer talks to the simulation only through ``/sim``,
``/playback`` and the state stream, so it cannot disturb the physics and can die without taking
the simulation down.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading

from ..model.errors import CoopsimError
from ..net.protocol import DEFAULT_NAMESERVER

DEFAULT_FPS = 10.0  # CoopDynSim's render rate

#: Set by SIGTERM / SIGINT: the window closes at its next frame (see :func:`quit_on_signals`).
QUIT = threading.Event()


class ViewerError(CoopsimError):
    """The viewer cannot start (no display, no OpenGL, the widget layer is missing)."""


def nameserver_endpoint(text: str | None) -> str:
    """The name-server endpoint a user typed, completed: ``10000`` and ``host:10000`` become
    ``tcp://127.0.0.1:10000`` and ``tcp://host:10000``; None means $COOPSIM_NAMESERVER or the
    default.

    Raises:
        ViewerError: not a TCP endpoint with a port.
    """
    endpoint = text or os.environ.get("COOPSIM_NAMESERVER", DEFAULT_NAMESERVER)
    if endpoint.isdigit():  # a bare port: this machine
        endpoint = f"127.0.0.1:{endpoint}"
    if "://" not in endpoint:
        endpoint = f"tcp://{endpoint}"
    if not re.fullmatch(r"tcp://[^\s:/]+:\d{1,5}", endpoint):
        raise ViewerError(f"a name server endpoint looks like tcp://127.0.0.1:10000, "
                          f"not {text!r}")
    return endpoint


def viewer_command(nameserver_endpoint: str = DEFAULT_NAMESERVER,
                   fps: float = DEFAULT_FPS) -> list[str]:
    """The command line that starts a viewer for ``nameserver_endpoint``."""
    return [sys.executable, "-m", "coopsim", "view", nameserver_endpoint, "--fps", f"{fps:g}"]


def start_viewer(nameserver_endpoint: str = DEFAULT_NAMESERVER, fps: float = DEFAULT_FPS,
                 stderr=None, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``coopsim view`` as a child process following ``nameserver_endpoint``.

    The child exits 0 when its window is closed (or it gets SIGTERM / SIGINT), and non-zero when it
    fails. Its stdin is closed. Its stderr is inherited (so the user sees why it failed) unless
    ``stderr`` says otherwise; once the window is open it writes ``viewer: showing ENDPOINT``.
    ``env`` is its environment (default: this process's), e.g. with a run's CurveZMQ keys.

    Returns:
        The child process; the caller decides what its end means (``coopsim run --gui`` ends the
        run on exit code 0 and carries on otherwise).
    """
    return subprocess.Popen(viewer_command(nameserver_endpoint, fps), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=stderr,
                            env=dict(os.environ if env is None else env),
                            text=stderr is not None)


#: How much nicer (Unix priority) the viewer's process runs than the simulation: when the CPU
#: is short, the window drops frames rather than the simulation its real-time factor.
VIEWER_NICE = 5


def lower_priority() -> None:
    """Run this process (and the threads it starts after, Mesa's renderer's among them)
    :data:`VIEWER_NICE` steps nicer, and let Mesa's software renderer (llvmpipe) rasterize on
    one core fewer than the machine has (``LP_NUM_THREADS``, unless set already): a run beside
    the window keeps a core of its own. Call before the first window (Mesa reads it then)."""
    os.environ.setdefault("LP_NUM_THREADS", str(max(1, (os.cpu_count() or 2) - 1)))
    try:
        os.nice(VIEWER_NICE)
    except (AttributeError, OSError):
        pass


def quit_on_signals() -> None:
    """Make SIGTERM and SIGINT close the window cleanly (exit 0), even during start-up.

    Installed before the window libraries load (which takes a while), so a signal that comes
    early still counts as "close the window" rather than killing the process.
    """
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: QUIT.set())
