"""The built-in plugins: robot types, modules, drivers and rules.

They register through entry points exactly as an outside package's do (setup.cfg); nothing in
the core imports this package. The physics engines live in :mod:`coopsim.physics`.
"""
