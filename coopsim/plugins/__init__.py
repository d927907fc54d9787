"""plugins layer."""
