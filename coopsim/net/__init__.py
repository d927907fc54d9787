"""net layer."""
