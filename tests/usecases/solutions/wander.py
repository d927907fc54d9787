"""Reference solution of exercise 1 (wander without touching anything)."""

import os

from coopsim.client import Client

with Client() as client:
    bot = client.robot(os.environ.get("COOPSIM_ROBOT", "robot1"))
    turn = 0.0  # while turning on the spot: its wheel speed (+ turns left)
    for _ in bot.loop():
        d = bot.sonar.read()                      # 11 distances, right (-90) to left (+90)
        right, ahead, left = min(d[0:4]), min(d[3:8]), min(d[7:11])
        if not turn and (ahead < 0.5 or min(right, left) < 0.15):
            turn = 0.25 if right < left else -0.25  # towards the open side...
        elif turn and ahead > 0.9 and min(right, left) > 0.25:
            turn = 0.0                            # ...until the way ahead is well clear
        if turn:
            bot.motors.set_speeds(-turn, turn)
        else:
            steer = 0.15 * (min(right, 1.0) - min(left, 1.0))
            bot.motors.set_speeds(0.25 + steer, 0.25 - steer)
