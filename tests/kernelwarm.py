"""Compile the kernels the suite uses beyond the run's own into numba's on-disk cache, once.

Run by tests/conftest.py as a process of its own after coopsim's cache fill (which compiles
the ray casters', the modules' and the batched environments' kernels) and before the xdist
workers start. Why: the kinematic and aerial engines' kernels and the swarm library's A*
compile on first use (``cache=True``); on a fresh checkout both workers, and every
``python -m coopsim`` child that started before them, compiled the same kernels at once
(test_kinematic.py's first tests took 200 s and more of a loaded machine, 24 s of CPU each time,
against 1.7 s from the cache). Here each is compiled once: a few steps of the small worlds of
``coopsim bench step`` on both engines at one and two threads, and one A* search with its
smoothing. Any failure changes nothing: the tests then compile what they need, as before.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np


def _bench(*args: str) -> None:
    from coopsim.app.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(["bench", "step", "--steps", "2", "--caster", "jit", *args],
                 standalone_mode=False)
        except SystemExit:
            pass


def _swarm() -> None:
    from coopsim.swarm.astar import find_path
    from coopsim.swarm.grid import Grid

    blocked = np.zeros((40, 40), bool)
    blocked[10:30, 20] = True
    find_path(Grid(blocked, 0.05, (0.0, 0.0)), (0.2, 1.0), (1.8, 1.0))


def main() -> None:
    for threads in ("1", "2"):
        _bench("--robots", "3,300", "--engine", "kinematic", "--threads", threads)
        _bench("--robots", "3", "--engine", "aerial", "--robot-type", "crazyflie",
               "--threads", threads)
    _swarm()


if __name__ == "__main__":
    main()
