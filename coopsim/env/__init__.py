"""Learning on coopsim (docs/learning.md): a scenario as a Gymnasium environment (one robot),
a PettingZoo ParallelEnv (many robots), and K isolated copies stepped as one batch (Gymnasium's
vector API).

``import coopsim`` never imports this package, and this package imports Gymnasium and
PettingZoo only where they are used (the ``learning`` extra installs them). Importing it
registers the Gymnasium ids (:func:`register_envs`) when Gymnasium is installed, so::

    import gymnasium
    env = gymnasium.make("coopsim.env:coopsim/Scenario-v0", scenario="one.scenario")

works from a fresh interpreter (Gymnasium >= 1.0 imports the module named before the colon;
older Gymnasium calls :func:`register_envs` through the ``gymnasium.envs`` entry point).
"""

from __future__ import annotations

SCENARIO_ID = "coopsim/Scenario-v0"
#: A Crazyflie hovering at a waypoint (scenarios/crazyflie_hover.scenario, mujoco engine).
HOVER_ID = "coopsim/CrazyflieHover-v0"


def register_envs() -> None:
    """Register ``coopsim/Scenario-v0`` (its ``make_vec`` gives the batched worlds) and
    ``coopsim/CrazyflieHover-v0`` with Gymnasium; a second call does nothing.

    ``coopsim/Scenario-v0`` declines Gymnasium's passive env checker (``disable_env_checker``,
    an :class:`~gymnasium.envs.registration.EnvSpec` field): it checks only the first reset and
    step, every later step pays its call, and the test suite runs Gymnasium's full
    ``check_env`` on this env instead (tests/env/test_learning_gym.py);
    ``gymnasium.make(..., disable_env_checker=False)`` adds it back. The order enforcer stays
    (a step before the first reset raises).
    """
    # from the registration module: an entry-point plugin runs while gymnasium is importing
    from gymnasium.envs.registration import register, registry

    if SCENARIO_ID in registry:
        return
    register(id=SCENARIO_ID, entry_point="coopsim.env.gym:CoopsimEnv",
             vector_entry_point="coopsim.env.vector:CoopsimVectorEnv",
             disable_env_checker=True)
    register(id=HOVER_ID, entry_point="coopsim.env.flight:make")


try:  # registering needs Gymnasium; without it the package still imports
    import gymnasium as _gymnasium  # noqa: F401
except ImportError:  # pragma: no cover -- the learning extra is not installed
    pass
else:
    register_envs()
