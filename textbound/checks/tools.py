"""Checks of the ``tools`` component (being written)."""
