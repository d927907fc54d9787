"""Real ROS 2 nodes beside a test: stock rclpy from the ``ros-*`` wheels, in a Python of its own.

ROS 2's wheels (``ros-rclpy`` and friends for Kilted, Fast DDS 3; ``ros-jazzy-*`` for Jazzy,
Fast DDS 2) live in virtual environments apart from coopsim's (they pin their own numpy, empy,
lark...), found as the benchmarks find their peers' Python:

| distribution | variable | else |
|---|---|---|
| Kilted | ``COOPSIM_ROS_PYTHON`` | ``.venv-ros-kilted/bin/python`` in the repository |
| Jazzy | ``COOPSIM_ROS_JAZZY_PYTHON`` | ``.venv-ros-jazzy/bin/python`` in the repository |

``bash .ci/run`` makes both venvs (``.ci/ros-venvs``). A test asking for a distribution that is
not found is skipped with the reason, except under ``CI=true``, where it fails: CI must prove
interoperation, not skip it.

A node runs as ``python SCRIPT ARGS`` with :func:`ros_env`'s environment: Fast DDS
(``RMW_IMPLEMENTATION=rmw_fastrtps_cpp``, ROS 2's default), ``ROS_DOMAIN_ID`` the test's domain,
discovery on loopback (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``), nothing of coopsim's
``PYTHONPATH``. It speaks JSON lines: :class:`RosNode` sends commands and reads answers;
``tests/ros2/rclprobe.py`` is the general probe (subscribe, take, publish, call, graph).
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import signal
import subprocess
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("rclprobe.py")
#: distribution -> (the variable naming its Python, the venv .ci/run makes)
DISTROS = {"kilted": ("COOPSIM_ROS_PYTHON", ".venv-ros-kilted"),
           "jazzy": ("COOPSIM_ROS_JAZZY_PYTHON", ".venv-ros-jazzy")}
ANSWER = 150.0  # s: the longest a node may take to answer one command (its own caps are less)


def ros_python(distro: str) -> Path | None:
    """The Python of ``distro``'s ROS venv, or None when there is none."""
    var, venv = DISTROS[distro]
    path = Path(os.environ[var]) if os.environ.get(var) else ROOT / venv / "bin" / "python"
    return path if path.exists() else None


def need_ros(distro: str) -> Path:
    """The Python of ``distro``'s ROS venv; skips the test without one (fails under CI)."""
    path = ros_python(distro)
    if path is None:
        var, venv = DISTROS[distro]
        why = (f"no ROS 2 {distro} Python: set {var} or make {venv} "
               f"(bash .ci/ros-venvs)")
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(why + " - CI must run the ROS 2 tests", pytrace=False)
        pytest.skip(why)
    return path


def ros_env(domain: int, extra: dict | None = None) -> dict:
    """A ROS 2 node's environment: Fast DDS on ``domain``, discovery on loopback; ``extra``
    adds variables (a value None removes one: ``ROS_AUTOMATIC_DISCOVERY_RANGE`` for ROS 2's
    default discovery)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ROS_", "RMW_", "CYCLONEDDS", "FASTRTPS", "FASTDDS",
                                "PYTHON", "AMENT_", "COOPSIM_"))}
    env.update(ROS_DOMAIN_ID=str(domain), RMW_IMPLEMENTATION="rmw_fastrtps_cpp",
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1",
               PYTHONDONTWRITEBYTECODE="1")
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


#: DDS domains are handed out in blocks of BLOCK (a test file adds an offset below BLOCK of its
#: own); the blocks start at FIRST and stay at or below 232, the last domain whose ports fit
FIRST, BLOCK, BLOCKS = 8, 16, 14


def domain() -> int:
    """The first DDS domain of this test process's block: xdist workers of one session get
    neighbouring blocks, never the same one (before, ``100 + pid % 120``: two workers started
    one after the other have neighbouring pids, so one worker's file at offset 4 shared a domain
    with the other's file at offset 3, and each run's probe read the other run's topics);
    sessions are told apart by xdist's run id (or the pid), which can still meet by chance;
    suites run side by side on one machine are kept apart for sure by giving each its own
    ``COOPSIM_TEST_DDS_SESSION`` (0, 3, 6, ...: a session takes one block per worker)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    pinned = os.environ.get("COOPSIM_TEST_DDS_SESSION", "").strip()
    if pinned.isdigit():
        session = int(pinned)
    else:
        run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID") or str(os.getpid())
        session = int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:4], "big")
    return FIRST + BLOCK * ((session + index) % BLOCKS)


