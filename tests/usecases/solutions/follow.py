"""Reference solution of exercise 3 (follow the leader at 0.5-1.5 m)."""

import math
import os

from coopsim.client import Client

with Client() as client:
    bot = client.robot(os.environ.get("COOPSIM_ROBOT", "robot1"))
    leader = bot.peer("leader")
    for _ in bot.loop():
        (x, y), (yaw,) = bot.gps.read(), bot.compass.read()
        lx, ly = leader.gps.read()
        gap = math.hypot(lx - x, ly - y)
        bearing = math.atan2(ly - y, lx - x) - yaw
        bearing = math.atan2(math.sin(bearing), math.cos(bearing))
        forward = max(-0.2, min(0.4, 0.8 * (gap - 0.9))) * max(0.0, math.cos(bearing))
        turn = max(-0.3, min(0.3, 0.8 * bearing))
        bot.motors.set_speeds(forward - turn, forward + turn)
