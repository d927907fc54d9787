"""Reference solution of exercise 4 (keep the left corner of the triangle)."""

import math
import os

from coopsim.client import Client


def wrap(a):
    return math.atan2(math.sin(a), math.cos(a))


with Client() as client:
    bot = client.robot(os.environ.get("COOPSIM_ROBOT", "robot1"))
    lead = bot.peer("lead")
    for _ in bot.loop():
        (x, y), (yaw,) = bot.gps.read(), bot.compass.read()
        (lx, ly), (lyaw,) = lead.gps.read(), lead.compass.read()
        # my place: 0.866 m behind the leader and 0.5 m to its left, in its frame
        sx = lx - 0.866 * math.cos(lyaw) - 0.5 * math.sin(lyaw)
        sy = ly - 0.866 * math.sin(lyaw) + 0.5 * math.cos(lyaw)
        distance = math.hypot(sx - x, sy - y)
        bearing = wrap(math.atan2(sy - y, sx - x) - yaw)
        if distance < 0.05:                       # there: face the leader's way
            forward, turn = 0.0, 0.8 * wrap(lyaw - yaw)
        else:
            forward = min(0.4, 0.2 + 0.8 * distance) * max(0.0, math.cos(bearing))
            turn = 1.2 * bearing
        turn = max(-0.4, min(0.4, turn))
        bot.motors.set_speeds(forward - turn, forward + turn)