class RosNode:
    """A ROS 2 node in a process of its own, answering JSON lines.

    Args:
        python: the ROS venv's Python (:func:`need_ros`).
        script: the node's script (default: the probe).
        args: its arguments.
        domain: ``ROS_DOMAIN_ID``.
        env: more environment variables.
    """

    def __init__(self, python: Path, script: Path = PROBE, args=(), domain: int = 0,
                 env: dict | None = None) -> None:
        self.proc = subprocess.Popen([str(python), str(script), *map(str, args)], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=ros_env(domain, env),
                                     cwd=ROOT)
        self.lines: queue.Queue = queue.Queue()
        self.err: list[str] = []
        threading.Thread(target=self._read, args=(self.proc.stdout, self.lines.put, True),
                         daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, self.err.append, False),
                         daemon=True).start()
        self.hello = self.read()

    @staticmethod
    def _read(stream, put, last: bool) -> None:
        for line in stream:
            put(line)
        if last:  # the end of stdout: the node is gone
            put(None)

    def read(self, timeout: float = ANSWER) -> dict:
        """The node's next JSON line (fails the test on its death or silence)."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the ROS node said nothing for {timeout:g} s; stderr: "
                                 f"{''.join(self.err)[-2000:]}") from None
        if line is None:
            self.proc.wait(10)
            raise AssertionError(f"the ROS node ended (exit {self.proc.returncode}); stderr: "
                                 f"{''.join(self.err)[-3000:]}")
        try:
            return json.loads(line)
        except json.JSONDecodeError:  # a stray line of the node's: not an answer
            self.err.append(line)
            return self.read(timeout)

    def __call__(self, cmd: str, **args) -> dict:
        """Send one command, return its answer (an ``error`` answer fails the test unless
        ``ok_error=True``)."""
        ok_error = args.pop("ok_error", False)
        self.proc.stdin.write(json.dumps({"cmd": cmd, **args}) + "\n")
        self.proc.stdin.flush()
        out = self.read()
        assert ok_error or "error" not in out, out
        return out

    def close(self) -> int:
        """Ask the node to quit; kill it if it does not within 20 s. Its exit status."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write('{"cmd": "quit"}\n')
                self.proc.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode

    def __enter__(self) -> "RosNode":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def spawn(python: Path, script: Path, args=(), domain: int = 0,
          env: dict | None = None) -> subprocess.Popen:
    """A node script started as a user would start it (stdout and stderr piped, text)."""
    return subprocess.Popen([str(python), str(script), *map(str, args)], text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=ros_env(domain, env), cwd=ROOT)


def stop(proc: subprocess.Popen) -> tuple[str, str]:
    """Ctrl-C a spawned node (as a user stops it), kill it if it lingers: (stdout, stderr)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate(timeout=10)


def run_script(python: Path, script: Path, args=(), domain: int = 0, env: dict | None = None,
               timeout: float = ANSWER) -> tuple[int, list[dict], str]:
    """Run a node script to its end: (exit status, its JSON lines on stdout, its stderr)."""
    proc = subprocess.run([str(python), str(script), *map(str, args)], text=True,
                          capture_output=True, env=ros_env(domain, env), cwd=ROOT,
                          timeout=timeout)
    lines = []
    for line in proc.stdout.splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return proc.returncode, lines, proc.stderr


@pytest.fixture(params=sorted(DISTROS), scope="module")
def ros_distro(request) -> tuple[str, Path]:
    """Each ROS 2 distribution in turn: (name, its Python); skips one not found (not in CI)."""
    return request.param, need_ros(request.param)
