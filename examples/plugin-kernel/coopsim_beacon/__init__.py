"""coopsim-beacon: a module kind computed by a compiled kernel (``beacon``), one of Python code
only (``chime``) and a robot type carrying both (``beaconbot``)."""
