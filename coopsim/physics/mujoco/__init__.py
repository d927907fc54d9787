"""The mujoco engine: 3D on MuJoCo (the only package importing it, and only when the engine is
chosen).

``engine.py`` is the engine (:class:`~coopsim.physics.mujoco.engine.MujocoEngine`), built from a
world's specs by ``build.py`` (bodies, ``bodies.py``; scenery, ``scenery.py``) with its state
arrays in ``state.py``; ``access.py`` reads and writes them for the rest of coopsim. Robots:
``drive.py`` (wheels), ``arms.py`` and ``servos.py`` (joints), ``held.py`` (external robots'
held poses), ``imported.py`` and ``imported_arm.py`` (robots from description files, compiled
by MuJoCo itself), ``links.py`` (their links' poses). Sensing: ``rays.py`` and ``raykernel.py``
(ranges), ``camera.py`` and ``renderproc.py`` (images rendered in a process of their own).
``health.py`` is the divergence guard.
"""
