"""A controller that crashes after a few steps (a student's bug)."""

import os

from coopsim.client import Client

with Client() as client:
    bot = client.robot(os.environ.get("COOPSIM_ROBOT", "robot1"))
    for i in bot.loop():
        d = bot.sonar.read()
        bot.motors.set_speeds(0.2, 0.2)
        if i == 20:
            print("about to divide by the number of walls seen")
            speed = 1.0 / sum(1 for x in d if x < 0.0)  # ZeroDivisionError
