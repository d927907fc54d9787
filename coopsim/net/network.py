"""The simulation on the network: name server, ``/sim``, one server per robot, the state stream.

:class:`Network` starts them for a stepper and keeps the set of robot servers equal to the set of
robots in the world: after an insertion, removal, load or reset it starts servers for new robots,
stops those of removed ones and updates the name server.
"""

from __future__ import annotations

import threading

import zmq

from .nameserver import NameServer
from .robotserver import RobotServer
from .simserver import SimServer
from .statestream import StatePublisher


class Network:
    """All servers of one live run.

    Args:
        stepper: The run's Stepper.
        bind: Address every server binds (127.0.0.1 unless told otherwise).
        port: Name-server port (10000 = YARP's default; 0 = any free port).
        publish_rate: State stream messages per second of wall time (0 = every step).
        recording: What starts and stops recording on request (see SimServer), or None.
    """

    def __init__(self, stepper, bind: str = "127.0.0.1", port: int = 10000,
                 publish_rate: float = 30.0, recording=None) -> None:
        self.stepper = stepper
        self.bind = bind
        self.ctx = zmq.Context()
        self._lock = threading.Lock()
        self.robots: dict[str, RobotServer] = {}
        try:
            self.names = NameServer(self.ctx, bind, port)
        except OSError:
            self.ctx.term()
            raise
        self.sim = SimServer(self.ctx, stepper, self.sync_robots, bind, recording)
        self.publisher = StatePublisher(self.ctx, stepper, bind, publish_rate)
        self.names.register("/sim", self.sim.endpoint)
        self.names.register("/sim/state", self.publisher.endpoint)
        stepper.hooks.append(self.publisher)
        stepper.idle_hooks.append(lambda snap: self.publisher(snap, force=True))

    @property
    def endpoint(self) -> str:
        """The name server's endpoint (what clients start from)."""
        return self.names.endpoint

    def start(self) -> "Network":
        """Start every server."""
        self.names.start()
        self.sim.start()
        self.sync_robots()
        return self

    def sync_robots(self) -> None:
        """Start servers for new robots and stop those of robots no longer in the world."""
        world = self.stepper.sim.world
        current = {r.name: r for r in world.robots}
        with self._lock:
            for name in [n for n in self.robots if n not in current]:
                self.robots.pop(name).stop()  # before forget: no motor command comes after
                self.names.unregister_prefix(f"/{name}")
                self.stepper.slots.forget([name])
            for name, robot in current.items():
                server = self.robots.get(name)
                if server is None:
                    self._serve_robot(name, robot)
                else:  # same name after a reset or update: keep the endpoint clients know
                    server.set_modules(robot.modules, _driver_values(robot))

    def _serve_robot(self, name: str, robot) -> None:
        server = RobotServer(self.ctx, name, robot.modules, self.stepper, self.bind,
                             _driver_values(robot)).start()
        self.robots[name] = server
        self.names.unregister_prefix(f"/{name}")
        self.names.register(f"/{name}", server.endpoint)
        for module in robot.modules:
            self.names.register(f"/{name}/{module}", server.endpoint)

    def close(self) -> None:
        """Stop every server and release the sockets."""
        if self.publisher in self.stepper.hooks:
            self.stepper.hooks.remove(self.publisher)
        self.stepper.idle_hooks.clear()
        with self._lock:
            servers = [self.names, self.sim, *self.robots.values()]
            self.robots.clear()
        for server in servers:  # signal all first: each takes up to a poll period to notice
            server.stop(timeout=0)
        for server in servers:
            server.stop()
        self.publisher.close()
        self.ctx.term()


def _driver_values(robot):
    """The robot's driver parameters (served as the pseudo-module ``driver``), or None."""
    return robot.driver[1] if robot.driver is not None else None
