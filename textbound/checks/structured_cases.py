"""Cases of the ``structured`` component (being written)."""
