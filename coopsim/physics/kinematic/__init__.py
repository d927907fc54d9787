"""The kinematic engine: 2D swarms without dynamics (poses integrated from commanded velocities,
walls and bodies kept apart), stepped by compiled kernels.

``engine.py`` is the engine (:class:`~coopsim.physics.kinematic.engine.KinematicEngine`);
``kernels.py`` its step's kernels; ``grid.py`` the uniform grid its contacts are found with;
``static.py`` the walls; ``small.py`` a small world's whole step in one call; ``fused.py`` its
side of a fused step.
"""
