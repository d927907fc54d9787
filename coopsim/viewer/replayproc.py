"""Opening a recording from the viewer: start ``coopsim replay FILE`` and follow its name server.

The replay runs as its own process (it serves ``/sim``, ``/playback`` and the state stream, the
same names a live run has), so the window simply follows another name server. The process is
the viewer's child: switching back to the live run or closing the window ends it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from concurrent.futures import Future

from ..model.errors import CoopsimError

START_TIMEOUT = 20.0  # s for a replay process to announce its name server
_ENDPOINT = re.compile(r"name server:\s*(tcp://\S+)")


class ReplayStartError(CoopsimError):
    """``coopsim replay`` did not start (bad file, not a recording, ...)."""


class ReplayProcess:
    """One ``coopsim replay`` child process.

    Args:
        path: The recording (.mcap).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.proc: subprocess.Popen | None = None
        self.endpoint: str | None = None

    def start(self) -> Future:
        """Start the process; the Future resolves to its name-server endpoint (or fails with
        :class:`ReplayStartError` carrying the process's own message)."""
        future: Future = Future()
        cmd = [sys.executable, "-m", "coopsim", "replay", self.path, "--headless", "--port", "0"]
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         text=True)
        except OSError as exc:
            future.set_exception(ReplayStartError(f"cannot start coopsim replay: {exc}"))
            return future
        threading.Thread(target=self._watch, args=(future,), daemon=True,
                         name="coopsim-viewer-replay").start()
        return future

    def _watch(self, future: Future) -> None:
        """Read the child's stderr: the endpoint line resolves the Future; the rest is drained
        so the child never blocks on a full pipe."""
        last = ""
        timer = threading.Timer(START_TIMEOUT, self._give_up, args=(future,))
        timer.start()
        try:
            for line in self.proc.stderr:
                match = _ENDPOINT.search(line)
                if match and not future.done():
                    self.endpoint = match.group(1)
                    future.set_result(self.endpoint)
                elif line.strip():
                    last = line.strip()
        finally:
            timer.cancel()
        if not future.done():
            code = self.proc.wait()
            future.set_exception(ReplayStartError(
                last or f"coopsim replay ended (exit {code}) without a name server"))

    def _give_up(self, future: Future) -> None:
        if not future.done():
            future.set_exception(ReplayStartError(
                f"coopsim replay did not start within {START_TIMEOUT:g} s"))
            self.stop()

    def stop(self) -> None:
        """End the process (it is only a player: nothing is lost)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
