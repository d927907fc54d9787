"""Built-in robot types: ``single`` (one differential-drive robot) and ``team2`` (two robots
carrying a bar)."""
