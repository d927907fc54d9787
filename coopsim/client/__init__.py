"""The Python client: drive a coopsim robot (or a real one speaking the same protocol).

Needs only pyzmq and msgpack -- no pymunk, no pyglet -- so the same controller runs on a robot's
own computer. A call waits for its reply as long as the server is there (see
:class:`Client`: ``timeout``, ``patient``); every error reply raises :class:`RemoteError` carrying
the protocol's error code and sentence (:class:`RobotOwned` for error 11: another connection owns
the robot). A robot's module attributes (``bot.sonar``, ``bot.motors``,
a plugin's ``bot.joints``) and their methods come from the robot itself (command 3), so modules
added by plugins work with no change here.

Example::

    from coopsim.client import Client
    with Client() as c:                       # name server tcp://127.0.0.1:10000
        bot = c.robot("robot1")
        for _ in bot.loop(steps=1000):        # lockstep: one iteration = one step
            d = bot.sonar.read()
            bot.motors.set_speeds(0.3, 0.3 if min(d[3:8]) > 0.5 else -0.3)
"""

from ..model.driver import Reading, StepInfo
from .connection import Client, RemoteError, RobotOwned, RobotTeleoperated, RunFinished
from .host import controller_main, run_controller
from .robot import Robot
from .sim import Playback, Sim

__all__ = ["Client", "RemoteError", "RobotOwned", "RobotTeleoperated", "RunFinished", "Robot", "Sim", "Playback",
           "Reading", "StepInfo", "controller_main", "run_controller"]
