"""A controller that hangs before it sends anything."""

import time

while True:
    time.sleep(3600)
