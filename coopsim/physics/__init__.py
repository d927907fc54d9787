"""The physics layer: the engine interface and the built-in engines (imports only
:mod:`coopsim.model` and :mod:`coopsim.description`; never zmq or a window library).

``engine.py`` is the seam: the :class:`~coopsim.physics.engine.Engine` interface, its
``features`` (``joints``, ``flight``, ``arms``, ``batch``...) and what the rest of coopsim may
call; ``engine3d.py`` gives the 3D calls' 2D answers; ``shapes.py`` the geometry engines share.
Code outside this package uses an engine through that interface alone.

The engines, one sub-package each, registered by entry point like any plugin (``engine.py``
in each is the engine's class, beside its kernels): ``pymunk/`` (2D dynamics, the default),
``kinematic/`` (2D swarms: compiled kernels, grids, a small world's step in one call),
``mujoco/`` (3D on MuJoCo: the only package importing it, and only when the engine is chosen;
arms, described robots, scenery, rays, images rendered in a process of their own, the
divergence guard) and ``aerial/`` (3D flyers without contacts). An engine's ``fused.py`` is
its side of a fused step: its kernels and arrays handed to the module kinds' one compiled call.
Robots from description files come as :mod:`coopsim.description`'s data.
"""
