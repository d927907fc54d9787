"""Reference solution of exercise 2 (reach the red target)."""

import os

from coopsim.client import Client

with Client() as client:
    bot = client.robot(os.environ.get("COOPSIM_ROBOT", "robot1"))
    for _ in bot.loop():
        distance, angle = bot.target.read_color("red")
        d = bot.sonar.read()
        if distance < 0.15:
            bot.motors.stop()
            continue
        if min(d[3:8]) < 0.45:                    # something ahead: turn to the open side
            turn = 0.25 if min(d[0:5]) < min(d[6:11]) else -0.25
            bot.motors.set_speeds(-turn, turn)
            continue
        push = 0.6 * (min(d[6:11]) - min(d[0:5])) if min(d) < 0.5 else 0.0  # off the walls
        turn = max(-0.2, min(0.2, 0.8 * angle + push))
        forward = min(0.3, 0.5 * distance)
        bot.motors.set_speeds(forward - turn, forward + turn)
