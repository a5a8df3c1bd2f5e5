"""Cases of the ``chat`` component: Hypothesis-generated requests rendered by the family's own
templates and by the shared ones.

Per family, ``budget.generated_cases`` requests (properties.conversations.chat_requests, drawn from
the seed and the family's name) are each checked

- with the family's own template(s) from its tokenizer files (the embedded qwen, llama3 and
  sentencepiece ship one each in a real family's style), or, for a family that ships none (the other
  embedded ones, llama2), the project's ChatML (impl's CHATML_TEMPLATE, read as input data: see
  oracles.chat_oracle.project_template): chat/render, chat/ids and chat/sanitized_ids;
- with shared templates ($TEXTBOUND_TEMPLATES): chat/render. Request i goes to a window of
  ``SHARED_PER_REQUEST[budget]`` templates that moves along the catalogue from an offset given by the
  family's name, so a quick run over every family still reaches every template.

Render cases carry the family's special tokens as variables (bos_token, eos_token, ...), as
apply_chat_template passes them; ids cases get them from the tokenizers themselves.

Every budget also checks the request strata (properties.conversations.request_strata: every request
shape servers send, each one change from a plain request, and each as vLLM's chat preparation hands it
to the template where that differs), each case naming its stratum in
STRATUM_FIELD: with the family's own templates, and with ``STRATUM_SHARED`` of the shared templates
on which transformers renders the stratum otherwise than the plain request (elsewhere it is the
plain request again), a window that moves with the family.
"""
from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator

from textbound.oracles.chat_oracle import (
    ChatRequest,
    ChatTemplate,
    FamilyChatOracle,
    frozen_clock,
    outcome,
    render,
    shared_templates,
    templates_for,
)
from textbound.properties.conversations import STRATUM_BASE, request_strata

from ..families import Family
from ..naming.divergence import STRATUM_FIELD, Case
from ..plan.budget import Budget
from .chat import TOKENIZER_PROPERTIES
from .registry import Subject, cases

# Shared templates each request is rendered with; None: all of them.
SHARED_PER_REQUEST = {"quick": 1, "default": 6, "deep": None}
STRATUM_SHARED = 3  # shared templates per request stratum and family


def _stable_number(*parts: object) -> int:
    return int(hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def family_offset(family_name: str) -> int:
    """Where the family's window of shared templates starts (the same in every run)."""
    return _stable_number(family_name)


def shared_window(templates: tuple[ChatTemplate, ...], index: int, offset: int,
                  width: int | None) -> tuple[ChatTemplate, ...]:
    """The shared templates request ``index`` is rendered with.

    >>> [t.name for t in shared_window(tuple(ChatTemplate(n, "") for n in "abcde"), 1, 3, 2)]
    ['e', 'a']
    """
    if width is None or width >= len(templates):
        return templates
    start = offset + index * width
    return tuple(templates[(start + k) % len(templates)] for k in range(width))


def _rendered(template: ChatTemplate, request: dict):
    with frozen_clock():
        return outcome(lambda: render(template.source, ChatRequest.of(request).messages,
                                      **ChatRequest.of(request).arguments()))


def telling_templates(stratum: str) -> tuple[ChatTemplate, ...]:
    """The shared templates on which transformers renders ``stratum``'s request otherwise than the
    plain request (STRATUM_BASE): where the stratum's shape makes a difference."""
    return _telling(stratum, shared_templates())


@functools.cache  # keyed by the templates too: $TEXTBOUND_TEMPLATES may name another folder later
def _telling(stratum: str, templates: tuple[ChatTemplate, ...]) -> tuple[ChatTemplate, ...]:
    request = request_strata()[stratum]
    return tuple(template for template in templates
                 if _rendered(template, request) != _rendered(template, STRATUM_BASE))


def _control_tokens(subject: Subject) -> list[str]:
    added = subject.oracle.tokenizer.get_added_tokens_decoder().values()
    return sorted({token.content for token in added if token.special})


def _case(prop: str, family: Family, template: ChatTemplate, request: dict) -> Case:
    return Case("chat", prop, family.name, {"template": template.name, "template_digest": template.digest, **request})


@cases("chat")
def chat_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    if family.origin == "fuzz":
        return  # a fuzzed pipeline has no chat of its own: the tokenizer component checks its ids
    from textbound.properties.conversations import chat_requests
    from textbound.properties.strategies import draw_examples
    own = templates_for(family.path)
    shared = shared_templates()
    specials = FamilyChatOracle.of(family.path).special_token_variables()
    offset = family_offset(family.name)
    for index, (stratum, request) in enumerate(request_strata().items()):
        named = {**request, STRATUM_FIELD: stratum}
        with_specials = {**named, "variables": {**specials, **request["variables"]}}
        for template in own:
            yield _case("render", family, template, with_specials)
            for prop in TOKENIZER_PROPERTIES:
                yield _case(prop, family, template, named)
        for template in shared_window(telling_templates(stratum), index, offset, STRATUM_SHARED):
            yield _case("render", family, template, with_specials)
    requests = draw_examples(chat_requests(_control_tokens(subject)), budget.generated_cases,
                             _stable_number(seed, family.name, "chat"))
    for index, request in enumerate(requests):
        with_specials = {**request, "variables": {**specials, **request["variables"]}}
        for template in own:
            yield _case("render", family, template, with_specials)
            for prop in TOKENIZER_PROPERTIES:
                yield _case(prop, family, template, request)
        for template in shared_window(shared, index, offset, SHARED_PER_REQUEST.get(budget.name, 1)):
            yield _case("render", family, template, with_specials)
