"""physics layer."""
