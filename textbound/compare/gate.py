"""``textbound compare OLD NEW``: every behaviour change between two versions of a family.

The same cases run through both versions, with the oracles (see textbound.compare); prefix
stability is judged on each version's own templates and on every shared template
($TEXTBOUND_TEMPLATES), rendered with each version's special tokens.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from textbound.oracles.chat_oracle import frozen_clock, shared_templates

from ..plan.budget import Budget
from .changes import Change, Changes
from .chat_changes import (
    chat_requests,
    rendering_changes,
    template_changes,
    templates_of,
    tool_call_requests,
    tool_format_changes,
)
from .prefix import PrefixResult, prefix_stability
from .tokenizer_changes import tokenizer_changes
from .version import FamilyVersion

# The components compare has cases for (structured generation does not depend on the family's files).
COMPARED_COMPONENTS = ("tokenizer", "detokenizer", "stops", "chat", "tools")


@dataclass
class Comparison:
    changes: list[Change]
    cases: dict[tuple[str, str], int]
    prefix: dict[str, dict[str, PrefixResult]] = field(default_factory=dict)  # template -> {"old", "new"}


def compare(old: FamilyVersion, new: FamilyVersion, budget: Budget, seed: int, components: list[str]) -> Comparison:
    changes = Changes()
    tokenizer_changes(old, new, budget, components, changes)
    prefix: dict[str, dict[str, PrefixResult]] = {}
    if "chat" in components or "tools" in components:
        old_templates, new_templates = templates_of(old), templates_of(new)
        with frozen_clock():
            if "chat" in components:
                requests = chat_requests(old, new, budget.generated_cases, seed)
                template_changes(old_templates, new_templates, changes)
                rendering_changes(old, new, old_templates, new_templates, requests, "chat", changes)
                prefix = _prefix_changes(old, new, old_templates, new_templates, requests, changes)
            if "tools" in components:
                tool_format_changes(old_templates, new_templates, changes)
                rendering_changes(old, new, old_templates, new_templates, tool_call_requests(), "tools", changes)
    return Comparison(changes.listed(), dict(changes.cases), prefix)


def _renders_alike(old: FamilyVersion, new: FamilyVersion) -> bool:
    """Whether a shared template renders and encodes the same on both (same tokenizer, same specials)."""
    return (old.tokenizer_json == new.tokenizer_json
            and old.transformers_tokenizer.special_tokens_map == new.transformers_tokenizer.special_tokens_map)


def _prefix_changes(old, new, old_templates, new_templates, requests, changes: Changes) -> dict:
    results: dict[str, dict[str, PrefixResult]] = {}
    for name in sorted(old_templates.keys() | new_templates.keys()):
        results[name] = {v.label: prefix_stability(v, name, t[name], requests)
                         for v, t in ((old, old_templates), (new, new_templates)) if name in t}
    alike = _renders_alike(old, new)
    for template in shared_templates():
        before = prefix_stability(old, template.name, template.source, requests)
        results[template.name] = {"old": before,
                                  "new": before if alike else prefix_stability(new, template.name, template.source,
                                                                               requests)}
    for name, sides in results.items():
        changes.ran("chat", "prefix")
        before, after = sides.get("old"), sides.get("new")
        if before and after and before.kind != after.kind:
            broken = after if after.kind else before
            changes.add(Change("chat", "prefix: stability changed", name, before.kind or "stable",
                               after.kind or "stable", broken.example))
    return results
