"""Changes of the chat and tools components between two family versions.

- the templates: gone, new, or a changed source (the first differing lines);
- the rendered text of the same request (generated conversations with their tools, documents,
  endings and variables), requests one version refuses and the other renders, and, where the
  text is the same, the ids a prompt gets (``tokenizer(text)``: a BOS the template writes and the
  tokenizer adds again shows here);
- tools: the format ``impl.format_for_template`` picks for each template, and how an assistant
  message with tool calls (arguments as an object and as a JSON string) renders.

Every rendering change is minimized by ``shrink`` (fewest messages, shortest strings, fewest keys)
while it still changes the same way.

    >>> render_kind(Rendered("a\\n", None), Rendered("a", None))
    'text differs'
"""
from __future__ import annotations

import difflib

from ..shrinking.minimize import shrink
from .changes import Change, Changes, within_tries
from .rendering import Rendered, render
from .version import FamilyVersion

DIFF_LINES = 6  # lines of a template's source diff kept in a change


def templates_of(version: FamilyVersion) -> dict[str, str]:
    """The version's own templates by name ("family", "family:NAME"), as transformers loads them."""
    from textbound.oracles.chat_oracle import family_templates
    return {t.name: t.source for t in family_templates(version.path.resolve())}


def _control_tokens(*versions: FamilyVersion) -> list[str]:
    return sorted({t.content for v in versions for t in v.oracle.tokenizer.get_added_tokens_decoder().values()
                   if t.special})


def chat_requests(old: FamilyVersion, new: FamilyVersion, count: int, seed: int) -> list[dict]:
    """The generated requests both versions render (the chat cases' strategy, drawn from the seed)."""
    from textbound.properties.conversations import chat_requests as requests
    from textbound.properties.strategies import draw_examples
    return draw_examples(requests(_control_tokens(old, new)), count, seed)


def tool_call_requests() -> list[dict]:
    """An assistant message with a tool call and its result, arguments as an object and as JSON text."""
    import json

    from textbound.properties.conversations import TOOLS
    arguments = {"city": "Zürich", "unit": "celsius"}
    requests = []
    for encoded in (arguments, json.dumps(arguments, ensure_ascii=False)):
        call = {"type": "function", "id": "call_1", "function": {"name": "get_weather", "arguments": encoded}}
        requests.append({"messages": [
            {"role": "user", "content": "Weather in Zürich?"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": '{"temperature": 21}'},
            {"role": "assistant", "content": "It is 21 °C."}], "tools": [TOOLS[0]]})
    return requests


def render_kind(before: Rendered, after: Rendered) -> str | None:
    """How two renderings of one request differ, in words that group causes; None when alike."""
    if before.refused and after.refused:
        return None
    if before.refused:
        return "OLD refuses, NEW renders"
    if after.refused:
        return "NEW refuses, OLD renders"
    return "text differs" if before.text != after.text else None


def template_changes(old_templates: dict[str, str], new_templates: dict[str, str], changes: Changes) -> None:
    changes.ran("chat", "template", len(old_templates.keys() | new_templates.keys()))
    for name in sorted(old_templates.keys() | new_templates.keys()):
        before, after = old_templates.get(name), new_templates.get(name)
        if before == after:
            continue
        if before is None or after is None:
            kind = "template: added" if before is None else "template: removed"
            changes.add(Change("chat", kind, name, before is not None, after is not None))
            continue
        diff = [line for line in difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=0)
                if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        changes.add(Change("chat", "template: source changed", name,
                           [line[1:] for line in diff if line[0] == "-"][:DIFF_LINES],
                           [line[1:] for line in diff if line[0] == "+"][:DIFF_LINES]))


def rendering_changes(old: FamilyVersion, new: FamilyVersion, old_templates: dict[str, str],
                      new_templates: dict[str, str], requests: list[dict], component: str, changes: Changes) -> None:
    """Each request rendered by each template of either version, on both; ``component`` names what
    the requests exercise ("chat" for generated ones, "tools" for the tool-call ones)."""
    prop = "render" if component == "chat" else "call_render"
    for name in sorted(old_templates.keys() | new_templates.keys()):
        sources = old_templates.get(name), new_templates.get(name)
        changes.ran(component, prop, len(requests))
        for request in requests:
            before, after = render(old, sources[0], request), render(new, sources[1], request)
            kind = render_kind(before, after)
            if kind is None and before.text is not None:
                if _prompt_ids(old, before.text) != _prompt_ids(new, after.text):
                    kind = "ids of the rendered prompt differ"
            if kind is not None:
                _add_rendering_change(old, new, sources, name, request, kind, f"{prop}: {kind}", component, changes)


def _prompt_ids(version: FamilyVersion, text: str) -> list[int]:
    return version.transformers_tokenizer(text, add_special_tokens=True)["input_ids"]


def _add_rendering_change(old, new, sources, name, request, kind, full_kind, component, changes) -> None:
    def still(candidate) -> bool:
        before, after = render(old, sources[0], candidate), render(new, sources[1], candidate)
        found = render_kind(before, after)
        if found is None and kind.startswith("ids") and before.text is not None:
            return _prompt_ids(old, before.text) != _prompt_ids(new, after.text)
        return found == kind

    if changes.examples_wanted(f"{component}/{full_kind}", name):
        request = shrink(request, within_tries(still))
    before, after = render(old, sources[0], request), render(new, sources[1], request)
    if kind.startswith("ids"):
        old_value, new_value = _prompt_ids(old, before.text), _prompt_ids(new, after.text)
    else:
        old_value, new_value = before.text or before.error_class, after.text or after.error_class
    changes.add(Change(component, full_kind, name, old_value, new_value, request))


def tool_format_changes(old_templates: dict[str, str], new_templates: dict[str, str], changes: Changes) -> None:
    from textbound.impl import format_for_template
    changes.ran("tools", "format", len(old_templates.keys() | new_templates.keys()))
    for name in sorted(old_templates.keys() | new_templates.keys()):
        before, after = (format_for_template(t[name]) if name in t else None for t in (old_templates, new_templates))
        if before != after:
            changes.add(Change("tools", "format: picked format changed", name, before, after))
