"""Prefix stability of a template on one version: the render of a conversation's first n messages
is a prefix of the render of its first n + 1, in text and in ids (``tokenizers``, no special
tokens). Where it is not, a server cannot reuse the KV cache of the previous turn.

A template is checked on the generated conversations (messages and variables, no generation
prompt); the first that breaks it is shrunk to the smallest conversation that still breaks it the
same way. Splits where either render raises are not judged.

    >>> first_break(lambda m: "".join(x["content"] for x in m) + "!", lambda t: list(t),
    ...             [{"content": "a"}, {"content": "b"}])["kind"]
    'text'
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..shrinking.minimize import shrink
from .changes import within_tries
from .rendering import render
from .version import FamilyVersion


@dataclass(frozen=True)
class PrefixResult:
    """A template's prefix stability on a version: None for ``kind`` when no conversation broke it."""

    template: str
    conversations: int  # conversations of two messages or more that were judged
    kind: str | None = None  # "text" or "ids"
    example: dict | None = None  # {"messages", "variables", "turns", "shorter", "longer"}

    @property
    def stable(self) -> bool:
        return self.kind is None


def first_break(render_text: Callable[[list], str | None], encode: Callable[[str], list[int]],
                messages: list) -> dict | None:
    """The first n where the render of messages[:n] is not a prefix of messages[:n + 1]'s."""
    renders = [render_text(messages[:n]) for n in range(1, len(messages) + 1)]
    for n, (shorter, longer) in enumerate(zip(renders, renders[1:]), start=1):
        if shorter is None or longer is None:
            continue
        if not longer.startswith(shorter):
            return {"kind": "text", "turns": n, "shorter": shorter, "longer": longer}
        short_ids, long_ids = encode(shorter), encode(longer)
        if long_ids[:len(short_ids)] != short_ids:
            return {"kind": "ids", "turns": n, "shorter": short_ids, "longer": long_ids[:len(short_ids) + 4]}
    return None


def prefix_stability(version: FamilyVersion, name: str, source: str, requests: list[dict]) -> PrefixResult:
    def judged(request: dict) -> tuple[Callable[[list], str | None], list]:
        variables = request.get("variables") or {}

        def render_text(messages: list) -> str | None:
            return render(version, source, {"messages": messages, "variables": variables}).text
        return render_text, request.get("messages") or []

    conversations = [r for r in requests if isinstance(r.get("messages"), list) and len(r["messages"]) >= 2]
    for request in conversations:
        render_text, messages = judged(request)
        found = first_break(render_text, version.oracle.encode, messages)
        if found is None:
            continue
        kind = found["kind"]

        def still(candidate: list) -> bool:
            broken = first_break(render_text, version.oracle.encode, candidate) if isinstance(candidate, list) else None
            return broken is not None and broken["kind"] == kind

        smallest = shrink(messages, within_tries(still))
        example = {"messages": smallest, "variables": request.get("variables") or {},
                   **first_break(render_text, version.oracle.encode, smallest)}
        return PrefixResult(name, len(conversations), kind, example)
    return PrefixResult(name, len(conversations))
