"""A private Xvfb server whose display number the server picks itself (``-displayfd``), so test
processes running at once (pytest-xdist workers, other checkouts' suites) never race for one."""

from __future__ import annotations

import os
import select
import subprocess
import time


def start_xvfb(xvfb: str, timeout: float = 20.0) -> tuple[subprocess.Popen, str]:
    """Start Xvfb (1280x900x24, no TCP) on a free display; return it and its name (``:N``).

    Xvfb writes the display number to the pipe once it accepts connections.
    """
    read, write = os.pipe()
    try:
        proc = subprocess.Popen([xvfb, "-displayfd", str(write), "-screen", "0", "1280x900x24",
                                 "-nolisten", "tcp"], pass_fds=(write,),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        write = -1
        got, deadline = b"", time.monotonic() + timeout
        while not got.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read], [], [], left)[0]:
                proc.kill()
                raise AssertionError(f"Xvfb did not start in {timeout:g} s")
            chunk = os.read(read, 16)
            if not chunk:  # it exited without a display
                raise AssertionError(f"Xvfb exited with code {proc.wait()}")
            got += chunk
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)
    return proc, f":{int(got)}"


def stop_xvfb(proc: subprocess.Popen) -> None:
    """Stop it; a loaded machine may keep it busy past the grace period (then it is killed)."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
