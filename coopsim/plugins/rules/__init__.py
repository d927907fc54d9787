"""Built-in rules (ARGoS's loop functions)."""
