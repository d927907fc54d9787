"""e-puck obstacle avoidance, Braitenberg's vehicle 3b on the 8 IR proximity sensors.

Usage: python braitenberg.py [ROBOT] [--steps N] [--set NAME=VALUE ...]
(ROBOT defaults to $COOPSIM_ROBOT, else epuck1; e.g. against
`coopsim run scenarios/epuck_braitenberg.scenario --mode lockstep` with the scenario's driver line
removed, or `--controller epuck1="python clients/python/braitenberg.py"`.)
The controller is coopsim's ``braitenberg`` driver (coopsim/plugins/drivers/textbook.py): the same
code runs in-process (``driver braitenberg`` in a scenario) or, here, over the network.
"""

from coopsim.client import controller_main
from coopsim.plugins.drivers.textbook import Braitenberg

if __name__ == "__main__":
    controller_main(Braitenberg, "epuck1", __doc__)
