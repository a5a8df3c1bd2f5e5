"""Engines that keep or break the contract of textbound.adapters.contract, one way each, for
tests/test_contract.py: a module with only a stop checker (``stops_only``), one whose stop checker
returns None (``finish_returns_none``) and one whose tokenizer cannot load a family (``unloadable``)."""
