"""A controller that hangs: it drives a few steps, then loops for ever without a command."""

import os
import time

from coopsim.client import Client

with Client() as client:
    bot = client.robot(os.environ.get("COOPSIM_ROBOT", "robot1"))
    for i in bot.loop():
        bot.motors.set_speeds(0.1, 0.1)
        while i >= 10:  # waits for something that never comes (asleep: a core spinning
            time.sleep(0.1)  # here only slowed the run beside it, the lease is the same)
