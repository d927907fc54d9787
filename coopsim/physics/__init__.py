"""The physics layer: the engine interface and the built-in engines (imports only
:mod:`coopsim.model`; never zmq or a window library).

``engine.py`` is the seam: the :class:`~coopsim.physics.engine.Engine` interface, its
``features`` (``joints``, ``flight``, ``arms``, ``batch``...) and what the rest of coopsim may
call; ``engine3d.py`` gives the 3D calls' 2D answers; ``shapes.py`` the geometry engines share.
Code outside this package uses an engine through that interface alone.

The engines, each registered by entry point like any plugin: ``pymunk/engine.py`` (2D
dynamics, the default), ``kinematic*.py`` (2D swarms: compiled kernels, a numpy twin, grids,
a small world's step in one call), ``mujoco_*.py`` (3D on MuJoCo: the only modules importing
it, and only when the engine is chosen; arms, described robots, scenery, rays, images rendered
in a process of their own, the divergence guard) and ``aerial*.py`` (3D flyers without
contacts). A ``*_fused.py`` file is an engine's side of a fused step: its kernels and arrays
handed to the module kinds' one compiled call.
"""
