"""A controller that lets go of its robot, then takes a while to crash (a slow teardown, a
busy machine): its crash must still be in the verdict."""

import os
import sys
import time

from coopsim.client import Client

with Client() as client:
    bot = client.robot(os.environ.get("COOPSIM_ROBOT", "robot1"))
    for i in bot.loop():
        bot.motors.set_speeds(0.2, 0.2)
        if i == 5:
            break  # leaving the loop detaches the robot: the run goes on without it
print("cleaning up slowly before failing")
sys.stdout.flush()
time.sleep(2.0)  # what a loaded machine does to a crashing interpreter's teardown
sys.exit(1)
