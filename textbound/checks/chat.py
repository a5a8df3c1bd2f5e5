"""Checks of the ``chat`` component (being written)."""
