"""Run an evolved champion unchanged as a network controller against ``coopsim run``.

Usage: python deploy.py CHAMPION.json [ROBOT] [--steps N]
(ROBOT defaults to $COOPSIM_ROBOT, as ``coopsim run --controller r1=...`` sets it.)

    coopsim run scenarios/learn_avoid.scenario --headless --mode lockstep --duration 20 \\
        --controller "r1=examples/learning/deploy.py out/champion.json"
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coopsim.client import run_controller  # noqa: E402
from neuro import NeuroDriver  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("champion")
    parser.add_argument("robot", nargs="?", default=os.environ.get("COOPSIM_ROBOT", "r1"))
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    done = run_controller(NeuroDriver, args.robot,
                          {"weights": str(Path(args.champion).resolve())}, steps=args.steps)
    print(f"deploy: {args.robot} drove {done} steps", file=sys.stderr)


if __name__ == "__main__":
    main()
