"""Cases of the ``tools`` component (being written)."""
