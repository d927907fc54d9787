"""K isolated copies of a scenario as one Gymnasium ``VectorEnv`` (docs/learning.md):
``gymnasium.make_vec("coopsim/Scenario-v0", num_envs=K, scenario=...)``. Built on
:class:`~coopsim.env.batch.BatchWorld`: one tick steps every copy. Autoreset: next step
(Gymnasium's default), per copy."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..model.plugins import engine_with
from .batch import BatchWorld
from .copies import batch_world
from .gym import refuse_closed


def _single_spaces(batch: BatchWorld, flat: bool):
    """(observation, action) spaces of one copy: shapes (w,) / (d,) for one agent, (A, w) /
    (A, d) for several."""
    maps, many = batch.maps, len(batch.maps) > 1

    def box(lows, highs):
        low, high = np.stack(lows), np.stack(highs)
        return spaces.Box(low if many else low[0], high if many else high[0], dtype=np.float64)

    if flat:
        obs = box([np.concatenate(m.low) for m in maps], [np.concatenate(m.high) for m in maps])
    else:
        obs = spaces.Dict({label: box([m.low[i] for m in maps], [m.high[i] for m in maps])
                           for i, label in enumerate(maps[0].observe)})
    return obs, box([m.action_low for m in maps], [m.action_high for m in maps])


class CoopsimVectorEnv(VectorEnv):
    """``num_envs`` copies of a scenario's agents stepped with arrays.

    Args:
        num_envs: K, the number of copies.
        scenario: Path or ScenarioSpec. robot: One agent (a name) or several (a list) per copy;
            default: every robot without a driver. observe, flat: As for the single
            environment.
        task: See :class:`~coopsim.env.batch.BatchWorld` (a vectorized callable), default the
            scenario's ``[TASK]``. gap: Distance between copies, m (0.2 at least: the walls
            around their floors). lean: Robots without a driver carry only the observed and
            motion modules (see BatchWorld).
        engine: Must be the batch's engine (or None): the first engine with the ``batch``
            feature (``kinematic``).
        backend: ``"copies"`` (one template copy tiled, one compiled parallel step; an
            unsupported scenario raises), ``"world"`` (every copy in one simulation), or None:
            copies when supported, else world (the reason logged and in
            ``batch.backend_reason``). threads: The copies backend's thread count (None: the
            thread policy's, :mod:`coopsim.model.threads`).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int, scenario, robot=None, observe=None, flat: bool = False,
                 task=None, gap: float | None = None, engine: str | None = None,
                 render_mode: str | None = None, lean: bool = False,
                 backend: str | None = None, threads: int | None = None, **ignored) -> None:
        from .mapping import LearningError

        batch = engine_with("batch")
        if engine not in (None, batch):
            raise LearningError(f"batched worlds run on the {batch} engine alone, not "
                                f"{engine!r} (gymnasium.make runs one copy on any engine)")
        if render_mode is not None:
            raise LearningError("batched worlds do not render; render one copy with make()")
        self.batch = batch_world(scenario, num_envs, robot, observe, task, gap, lean=lean,
                                 backend=backend, threads=threads)
        self.num_envs = num_envs
        self.flat = flat
        self.many = len(self.batch.agents) > 1
        self.single_observation_space, self.single_action_space = _single_spaces(self.batch,
                                                                                flat)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None
        self._done = np.zeros(num_envs, dtype=bool)

    def _obs(self, snap):
        obs = self.batch.observation(snap)
        if self.flat:
            out = np.concatenate([obs[label] for label in self.batch.maps[0].observe], axis=2)
            return out if self.many else out[:, 0]
        # in the observation space's order (a Dict space sorts its keys)
        return {k: obs[k] if self.many else obs[k][:, 0]
                for k in self.single_observation_space.spaces}

    def _info(self, snap) -> dict:
        return {"time": np.full(self.num_envs, snap.time),
                "episode_time": self.batch.steps * self.batch.dt}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Every copy starts over (``seed`` seeds the one run's generator)."""
        refuse_closed(self, "reset")
        super().reset(seed=seed)
        snap = self.batch.reset(seed)
        self._done[:] = False
        return self._obs(snap), self._info(snap)

    def step(self, actions):
        """Store the (K, ...) actions, step every copy once; copies that ended at the previous
        step start over now (their actions ignored, reward 0)."""
        refuse_closed(self, "step")
        self.batch.act(actions)
        resetting = self._done.copy()
        if resetting.any():
            self.batch.reset_copies(resetting)
        snap = self.batch.tick()
        reward, terminated, truncated = self.batch.outcome(snap)
        reward[resetting] = 0.0
        terminated[resetting] = truncated[resetting] = False
        self._done = terminated | truncated
        rewards = reward if self.many else reward[:, 0]
        return self._obs(snap), rewards, terminated, truncated, self._info(snap)
