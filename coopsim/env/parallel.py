"""Every robot (or one team) of a scenario as a PettingZoo ``ParallelEnv`` (docs/learning.md):
the same observation, action and task mapping as the Gymnasium environment, per agent.
PettingZoo is imported here only."""

from __future__ import annotations

import numpy as np
from pettingzoo import ParallelEnv

from ..model.snapshot import metric_values
from .episode import Episode, load, select_agents
from .gym import action_space, observation_space, observe, refuse_closed
from .render import MODES, Drawing


class CoopsimParallelEnv(ParallelEnv):
    """Robots of a scenario as agents, stepped together in-process.

    Args:
        scenario: Path to a ``.scenario`` file (a bundled one by its relative name from
            any folder, as ``coopsim run``), or a ScenarioSpec.
        robots: Network names of the agents (default: every robot, or ``team``'s).
        team: A squad name or a ``team`` of the scenario's ``[SQUAD_n]`` sections.
        observe, flat, task, engine, render_mode, size, lean: As for
            :class:`~coopsim.env.gym.CoopsimEnv` (``task`` gets each agent's name).

    An agent whose episode ended (terminated or truncated) leaves ``agents``; its robot stays
    in the world with its wheels stopped until the next ``reset``.
    """

    metadata = {"name": "coopsim_parallel_v0", "render_modes": list(MODES), "render_fps": 30}

    def __init__(self, scenario, robots=None, team: str | None = None, observe=None,
                 flat: bool = False, task=None, engine: str | None = None,
                 render_mode: str | None = None, size: int = 256,
                 lean: bool = False) -> None:
        spec = load(scenario)
        self.possible_agents = list(select_agents(spec, robots, team))
        self.episode = Episode(spec, self.possible_agents, observe, task, engine, lean=lean)
        self.flat = flat
        maps = self.episode.maps
        self.observation_spaces = {a: observation_space(maps[a], flat) for a in maps}
        self.action_spaces = {a: action_space(maps[a]) for a in maps}
        self.render_mode = render_mode
        self.agents: list[str] = []
        self._drawing = Drawing(spec, size, render_mode)

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def _obs(self, snap, agent):
        return observe(self.episode, snap, agent,
                       None if self.flat else tuple(self.observation_spaces[agent].spaces))

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start over (with ``seed``: the run's generator seeded with it)."""
        refuse_closed(self, "reset")
        snap = self.episode.reset(seed)
        self.agents = list(self.possible_agents)
        if self.render_mode == "human":
            self.render()
        return ({a: self._obs(snap, a) for a in self.agents},
                {a: {"time": snap.time, "step": snap.step} for a in self.agents})

    def step(self, actions: dict):
        """Every live agent's action stored as its motion command, then one step."""
        refuse_closed(self, "step")
        self.episode.act(actions)
        snap = self.episode.tick()
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        metrics = metric_values(snap.rules)
        for a in self.agents:
            obs[a] = self._obs(snap, a)
            rewards[a], terms[a], truncs[a] = self.episode.outcome(snap, a)
            infos[a] = {"time": snap.time, "step": snap.step, "metrics": metrics}
        done = [a for a in self.agents if terms[a] or truncs[a]]
        if done:  # a finished agent's robot stops
            self.episode.act({a: np.zeros_like(self.episode.maps[a].action_low) for a in done})
        self.agents = [a for a in self.agents if a not in done]
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terms, truncs, infos

    def render(self):
        """``rgb_array``: a top-down (H, W, 3) uint8 image; ``human``: the viewer."""
        return self._drawing.render(self.render_mode, self.episode)

    def close(self) -> None:
        """Close the viewer and end the engine's render process (its camera images')."""
        self._drawing.close()
        self.episode.sim.close()
        self.closed = True  # step and reset refuse from now on


def parallel_env(scenario, **kwargs) -> CoopsimParallelEnv:
    """PettingZoo's customary constructor name: ``CoopsimParallelEnv(scenario, **kwargs)``."""
    return CoopsimParallelEnv(scenario, **kwargs)
