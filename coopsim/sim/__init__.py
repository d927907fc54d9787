"""sim layer."""
