"""Checks of the ``chat`` component: chat templates rendered by the implementation against
transformers' ``apply_chat_template`` (oracles/chat_oracle.py), dates frozen on both sides.

- chat/render: ``render_chat(template, messages, ...)`` gives transformers' text byte for byte, or
  raises the same exception class where transformers raises; and leaves the caller's messages as
  they were.
- chat/ids, chat/sanitized_ids: ``Tokenizer.apply_chat_template(..., tokenize=True, return_dict=False)``
  gives transformers' ids, without and with ``sanitize_control_tokens``, errors compared the same way.
  A module without ``Tokenizer`` gets a "not provided" divergence for these: never a pass.

A case names its template (``template``, resolved by ``oracles.chat_oracle.resolve`` with the digest
it was made with) and holds the request (``ChatRequest``): for example

    {"template": "shared:zephyr", "template_digest": "...", "messages": [{"role": "user", "content": "Hi"}],
     "tools": null, "documents": null, "add_generation_prompt": true, "continue_final_message": false,
     "variables": {"eos_token": "</s>"}}

A minimized case also holds its minimized template's source (``template_source``), rendered instead.
A divergence names the template in ``first_difference`` and, for text, the first differing character
with both sides' text around it.
"""
from __future__ import annotations

import copy

from oracles.chat_oracle import (ChatRequest, ChatTemplate, FamilyChatOracle, Raised, frozen_clock, outcome, render,
                                 resolve)

from ..divergence import Case, Divergence
from .registry import Subject, check, ids_divergence, impl_outcome, text_divergence

TOKENIZER_PROPERTIES = {"ids": False, "sanitized_ids": True}  # property -> sanitize_control_tokens
INLINE_TEMPLATE = "template_source"  # a case's template given as source (a minimized one), beside its name


def case_template(subject: Subject, case: Case) -> ChatTemplate:
    """The case's template: its ``template_source`` where it has one (named ``minimized:`` and the
    template it was cut from, so that apply_chat_template gets the source), else the one its name
    resolves to."""
    if INLINE_TEMPLATE in case.input:
        return ChatTemplate(f"minimized:{case.input['template']}", case.input[INLINE_TEMPLATE])
    return subject.cached(f"chat template {case.input['template']}", lambda: resolve(
        case.input["template"], subject.path, case.input.get("template_digest")))


def _error_divergence(case: Case, expected, oracle_error: Raised | None, actual,
                      impl_error: Raised | None) -> Divergence | None:
    """Where either side raised: none when both raised the same class, else what differs."""
    if oracle_error and impl_error:
        if oracle_error.error_class == impl_error.error_class:
            return None
        kind = f"raised {impl_error.error_class} where transformers raises {oracle_error.error_class}"
    elif oracle_error:
        kind = f"renders where transformers raises {oracle_error.error_class}"
    else:
        kind = f"raised {impl_error.error_class}"
    return Divergence(case, str(oracle_error) if oracle_error else expected,
                      str(impl_error) if impl_error else actual, kind,
                      {"where": impl_error.where} if impl_error else {})


def _named(template: ChatTemplate, divergence: Divergence | None) -> Divergence | None:
    if divergence is not None:
        divergence.first_difference = {"template": template.name, **divergence.first_difference}
    return divergence


@check("chat", "render", minimize="messages")
def check_render(subject: Subject, case: Case) -> Divergence | None:
    template, request = case_template(subject, case), ChatRequest.of(case.input)
    messages = copy.deepcopy(request.messages)
    with frozen_clock():
        expected, oracle_error = outcome(lambda: render(template.source, request.messages, **request.arguments()))
        actual, impl_error = impl_outcome(lambda: subject.impl.render_chat(template.source, messages,
                                                                      **request.arguments()))
    if oracle_error or impl_error:
        found = _error_divergence(case, expected, oracle_error, actual, impl_error)
    elif actual != expected:
        found = text_divergence(case, expected, actual)
    else:
        found = None
    if found is None and messages != request.messages:
        found = Divergence(case, request.messages, messages, "changed the caller's messages")
    return _named(template, found)


def _chat_template_argument(template: ChatTemplate) -> str | None:
    """What apply_chat_template's ``chat_template=`` gets: nothing for the family's own template (the
    tokenizer selects it), the name of one of its named templates, else the source itself."""
    if template.name == "family":
        return None
    if template.name.startswith("family:"):
        return template.name.removeprefix("family:")
    return template.source


@check("chat", "ids", minimize="messages")
@check("chat", "sanitized_ids", minimize="messages")
def check_ids(subject: Subject, case: Case) -> Divergence | None:
    if not hasattr(getattr(subject.impl, "Tokenizer", None), "apply_chat_template"):
        return Divergence(case, None, None, "not provided: Tokenizer.apply_chat_template")
    template, request = case_template(subject, case), ChatRequest.of(case.input)
    sanitize = TOKENIZER_PROPERTIES[case.property]
    chat_template = _chat_template_argument(template)
    oracle = FamilyChatOracle.of(subject.path)
    with frozen_clock():
        expected, oracle_error = outcome(lambda: oracle.ids(request.messages, chat_template, sanitize,
                                                            **request.arguments()))
        actual, impl_error = impl_outcome(lambda: subject.tokenizer.apply_chat_template(
            copy.deepcopy(request.messages), chat_template=chat_template, tokenize=True, return_dict=False,
            sanitize_control_tokens=sanitize, **request.arguments()))
    if oracle_error or impl_error:
        return _named(template, _error_divergence(case, expected, oracle_error, actual, impl_error))
    if actual == expected:
        return None
    return _named(template, ids_divergence(subject, case, expected, actual, subject.oracle.decode(expected)))

