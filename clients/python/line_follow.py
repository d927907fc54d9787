"""Thymio edge following with the two ground sensors.

Usage: python line_follow.py [ROBOT] [--steps N] [--set NAME=VALUE ...]
(ROBOT defaults to $COOPSIM_ROBOT, else thymio; e.g. against
`coopsim run scenarios/thymio_line.scenario --mode lockstep` with the scenario's driver line
removed, or `--controller thymio="python clients/python/line_follow.py"`.)
The controller is coopsim's ``line_follow`` driver (coopsim/plugins/drivers/textbook.py): the same
code runs in-process (``driver line_follow`` in a scenario) or, here, over the network.
"""

from coopsim.client import controller_main
from coopsim.plugins.drivers.textbook import LineFollow

if __name__ == "__main__":
    controller_main(LineFollow, "thymio", __doc__)
