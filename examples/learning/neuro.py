"""A small neural controller for obstacle avoidance: sonar in, wheel speeds out.

One source, three hosts: :class:`Network` runs on arrays of any batch shape (the evolution
evaluates a whole population in batched worlds with it), and :class:`NeuroDriver` wraps the very
same network as a coopsim driver, hosted over the network by ``coopsim.client.run_controller``
(``deploy.py``) or in-process by a scenario's ``driver`` line once registered.

Inputs: the 11 sonar distances as proximities ``1 - d / max_range`` (0 = nothing seen, 1 =
touching) and a bias; an optional hidden tanh layer; outputs: tanh of the two wheel speeds,
scaled by ``max_speed`` (m/s).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from coopsim.model.driver import Driver
from coopsim.model.params import ParamSpec

SONAR = 11


class Network:
    """A feed-forward network with its weights flat (what CMA-ES evolves).

    Args:
        weights: Flat weights, :meth:`size` of them. hidden: Hidden units (0: none).
        max_range: Sonar range, m. max_speed: Wheel speed at output 1, m/s.
    """

    def __init__(self, weights, hidden: int = 0, max_range: float = 2.0,
                 max_speed: float = 0.6) -> None:
        self.hidden, self.max_range, self.max_speed = hidden, max_range, max_speed
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (self.size(hidden),):
            raise ValueError(f"a network with {hidden} hidden units has {self.size(hidden)} "
                             f"weights, got {w.shape}")
        self.weights = w
        if hidden:
            cut = (SONAR + 1) * hidden
            self.w1 = w[:cut].reshape(SONAR + 1, hidden)
            self.w2 = w[cut:].reshape(hidden + 1, 2)
        else:
            self.w1, self.w2 = None, w.reshape(SONAR + 1, 2)

    @staticmethod
    def size(hidden: int = 0) -> int:
        """Number of weights."""
        return (SONAR + 1) * hidden + (hidden + 1) * 2 if hidden else (SONAR + 1) * 2

    def __call__(self, sonar) -> np.ndarray:
        """Wheel speeds (..., 2), m/s, from sonar distances (..., 11), m."""
        x = 1.0 - np.clip(np.asarray(sonar, dtype=np.float64) / self.max_range, 0.0, 1.0)
        x = np.concatenate([x, np.ones(x.shape[:-1] + (1,))], axis=-1)
        if self.w1 is not None:
            x = np.tanh(x @ self.w1)
            x = np.concatenate([x, np.ones(x.shape[:-1] + (1,))], axis=-1)
        return np.tanh(x @ self.w2) * self.max_speed

    def save(self, path, **extra) -> None:
        """Write the network as JSON (weights, shape, scales and ``extra`` notes)."""
        Path(path).write_text(json.dumps({"hidden": self.hidden, "max_range": self.max_range,
                                          "max_speed": self.max_speed,
                                          "weights": self.weights.tolist(), **extra}, indent=1))

    @classmethod
    def load(cls, path) -> "Network":
        """A network saved by :meth:`save`."""
        data = json.loads(Path(path).read_text())
        return cls(data["weights"], data["hidden"], data["max_range"], data["max_speed"])


class NeuroDriver(Driver):
    """The evolved network as a driver: reads the sonar, sets the wheel speeds."""

    label = "neuro"
    description = "an evolved neural network from a JSON file: sonar in, wheel speeds out"
    params = (ParamSpec("weights", "str", "the network's JSON file (evolve.py's champion)",
                        "champion.json"),)

    def setup(self, bot) -> None:
        self.net = Network.load(self.p["weights"])

    def step(self, bot) -> None:
        left, right = self.net(bot.sonar.read())
        bot.motors.set_speeds(float(left), float(right))
