"""The aerial engine: 3D rigid bodies in free flight without contacts (multirotors), stepped by
compiled kernels.

``engine.py`` is the engine (:class:`~coopsim.physics.aerial.engine.AerialEngine`); ``kernels.py``
its step's kernels (rotor thrust, drag, integration); ``rays.py`` and ``raykernel.py`` its range
sensing against the floor, walls and bodies; ``fused.py`` its side of a fused step: the kernels
and arrays handed to the module kinds' one compiled call.
"""
