"""recording layer."""
