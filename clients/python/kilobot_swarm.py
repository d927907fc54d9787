"""Kilobot aggregation (or dispersion: --set mode=disperse) by IR messaging, for one Kilobot.

Usage: python kilobot_swarm.py [ROBOT] [--steps N] [--set NAME=VALUE ...]
(ROBOT defaults to $COOPSIM_ROBOT, else kb1; e.g. against
`coopsim run scenarios/kilobot_aggregation.scenario --mode lockstep` with the scenario's driver
lines removed, or `--controller kb1="python clients/python/kilobot_swarm.py"`.)
The controller is coopsim's ``kilobot_swarm`` driver (coopsim/plugins/drivers/textbook.py): the
same code runs in-process (``driver kilobot_swarm`` in a scenario) or, here, over the network.
"""

from coopsim.client import controller_main
from coopsim.plugins.drivers.textbook import KilobotSwarm

if __name__ == "__main__":
    controller_main(KilobotSwarm, "kb1", __doc__)
