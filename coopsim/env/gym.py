"""``coopsim/Scenario-v0``: one robot of any scenario as a Gymnasium environment
(docs/learning.md). Gymnasium is imported here only; ``import coopsim`` never imports it."""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from ..model.snapshot import metric_values
from .episode import Episode, load, select_agents
from .mapping import AgentMap, LearningError
from .render import MODES, Drawing


def observation_space(amap: AgentMap, flat: bool) -> spaces.Space:
    """The agent's observation space: a Dict of one Box per module, or one flat Box."""
    if flat:
        return spaces.Box(np.concatenate(amap.low), np.concatenate(amap.high),
                          dtype=np.float64)
    return spaces.Dict({label: spaces.Box(low, high, dtype=np.float64)
                        for label, low, high in zip(amap.observe, amap.low, amap.high)})


class ClosedEnvError(LearningError, gymnasium.error.ClosedEnvironmentError):
    """``step`` or ``reset`` of an environment after its ``close``."""


def refuse_closed(env, call: str) -> None:
    """Raise :class:`ClosedEnvError` when ``env`` was closed (its ``closed`` is true)."""
    if getattr(env, "closed", False):
        raise ClosedEnvError(f"{type(env).__name__}.{call}() after close(): the environment "
                             "is closed; make a new one")


def action_space(amap: AgentMap) -> spaces.Box:
    """The agent's action space: its motion module's real limits."""
    return spaces.Box(amap.action_low, amap.action_high, dtype=np.float64)


def observe(episode: Episode, snap, agent: str, order: tuple[str, ...] | None):
    """``agent``'s observation in ``snap``: the flat Box's vector (``order`` None: modules in
    ``observe`` order), or the Dict's (module label -> a float64 copy, in ``order``: the
    space's). Copies, made straight from the snapshot's rows (no dict in between)."""
    if order is None:
        return episode.flat_observation(snap, agent)
    i, readings, out = snap.index[agent], snap.readings, {}
    for label in order:  # a loop: ~0.2 us less than the comprehension for seven modules
        row = readings[label][i]
        # a float64 row copied as it is (the bits astype's copy gives, for less)
        out[label] = row.copy() if row.dtype is _F64 else row.astype(np.float64)
    return out


_F64 = np.dtype(np.float64)


class CoopsimEnv(gymnasium.Env):
    """One robot of a scenario, stepped in-process.

    Args:
        scenario: Path to a ``.scenario`` file (a bundled one by its relative name from
            any folder, as ``coopsim run``), or a ScenarioSpec.
        robot: The robot's network name (default: the scenario's first robot).
        observe: Module labels to observe (default: all the robot's modules with readings).
        flat: One flat Box observation instead of a Dict.
        task: A callable ``(snapshot, robot) -> (reward, terminated, truncated)`` or
            ``"module:function"``; default: the scenario's ``[TASK]``.
        engine: Physics engine label (default: the scenario's).
        render_mode: ``rgb_array`` (a top-down image, headless) or ``human`` (the viewer).
        size: Side of the rgb_array image, pixels.
        lean: The robot carries only the observed modules and its motion module (nothing
            else is sensed for it; faster); needs ``observe``.

    Every other robot of the scenario keeps whatever drives it there (its driver, or
    nothing). Same seed, same actions -> the same observations, bit for bit.
    """

    metadata = {"render_modes": list(MODES), "render_fps": 30}

    def __init__(self, scenario, robot: str | None = None, observe=None, flat: bool = False,
                 task=None, engine: str | None = None, render_mode: str | None = None,
                 size: int = 256, lean: bool = False) -> None:
        spec = load(scenario)
        self.robot = select_agents(spec, robot)[0]
        self.episode = Episode(spec, (self.robot,), observe, task, engine, lean=lean)
        self.amap = self.episode.maps[self.robot]
        self.flat = flat
        self.observation_space = observation_space(self.amap, flat)
        self.action_space = action_space(self.amap)
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.episode.sim.dt)}
        self._drawing = Drawing(spec, size, render_mode)
        self._order = None if flat else tuple(self.observation_space.spaces)
        self.closed = False
        self._human = render_mode == "human"
        # Only a human view's servers call into the world from other threads, and they do
        # it under the world lock (Episode.tick); without them nobody else can hold it.
        self._tick = self.episode.tick if self._human else self.episode.stepper.tick

    def _obs(self, snap):
        return observe(self.episode, snap, self.robot, self._order)

    @staticmethod
    def _info(snap, metrics: dict) -> dict:
        """``info``: sim time (s), step count, and ``metrics``: the snapshot's metric values
        in a dict of the caller's own (:func:`~coopsim.model.snapshot.metric_values`' fresh
        one)."""
        return {"time": snap.time, "step": snap.step, "metrics": metrics}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start the scenario over (with ``seed``: the run's generator seeded with it)."""
        refuse_closed(self, "reset")
        super().reset(seed=seed)
        snap = self.episode.reset(seed)
        if self.render_mode == "human":
            self.render()
        return self._obs(snap), self._info(snap, metric_values(snap.rules))

    def step(self, action):
        """Store the action as the motion command, take one simulation step."""
        if self.closed:
            refuse_closed(self, "step")
        episode, robot = self.episode, self.robot
        episode.act_one(robot, action)
        snap = self._tick()
        # the step's metrics, gathered once: the reward and the endings read them, and the
        # info hands the same fresh dict to the caller (nobody else holds it)
        metrics = metric_values(snap.rules)
        reward, terminated, truncated = episode.outcome(snap, robot, metrics)
        if self._human:
            self.render()
        return (observe(episode, snap, robot, self._order), reward, terminated, truncated,
                self._info(snap, metrics))

    def render(self):
        """``rgb_array``: an (H, W, 3) uint8 top-down image; ``human``: the viewer shows
        the run (opened at the first call)."""
        return self._drawing.render(self.render_mode, self.episode)

    def close(self) -> None:
        """Close the viewer and end the engine's render process (its camera images')."""
        self._drawing.close()
        self.episode.sim.close()
        self.closed = True  # step and reset refuse from now on, as Gymnasium's own envs do
