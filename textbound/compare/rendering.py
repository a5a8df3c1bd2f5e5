"""Rendering a request with one version's transformers tokenizer, as its users get it.

A template is rendered by the version's own tokenizer, so the special-token variables (bos_token,
eos_token...) are that version's. A request is the chat cases' plain data (ChatRequest). What
raised is compared by class only: messages change between library versions, a refusal does not.

    >>> Rendered("hi", None).refused, Rendered(None, "TemplateError").refused
    (False, True)
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from textbound.oracles.chat_oracle import ChatRequest, outcome

from .version import FamilyVersion


@dataclass(frozen=True)
class Rendered:
    text: str | None
    error_class: str | None  # None when it rendered

    @property
    def refused(self) -> bool:
        return self.error_class is not None


NO_TEMPLATE = "no such template"
MALFORMED = "malformed request"
MESSAGE_KEYS = frozenset({"role", "content"})


def render(version: FamilyVersion, source: str | None, request: dict) -> Rendered:
    """``request`` rendered by ``source`` (None: the version has no such template, a refusal)."""
    if source is None:
        return Rendered(None, NO_TEMPLATE)
    try:
        parsed = ChatRequest.of(request)
    except (KeyError, TypeError, AttributeError):  # a minimization step dropped what a request needs
        return Rendered(None, MALFORMED)
    # Shrinking keeps each message's role and content, so that examples read as conversations.
    if not all(isinstance(m, dict) and MESSAGE_KEYS <= m.keys() for m in parsed.messages or [None]):
        return Rendered(None, MALFORMED)
    text, raised = outcome(lambda: version.transformers_tokenizer.apply_chat_template(
        copy.deepcopy(parsed.messages), chat_template=source, tokenize=False, **parsed.arguments()))
    if raised is not None:
        return Rendered(None, raised.error_class)
    if not isinstance(text, str):
        return Rendered(None, f"rendered {type(text).__name__}, not text")
    return Rendered(text, None)
