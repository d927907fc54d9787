"""TurtleBot3 right-hand wall following with the 360-beam lidar.

Usage: python wall_follow.py [ROBOT] [--steps N] [--set NAME=VALUE ...]
(ROBOT defaults to $COOPSIM_ROBOT, else tb3; e.g. against
`coopsim run scenarios/turtlebot3_wall_follow.scenario --mode lockstep` with the scenario's driver line
removed, or `--controller tb3="python clients/python/wall_follow.py"`.)
The controller is coopsim's ``wall_follow`` driver (coopsim/plugins/drivers/textbook.py): the same
code runs in-process (``driver wall_follow`` in a scenario) or, here, over the network.
"""

from coopsim.client import controller_main
from coopsim.plugins.drivers.textbook import WallFollow

if __name__ == "__main__":
    controller_main(WallFollow, "tb3", __doc__)
