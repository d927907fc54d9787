"""Starts the run-control node (:mod:`coopsim.ros2.services_node`) beside a ``--ros2`` run and
answers its calls with :class:`~coopsim.ros2.services.RunControl`.

The node needs ROS 2's ``rclpy``, which coopsim does not depend on: it runs with
``$COOPSIM_ROS_PYTHON`` when that is set (a venv with the ``ros-*`` wheels, or a sourced ROS 2
installation's ``python3``), else with coopsim's own interpreter when that can import rclpy.
Without either the run publishes its topics as before and offers no services; the start-up
line says so. The node talks to coopsim over its stdin and stdout only (JSON lines), so nothing
new listens on the network; it joins the same DDS domain as the bridge with the same
discovery scope (loopback unless the run binds beyond it).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

from ..model.errors import CoopsimError
from ..model.limits import MAX_STEPS
from .services import SERVICES, RunControl

log = logging.getLogger(__name__)

NODE_SCRIPT = Path(__file__).with_name("services_node.py")
PYTHON_VAR = "COOPSIM_ROS_PYTHON"
READY_WAIT = 60.0  # s for the node to come up (rclpy's first import can take seconds)


def ros_python() -> str | None:
    """The Python the node runs with: ``$COOPSIM_ROS_PYTHON``, else this interpreter when it
    can import rclpy, else None (no services; ``COOPSIM_ROS_PYTHON=none`` too)."""
    named = os.environ.get(PYTHON_VAR, "").strip()
    if named.lower() == "none":  # the services turned off on purpose (docs/ros2.md)
        return None
    if named:
        return named
    return sys.executable if importlib.util.find_spec("rclpy") is not None else None


class ControlNode:
    """The run-control node's process and the thread answering it.

    Args:
        control: What answers (a :class:`RunControl` on the run's ``/sim``).
        python: The Python with rclpy.
        domain: The DDS domain (``ROS_DOMAIN_ID``).
        loopback: Keep discovery on this machine (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``).

    Raises:
        CoopsimError: the node did not start (its last words in the message).
    """

    def __init__(self, control: RunControl, python: str, domain: int, loopback: bool) -> None:
        self.control = control
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain), PYTHONUNBUFFERED="1")
        if loopback:  # Iron and later; Humble knows only ROS_LOCALHOST_ONLY
            env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
            if env.get("ROS_DISTRO", "").lower() in ("humble", "galactic", "foxy"):
                env["ROS_LOCALHOST_ONLY"] = "1"
        env.pop("PYTHONPATH", None)  # the node imports rclpy, not coopsim's tree
        services = {name: kind for name, (_, kind) in SERVICES.items()}
        try:
            self.proc = subprocess.Popen([python, str(NODE_SCRIPT), json.dumps(services),
                                          str(MAX_STEPS)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, env=env)
        except OSError as exc:
            raise CoopsimError(f"cannot start the ROS 2 run-control node with {python}: "
                               f"{exc.strerror}") from None
        self.hello = self._ready(python)
        self._err = threading.Thread(target=self._log_stderr, daemon=True, name="ros2-ctl-err")
        self._err.start()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="ros2-control")
        self._thread.start()

    def _ready(self, python: str) -> dict:
        """The node's first line, ``{"ready": true, ...}``; else its stderr as the error."""
        answer: list = []
        reader = threading.Thread(target=lambda: answer.append(self.proc.stdout.readline()),
                                  daemon=True)
        reader.start()
        reader.join(READY_WAIT)
        try:
            hello = json.loads(answer[0]) if answer and answer[0] else {}
        except json.JSONDecodeError:
            hello = {}
        if not hello.get("ready"):
            self.close()
            why = self.proc.stderr.read()[-800:].strip() if self.proc.stderr else ""
            raise CoopsimError(f"the ROS 2 run-control node did not start with {python}: "
                               f"{why or 'no answer'}")
        return hello

    def _serve(self) -> None:
        """Answer each call line (the calls are few; /sim's handler does the waiting)."""
        for line in self.proc.stdout:
            try:
                call = json.loads(line)
                service = call["service"]
                if service not in SERVICES:
                    raise KeyError(service)
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # not a call: nothing to answer
            try:
                ok, message = self._answer(service, call.get("count", 1))
            except Exception as exc:  # noqa: BLE001 - a bug must not silence the services
                log.exception("ros2 control: %s", service)
                ok, message = False, f"error 10: internal error answering {service}: {exc}"
            try:
                self.proc.stdin.write(json.dumps({"id": call.get("id"), "success": ok,
                                                  "message": message}) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                return  # the node is gone

    def _answer(self, service: str, count) -> tuple[bool, str]:
        if service == "/coopsim/step":
            ok, message = self.control.set_step_count(count)
            if not ok:
                return ok, message
        return self.control.call(service)

    def _log_stderr(self) -> None:
        for line in self.proc.stderr:
            if line.strip():
                log.info("ros2 control: %s", line.rstrip())

    def close(self) -> None:
        """End the node (closing its stdin ends it; killed if it lingers)."""
        try:
            self.proc.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def start_control(sim, domain: int, loopback: bool) -> tuple[ControlNode | None, str]:
    """The run-control node for a run whose ``/sim`` answers through ``sim`` (see
    :class:`RunControl`), and the start-up line.

    Returns (None, why) when no Python with rclpy is found or the node does not start: the
    run goes on with its topics only.
    """
    python = ros_python()
    if python is None:
        return None, (f"ros2: run-control services off (no rclpy: set {PYTHON_VAR} to a "
                      "Python with ROS 2, docs/ros2.md)"
                      if os.environ.get(PYTHON_VAR, "").strip().lower() != "none" else
                      f"ros2: run-control services off ({PYTHON_VAR}=none)")
    try:
        node = ControlNode(RunControl(sim), python, domain, loopback)
    except CoopsimError as exc:
        return None, f"ros2: run-control services off ({exc})"
    names = ", ".join(n for n in SERVICES if n.startswith("/coopsim/"))
    return node, (f"ros2: run control as node /coopsim_control ({node.hello.get('rclpy')}): "
                  f"{names}")
