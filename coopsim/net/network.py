"""The simulation on the network: name server, ``/sim``, every robot's endpoint, the state stream.

:class:`Network` starts them for a stepper and keeps the set of robot endpoints equal to the set
of robots in the world: after an insertion, removal, load or reset it opens endpoints for new
robots, closes those of removed ones and updates the name server. The robots' endpoints are all
served by one :class:`~coopsim.net.robothub.RobotHub` from the stepper's thread. Given keys,
every one of those sockets is a CurveZMQ server (:mod:`coopsim.net.security`).
"""

from __future__ import annotations

import threading

import zmq

from .hubconns import raise_fd_limit
from .nameserver import NameServer
from .posechannel import PoseChannel
from .robothub import RobotHub
from .security import ClientKeys, ServerKeys, guarded
from .simserver import SimServer
from .squads import SquadServer
from .statestream import StatePublisher


class Network:
    """All servers of one live run.

    Args:
        stepper: The run's Stepper.
        bind: Address every server binds (127.0.0.1 unless told otherwise).
        port: Name-server port (10000 = YARP's default; 0 = any free port).
        publish_rate: State stream messages per second of wall time (0 = every step).
        recording: What starts and stops recording on request (see SimServer), or None.
        keys: With keys every server is a Curve server that accepts only authorized clients.
        advertise: Host in the endpoints the name server hands out (default: bind).
    """

    def __init__(self, stepper, bind: str = "127.0.0.1", port: int = 10000,
                 publish_rate: float = 30.0, recording=None, keys: ServerKeys | None = None,
                 advertise: str | None = None) -> None:
        self.stepper = stepper
        self.bind = bind
        raise_fd_limit()
        self.ctx = zmq.Context()
        self.ctx.setsockopt(zmq.LINGER, 0)
        self._lock = threading.Lock()
        self.guard = guarded(self.ctx, keys)  # before the first bind
        on = {"advertise": advertise, "configure": self.guard and self.guard.configure}
        made: list = []  # what is bound so far: closed again if a later bind is refused
        try:
            self.names = _made(made, NameServer(self.ctx, bind, port, **on))
            self.hub = _made(made, RobotHub(self.ctx, stepper, bind, **on))
            self.sim = _made(made, SimServer(self.ctx, stepper, self.sync_robots, bind,
                                             recording, **on))
            self.publisher = _made(made, StatePublisher(self.ctx, stepper, bind, publish_rate,
                                                        **on))
            self.squads = _made(made, SquadServer(self.ctx, stepper, bind, **on))
            self.poses = _made(made, PoseChannel(self.ctx, stepper, bind, **on))  # protocol 11
        except BaseException:
            # a --ports range too small for the servers (or a bind refused) ends the start-up:
            # every socket closed before the context ends, else its term() (at exit, or when
            # the collector reaches it on any thread) waits for them for ever
            for server in reversed(made):
                server.close() if hasattr(server, "close") else server.stop(timeout=0)
            if self.guard is not None:
                self.guard.close()
            self.ctx.term()
            raise
        self.names.register("/sim", self.sim.endpoint)
        self.publisher.register(self.names)
        self.squads.register(self.names)
        self.poses.register(self.names)
        self.sim.more_state.append(self.squads.state)
        self.sim.more_state.append(lambda: external_state(stepper))  # protocol 10
        stepper.hooks.append(self.publisher)
        stepper.hooks.append(self.squads.observe)
        stepper.idle_hooks.append(lambda snap: self.publisher(snap, force=True))

    @property
    def endpoint(self) -> str:
        """The name server's endpoint (what clients start from)."""
        return self.names.endpoint

    @property
    def local_keys(self) -> ClientKeys | None:
        """The run's own client keys (for the clients it starts itself), or None without Curve."""
        return self.guard.local if self.guard is not None else None

    @property
    def robots(self) -> dict:
        """Robot name -> its port (``endpoint``, ``commands``)."""
        return self.hub.ports

    def start(self) -> "Network":
        """Start every server; on failure (no descriptors left...) close everything again."""
        try:
            self.names.start()
            self.sim.start()
            self.squads.start()
            self.poses.start()
            self.sync_robots()
            self.hub.start()
        except BaseException:
            self.close()
            raise
        return self

    def sync_robots(self) -> None:
        """Open endpoints for new robots and close those of robots no longer in the world."""
        world = self.stepper.sim.world
        current = {r.name: r for r in world.robots}
        with self._lock:
            for name in [n for n in self.hub.ports if n not in current]:
                self.hub.remove(name)  # before forget: no motor command comes after
                self.names.unregister_prefix(f"/{name}")
                self.stepper.slots.forget([name])
            for name, robot in current.items():
                known = name in self.hub.ports
                port = self.hub.add(name, robot.modules, _driver_values(robot), robot.info)
                if not known:
                    self._register(name, port.endpoint, robot.modules)

    def _register(self, name: str, endpoint: str, modules) -> None:
        self.names.unregister_prefix(f"/{name}")
        self.names.register(f"/{name}", endpoint)
        for module in modules:
            self.names.register(f"/{name}/{module}", endpoint)

    def close(self) -> None:
        """Stop every server and release the sockets (call after the stepper has stopped)."""
        if self.publisher in self.stepper.hooks:
            self.stepper.hooks.remove(self.publisher)
        self.stepper.idle_hooks.clear()
        servers = [self.names, self.sim, self.squads, self.poses]
        for server in servers:  # signal all first: each takes up to a poll period to notice
            server.stop(timeout=0)
        for server in servers:
            server.stop()
        self.hub.close()
        self.publisher.close()
        if self.guard is not None:  # after every Curve server has closed
            self.guard.close()
        self.ctx.term()


def _made(made: list, server):
    """``server``, noted in ``made`` (what :class:`Network` closes if its start-up fails)."""
    made.append(server)
    return server


def _driver_values(robot):
    """The robot's driver parameters (served as the pseudo-module ``driver``), or None."""
    return robot.driver[1] if robot.driver is not None else None


def external_state(stepper) -> dict:
    """``/sim state``'s ``external`` entry (protocol 10): only in a run with external robots
    (their status, counts and the latencies of their poses, docs/protocol.md section 4)."""
    external = stepper.sim.external
    return {"external": external.state()} if external else {}
