"""Run control for ROS 2 clients: pause, resume, reset and step, as Gazebo and Webots users call
them (docs/ros2.md, *Run control*).

Each service is answered by the run's ``/sim`` server itself (its commands 2, 3, 5 and 4, with
their checks, their error codes and their waits), so a ROS client and a ZeroMQ client get the
same answer to the same request; only the envelope differs: ROS 2 has no error replies, so a
refusal is a response with ``success`` false and ``message`` the sentence ``/sim`` would send
(``error 6: step takes steps of a paused run: ...``). Nothing here knows how the answer travels:
the node (:mod:`coopsim.ros2.services_node`, via :mod:`coopsim.ros2.services_host`) hands in a
service name and, for ``step``, the number of steps, and sends back ``(success, message)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..model.commands import OUT_OF_RANGE
from ..model.limits import MAX_STEPS
from ..model.statedoc import DocKey


#: The run-control services: name -> (/sim command, ROS 2 type). Names under the node's
#: namespace ``/coopsim``; the Gazebo Classic aliases take std_srvs/Empty (no answer to read).
SERVICES = {
    "/coopsim/pause": ("pause", "std_srvs/srv/Trigger"),
    "/coopsim/resume": ("resume", "std_srvs/srv/Trigger"),
    "/coopsim/reset": ("reset", "std_srvs/srv/Trigger"),
    "/coopsim/step": ("step", "std_srvs/srv/Trigger"),
    "/pause_physics": ("pause", "std_srvs/srv/Empty"),
    "/unpause_physics": ("resume", "std_srvs/srv/Empty"),
    "/reset_simulation": ("reset", "std_srvs/srv/Empty"),
}
#: What each service does (docs/reference/ros2.md is generated from it and :data:`SERVICES`).
SERVICE_DOES = {
    "/coopsim/pause": "stop stepping",
    "/coopsim/resume": "step again (refused on a finished run)",
    "/coopsim/step": "take `step_count` steps of a paused run, then answer",
    "/coopsim/reset": "back to the scenario and its seed",
    "/pause_physics": "as `/coopsim/pause` (Gazebo Classic's name); a refusal is only logged",
    "/unpause_physics": "as `/coopsim/resume` (Gazebo Classic's name); a refusal is only logged",
    "/reset_simulation": "as `/coopsim/reset` (Gazebo Classic's name); a refusal is only logged",
}


#: The keys of ``/sim state``'s ``ros2_control`` (docs/reference/state.md is generated from
#: them).
ROS2_CONTROL_KEYS = (
    DocKey("calls", "service -> integer", "calls answered, by service (`/coopsim/pause` ...)"),
    DocKey("refused", "integer", "calls answered `success: false`"),
    DocKey("last_refusal", "string", "`error N: ...` of the latest"),
    DocKey("step_count", "integer", "the steps each `/coopsim/step` takes (its parameter)"),
)
#: ``/sim state``'s ``ros2_control`` entry.
ROS2_CONTROL = DocKey("ros2_control", "object", "the run-control services' answers "
                      "(docs/ros2.md, *Run control*)", since=12,
                      present="a run with `--ros2` whose run-control node started",
                      fields=ROS2_CONTROL_KEYS)


@dataclass
class ServiceCounts:
    """Calls answered, by service, and the last refusal (``/sim state``'s ``ros2.services``)."""

    calls: dict = field(default_factory=dict)
    refused: int = 0
    last_refusal: str = ""


class RunControl:
    """The run-control services' answers, given by a run's ``/sim`` server.

    Args:
        sim: Answers one ``/sim`` command as the server would, given its name (``pause``,
            ``resume``, ``reset``, ``step``) and its integer params: a reply with ``error``
            (0: done), ``text``, ``params`` and ``data`` (/sim's status). The app layer makes it
            from the run's :class:`~coopsim.net.simserver.SimServer` (``sim_caller`` in
            coopsim/app/run.py); this layer imports nothing of the network's.
    """

    def __init__(self, sim: Callable) -> None:
        self.sim = sim
        self.step_count = 1  # steps /coopsim/step takes (the node's step_count parameter)
        self.counts = ServiceCounts()

    def set_step_count(self, n) -> tuple[bool, str]:
        """Take ``n`` as the count of the next ``/coopsim/step`` calls (1..MAX_STEPS)."""
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_STEPS:
            return self._refused(f"error {OUT_OF_RANGE}: step count must be "
                                 f"1..{MAX_STEPS}, not {n!r}")
        self.step_count = n
        return True, f"/coopsim/step takes {n} step(s)"

    def call(self, service: str) -> tuple[bool, str]:
        """Answer one call of ``service`` (a key of :data:`SERVICES`): (success, message).

        Never raises for a request: every refusal is ``(False, "error N: ...")`` with /sim's
        code and sentence.
        """
        name = SERVICES[service][0]
        c = self.counts
        c.calls[service] = c.calls.get(service, 0) + 1
        reply = self.sim(name, (self.step_count,) if name == "step" else ())
        if reply.error:
            return self._refused(f"error {reply.error}: {reply.text}")
        return True, status_line(name, reply)

    def _refused(self, text: str) -> tuple[bool, str]:
        self.counts.refused += 1
        self.counts.last_refusal = text
        return False, text

    def state(self) -> dict:
        """The ``ros2_control`` entry of ``/sim state``."""
        c = self.counts
        return {"ros2_control": {"calls": dict(sorted(c.calls.items())), "refused": c.refused,
                                 "last_refusal": c.last_refusal,
                                 "step_count": self.step_count}}


def status_line(name: str, reply) -> str:
    """The message of a successful call: what was done and the run's status after it (/sim's
    status reply: params step, paused; data time)."""
    step, paused = reply.params[0], bool(reply.params[1])
    done = {"pause": "paused", "resume": "resumed", "reset": "reset",
            "step": "stepped"}[name]
    return (f"{done}: step {step}, time {reply.data[0]:.6f} s, "
            f"{'paused' if paused else 'running'}, {reply.text}")
