"""Built-in hardware modules, one per file: motors, sonar, target, odometry, gps, compass,
bumper, support. Each declares its commands, parameters, reading and columns
(:class:`coopsim.model.module.Module`)."""
