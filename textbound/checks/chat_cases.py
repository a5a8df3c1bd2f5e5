"""Cases of the ``chat`` component (being written)."""
