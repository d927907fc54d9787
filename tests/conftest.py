"""Shared test set-up: make tests/helpers.py importable."""

import signal
import sys
from pathlib import Path

# A suite started in the background (`bash .ci/run &`, a job runner) gets SIGINT ignored, and
# every process it starts would keep ignoring it: the tests that stop a run or a sweep with
# Ctrl-C would then wait for nothing. Ctrl-C is Python's own here, as in a terminal.
signal.signal(signal.SIGINT, signal.default_int_handler)

sys.path.insert(0, str(Path(__file__).parent))
