"""The run-control node ``/coopsim_control``: ROS 2 services answered by a coopsim run.

Run by :mod:`coopsim.ros2.services_host` with a Python that has ROS 2's ``rclpy`` (the ``ros-*``
wheels, or a sourced ROS 2 installation), as a script: it imports nothing of coopsim (that
Python need not have coopsim's dependencies). It offers the services of
:data:`coopsim.ros2.services.SERVICES` and the parameter ``step_count``; each call becomes one
JSON line on stdout, ``{"id": N, "service": "/coopsim/step", "count": 1}``, and coopsim answers
with one line on stdin, ``{"id": N, "success": true, "message": "..."}``, which becomes the
response. Why a process of its own: ROS 2's Fast DDS clients take a service response only when
it names their request out of band (a DDS inline QoS the Cyclone binding cannot write), so
services are served by rclpy itself.

Usage: ``python services_node.py SERVICES_JSON`` where SERVICES_JSON maps each service's name to
its type (``std_srvs/srv/Trigger`` or ``std_srvs/srv/Empty``). It prints
``{"ready": true, ...}`` once every service exists, and ends when stdin closes.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import sys
import threading
from importlib import metadata

import rclpy
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rcl_interfaces.msg import ParameterDescriptor, IntegerRange, SetParametersResult

NODE = "coopsim_control"
ANSWER_WAIT = 30.0  # s a call waits for coopsim's answer (/sim's longest wait is 10 s)


class Control(Node):
    """The services; each call waits for coopsim's answer on stdin."""

    def __init__(self, services: dict, max_steps: int) -> None:
        super().__init__(NODE)
        self.max_steps = max_steps  # /sim's step limit (coopsim.model.limits.MAX_STEPS)
        self.declare_parameter("step_count", 1, ParameterDescriptor(
            description=f"steps each /coopsim/step call takes (1..{max_steps})",
            integer_range=[IntegerRange(from_value=1, to_value=max_steps, step=1)]))
        self.add_on_set_parameters_callback(self._check)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting: dict[int, list] = {}  # id -> [Event, answer]
        group = ReentrantCallbackGroup()  # calls wait on stdin: several may be under way
        for name, kind in services.items():  # (the node keeps them: Node.services)
            self.create_service(ros_type(kind), name, self._handler(name, kind),
                                callback_group=group)

    def _check(self, params) -> SetParametersResult:
        for p in params:
            if p.name == "step_count" and not (isinstance(p.value, int)
                                               and 1 <= p.value <= self.max_steps):
                return SetParametersResult(successful=False, reason=(
                    f"step_count must be an integer 1..{self.max_steps}, not {p.value!r}"))
        return SetParametersResult(successful=True)

    def _handler(self, name: str, kind: str):
        def handle(request, response):
            ok, message = self.ask(name)
            if kind.endswith("/Trigger"):
                response.success, response.message = ok, message
            elif not ok:  # std_srvs/Empty has no field to say no: the log says it
                self.get_logger().warning(f"{name}: {message}")
            return response
        return handle

    def ask(self, name: str) -> tuple[bool, str]:
        """Send one call to coopsim and wait for its answer."""
        waiter = [threading.Event(), None]
        with self._lock:
            n = next(self._ids)
            self._waiting[n] = waiter
            count = self.get_parameter("step_count").value
            print(json.dumps({"id": n, "service": name, "count": count}), flush=True)
        if not waiter[0].wait(ANSWER_WAIT):
            with self._lock:
                self._waiting.pop(n, None)
            return False, f"coopsim did not answer {name} within {ANSWER_WAIT:g} s"
        return waiter[1]

    def answered(self, line: str) -> None:
        """One answer line from coopsim (its reader thread)."""
        answer = json.loads(line)
        with self._lock:
            waiter = self._waiting.pop(answer.get("id"), None)
        if waiter is not None:
            waiter[1] = (bool(answer.get("success")), str(answer.get("message", "")))
            waiter[0].set()


def ros_type(name: str):
    """``pkg/srv/Name`` -> the generated class."""
    pkg, kind, cls = name.split("/")
    return getattr(importlib.import_module(f"{pkg}.{kind}"), cls)


def rclpy_version() -> str:
    for dist in ("ros-rclpy", "ros-jazzy-rclpy", "ros-kilted-rclpy"):
        try:
            return f"{dist} {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    return f"rclpy ({os.environ.get('ROS_DISTRO', 'a ROS 2 installation')})"


def main() -> None:
    services, max_steps = json.loads(sys.argv[1]), int(sys.argv[2])
    rclpy.init()
    node = Control(services, max_steps)
    executor = MultiThreadedExecutor(num_threads=4)
    executor.add_node(node)
    spinning = threading.Thread(target=spin, args=(executor,), daemon=True)
    spinning.start()
    print(json.dumps({"ready": True, "node": f"/{NODE}", "rclpy": rclpy_version(),
                      "rmw": rclpy.get_rmw_implementation_identifier()}), flush=True)
    for line in sys.stdin:  # coopsim's answers; the end of stdin is coopsim gone
        if line.strip():
            node.answered(line)
    leave(node, executor, spinning)


def spin(executor) -> None:
    """The executor's loop, until ``rclpy.try_shutdown`` ends it."""
    try:
        executor.spin()
    except Exception:  # noqa: BLE001 - ExternalShutdownException: the way out
        pass


def leave(node, executor, spinning: threading.Thread, grace: float = 2.0) -> None:
    """End the process, the node torn down first when its executor has stopped.

    Torn down, Fast DDS removes its shared-memory segments (``/dev/shm/fastdds_*``, some
    50 KB-1 MB each); a process that just exits leaves them behind, run after run. A node is
    destroyed only once the executor's threads are gone (destroying it under a spinning
    executor can abort in rclpy's C layer); a callback still waiting after ``grace`` seconds
    (a call coopsim never answered) leaves it as it is."""
    rclpy.try_shutdown()
    sys.stdout.flush()
    spinning.join(grace)
    if not spinning.is_alive() and executor.shutdown(timeout_sec=grace):
        node.destroy_node()
        sys.exit(0)
    os._exit(0)


if __name__ == "__main__":
    main()
