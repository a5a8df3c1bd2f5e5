"""The tokenizer-change gate: what a new tokenizer, template or library version changes for users.

``textbound compare OLD NEW`` runs the same cases through two versions of a family (two folders
with tokenizer.json and tokenizer_config.json, and maybe chat_template.jinja,
generation_config.json and special_tokens_map.json) with the oracles, `tokenizers` and
transformers, never impl, and lists every behaviour change, minimized and grouped by signature
(see ``changes``): vocabulary, added tokens and their flags, special tokens and add_*_token, the
post-processor and other pipeline stages, the ids of the same texts, decoded text, the EOS set,
chat templates and what they render, prefix stability, and the tool-call format.

    >>> from textbound.plan.budget import BUDGETS
    >>> old = load_version("old", "models/llama2")            # doctest: +SKIP
    >>> compare(old, old, BUDGETS["quick"], 0, ["tokenizer"]).changes  # doctest: +SKIP
    []

Imports ``checks``, ``families``, ``files``, ``naming``, ``plan``, ``records`` and ``shrinking``; never
``run`` or ``triage``.
"""
from .changes import Change
from .gate import COMPARED_COMPONENTS, Comparison, compare
from .version import CompareError, FamilyVersion, load_version

__all__ = ["COMPARED_COMPONENTS", "Change", "CompareError", "Comparison", "FamilyVersion", "compare", "load_version"]
