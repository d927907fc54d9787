"""The network host of drivers: run a :class:`~coopsim.model.driver.Driver` as a controller
process talking the protocol, the same class the simulator hosts in-process."""

from __future__ import annotations

import os
import random

from ..model.commands import NOT_ALLOWED
from ..model.errors import CoopsimError
from ..model.driver import ROBOT_SEED_VARIABLE, SEED_VARIABLE, Driver, robot_seed
from .connection import Client, RemoteError


class _Rng:
    """The part of numpy's Generator drivers use, from the standard library (a network
    controller needs no numpy)."""

    def __init__(self, seed) -> None:
        self._r = random.Random(seed)

    def random(self) -> float:
        return self._r.random()

    def uniform(self, low: float = 0.0, high: float = 1.0) -> float:
        return self._r.uniform(low, high)

    def normal(self, loc: float = 0.0, scale: float = 1.0) -> float:
        return self._r.gauss(loc, scale)


def run_controller(driver, robot: str | None = None, params: dict | None = None,
                   steps: int | None = None, nameserver: str | None = None,
                   seed: int | None = None, period: float = 0.05) -> int:
    """Drive ``robot`` over the network with a driver class (or its registered label).

    Args:
        driver: A Driver subclass, or a label of the ``coopsim.drivers`` registry.
        robot: Network name; default $COOPSIM_ROBOT or ``robot1``.
        params: Driver parameter values (validated as in a scenario).
        steps: Stop after this many iterations (default: until the run ends).
        nameserver: Default $COOPSIM_NAMESERVER or the default endpoint.
        seed: Seed of the driver's random generator; None: the run's (:func:`run_seed`), so
            the same scenario and seed give the same run with network controllers too.
        period: Wall-time period of an iteration in real time, s.

    Returns:
        The number of iterations run. In lockstep one iteration is one simulation step; the
        driver is called every ``every`` iterations, as in-process. A run that finishes
        (its duration, or a rule ended it) ends the loop normally.
    """
    if isinstance(driver, str):
        from ..model.plugins import DRIVERS

        driver = DRIVERS.get(driver)
    if not (isinstance(driver, type) and issubclass(driver, Driver)):
        raise TypeError(f"{driver!r} is not a Driver class")
    name = robot or os.environ.get("COOPSIM_ROBOT", "robot1")
    done = 0
    with Client(nameserver) as client:
        if seed is None:
            seed = run_seed(name, client)
        instance = driver(driver.values(params), _Rng(seed))
        bot = client.robot(name)
        instance.setup(bot)
        try:
            for i in bot.loop(steps, period):
                if i % instance.p["every"] == 0:
                    instance.step(bot)
                else:  # between calls the command stays in force, as in-process
                    bot.repeat()
                done = i + 1
        except RemoteError as exc:
            if exc.code != NOT_ALLOWED or "finished" not in exc.text:
                raise
    return done


def run_seed(robot: str, client: Client | None = None) -> int | None:
    """The seed of ``robot``'s random stream in the run it belongs to: ``$COOPSIM_ROBOT_SEED``
    (a launched controller's), else :func:`~coopsim.model.driver.robot_seed` of
    ``$COOPSIM_SEED``, else of the seed the run's ``/sim state`` names (a controller started by
    hand), else None (the operating system's randomness: the run cannot be repeated)."""
    for variable in (ROBOT_SEED_VARIABLE, SEED_VARIABLE):
        text = os.environ.get(variable, "").strip()
        if text:
            try:
                value = int(text)
            except ValueError:
                raise ValueError(f"${variable} must be an integer, not {text!r}") from None
            return value if variable == ROBOT_SEED_VARIABLE else robot_seed(value, robot)
    if client is None:
        return None
    try:
        seed = client.sim().state().get("seed")
    except (CoopsimError, OSError, ValueError):  # no /sim to ask (a replay, keys it lacks)
        return None
    return robot_seed(seed, robot) if isinstance(seed, int) else None


def controller_main(driver, default_robot: str, doc: str | None = None,
                    argv: list[str] | None = None) -> int:
    """The command line of a driver run as a controller: ``[ROBOT] [--steps N] [--set
    NAME=VALUE ...]`` (ROBOT defaults to ``$COOPSIM_ROBOT``, else ``default_robot``); what
    ``clients/python``'s textbook controllers are. Returns the control steps taken."""
    import argparse

    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("robot", nargs="?",
                        default=os.environ.get("COOPSIM_ROBOT", default_robot))
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a driver parameter (coopsim list shows them)")
    args = parser.parse_args(argv)
    params: dict = {}
    for item in args.set:
        name, _, value = item.partition("=")
        try:
            params[name] = float(value)
        except ValueError:
            params[name] = value
    return run_controller(driver, args.robot, params, steps=args.steps)
