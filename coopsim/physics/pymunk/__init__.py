"""The pymunk engine: 2D rigid-body dynamics (the default engine).

``engine.py`` is the engine (:class:`~coopsim.physics.pymunk.engine.PymunkEngine`); ``build.py``
makes its bodies and shapes from a world's specs.
"""
