"""A ``coopsim`` command run as a real process whose stderr is read line by line while it runs,
optionally under a file-size limit (RLIMIT_FSIZE: a write past it fails with EFBIG, the OS's
"disk full" for one process, no root needed; Python ignores SIGXFSZ, so it is an error, not a
kill)."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WAIT = 30.0  # s for a line to appear; generous, the machine may be loaded


class Coopsim:
    """``python -m coopsim ARGS`` in ``cwd``; stdout and stderr collected as lines."""

    def __init__(self, *args: str, cwd: Path = ROOT, fsize: int | None = None,
                 env: dict | None = None) -> None:
        full_env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
        full_env.update(env or {})
        full_env["PYTHONDONTWRITEBYTECODE"] = "1"  # no .pyc writes hitting the size limit

        def limit():
            if fsize is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

        self.proc = subprocess.Popen([sys.executable, "-m", "coopsim", *args], cwd=cwd,
                                     env=full_env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, preexec_fn=limit)
        self.err: list[str] = []
        self.out: list[str] = []
        self._changed = threading.Condition()
        self._readers = [threading.Thread(target=self._read, args=(stream, lines), daemon=True)
                         for stream, lines in ((self.proc.stderr, self.err),
                                               (self.proc.stdout, self.out))]
        for reader in self._readers:
            reader.start()

    def _read(self, stream, lines: list) -> None:
        for line in stream:
            with self._changed:
                lines.extend(part for part in re.split(r"[\r\n]", line) if part)
                self._changed.notify_all()

    def wait_for(self, pattern: str, timeout: float = WAIT) -> re.Match:
        """The first stderr line matching ``pattern`` (waits for it)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self.err:
                    match = re.search(pattern, line)
                    if match:
                        return match
                left = deadline - time.monotonic()
                assert left > 0 and self.proc.poll() is None or any(
                    re.search(pattern, line) for line in self.err), \
                    f"no line matching {pattern!r}:\n" + "\n".join(self.err)
                self._changed.wait(min(left, 0.2))

    def endpoint(self) -> str:
        """The name server the run announced."""
        return self.wait_for(r"name server: (tcp://\S+)").group(1)

    def finish(self, timeout: float = 60.0) -> int:
        """Wait for the end (stdout and stderr fully read); the exit code."""
        code = self.proc.wait(timeout)
        for reader in self._readers:
            reader.join(10.0)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
