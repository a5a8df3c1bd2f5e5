"""Standalone Python reproducers in an ``--impl`` module's own public API (impl/__init__.py's names),
one maker per (component, property): ``registry`` (a leaf) holds them and the skeleton every script is
written in; each component module registers its makers there when it is imported, and this package
imports every one of them by name. textbound.triage.reproducer writes the files (``triage --reproducers``)."""
from . import chat, reference, streams, structured, tokenizer, tools
from .registry import SCRIPTED, Script, ScriptPlan, Unscripted, script_text

__all__ = ["SCRIPTED", "Script", "ScriptPlan", "Unscripted", "chat", "reference", "script_text", "streams", "structured",
           "tokenizer", "tools"]
