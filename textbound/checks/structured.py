"""Checks of the ``structured`` component (being written)."""
