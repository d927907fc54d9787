"""Learning environments (docs/learning.md): one robot's Gymnasium environment against the bare
tick, K copies x 4 agents on each batch backend, and the bundled scenarios' batches built and
stepped (was benchmarks/learning_bench.py and bundled_vec_bench.py; the batched worlds against
VMAS are peers.py's)."""

import time

from .common import Case, alternate, count, per_call_ms, root, sizes, threads, unit, \
    us_per_agent_step


def _scenario(name: str) -> str:
    return str(root() / "scenarios" / f"{name}.scenario")


class SingleEnv(Case):
    """``scenarios/learn_goal.scenario`` (one ``single`` robot, seven modules) made as users make
    it (``gymnasium.make``, wrappers included): us per env step, and over the bare
    ``Stepper.tick`` of the same world (the environment's own cost), blocks alternating."""

    params = (sizes("pymunk", "kinematic", smoke="kinematic"),)
    param_names = ("engine",)

    def setup(self, engine):
        import gymnasium
        import numpy as np

        import coopsim.env  # noqa: F401 -- registers coopsim/Scenario-v0

        threads(1)
        env = gymnasium.make("coopsim/Scenario-v0", scenario=_scenario("learn_goal"),
                             engine=engine)
        env.reset(seed=0)
        action = np.array([0.3, 0.28])

        def step():
            if env.step(action)[3]:  # truncated after 20 s: go on from the start
                env.reset()
        tick = env.unwrapped.episode.stepper.tick
        self.env_ms, self.tick_ms = alternate(lambda: per_call_ms(step, 500, 1),
                                              lambda: per_call_ms(tick, 500, 1))

    @unit("us")
    def track_us_per_step(self, engine):
        return self.env_ms * 1e3

    @unit("x tick")
    def track_over_tick(self, engine):
        return self.env_ms / self.tick_ms


class Batched(Case):
    """K copies of ``scenarios/learn_avoid.scenario`` x 4 agents (sonar observed) in one
    ``gymnasium.make_vec`` environment, on the ``world`` backend (every copy in one
    simulation) or ``copies`` (the compiled copy caster): us per agent-step, one thread."""

    params = (sizes("world", "copies", smoke="copies"), sizes(256, 4096, smoke=2))
    param_names = ("backend", "copies")

    def setup(self, backend, copies):
        import gymnasium
        import numpy as np

        import coopsim.env  # noqa: F401
        from coopsim.env.mapping import LearningError

        threads(1)
        agents = [f"r{i}" for i in range(1, 5)]
        try:
            vec = gymnasium.make_vec("coopsim/Scenario-v0", num_envs=copies, backend=backend,
                                     scenario=_scenario("learn_avoid"), robot=agents,
                                     observe=["sonar"])
        except LearningError as refused:  # more copies than the world backend's one world holds
            raise NotImplementedError(str(refused)) from None
        vec.reset(seed=0)
        actions = np.tile([0.3, 0.28], (copies, 4, 1))
        self.ms = per_call_ms(lambda: vec.step(actions), max(2, 20000 // copies))
        self.agents = copies * 4

    @unit("us/agent-step")
    def track_us_per_agent_step(self, backend, copies):
        return us_per_agent_step(self.agents, self.ms)


class Bundled(Case):
    """Each bundled learning scenario through ``gymnasium.make_vec`` with its defaults (every
    module observed; the backend it picks) at 4,096 copies: the build, s (imports, plugins
    and kernels warmed by a one-copy batch first), and a step, ms."""

    params = (["learn_avoid", "learn_goal", "learn_coverage"],)
    param_names = ("scenario",)

    def setup(self, scenario):
        import gymnasium

        import coopsim.env  # noqa: F401

        def build(copies):
            t0 = time.perf_counter()
            env = gymnasium.make_vec("coopsim/Scenario-v0", num_envs=copies,
                                     scenario=_scenario(scenario))
            return env, time.perf_counter() - t0
        build(1)
        self.env, self.build_s = build(count(4096, 2))
        self.env.reset(seed=0)

    @unit("s")
    def track_build_s(self, scenario):
        return self.build_s

    @unit("ms")
    def track_step_ms(self, scenario):
        import numpy as np

        act = np.zeros(self.env.action_space.shape)
        return per_call_ms(lambda: self.env.step(act), 5, 3)
