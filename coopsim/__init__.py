"""coopsim: a networked multi-robot simulator."""
__version__ = "0.1.0"
