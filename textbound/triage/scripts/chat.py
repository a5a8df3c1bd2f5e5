"""Scripts of chat/render, chat/ids and chat/sanitized_ids: the module's ``render_chat`` (for ids, its
``Tokenizer.apply_chat_template`` on the minimized tokenizer.json and the family's
tokenizer_config.json) on the case's (minimized) template and conversation against transformers'
``apply_chat_template`` text or ids, or the class of the exception it raises, and the caller's
messages left as they were."""
from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

from textbound.oracles.chat_oracle import ChatRequest, FamilyChatOracle, frozen_clock, outcome, render

from ...checks.chat import INLINE_TEMPLATE, TOKENIZER_PROPERTIES
from .registry import Script, ScriptPlan, Unscripted, scripted

CLOCK = "strftime_now"  # the template function that reads the date, which transformers' side had frozen

# The engine's answer, or the class of the exception it raised (what is compared where transformers raises).
OUTCOME = '''messages = copy.deepcopy(MESSAGES)
try:
    actual = {{"{key}": {call}}}
except Exception as exc:  # the exception's class is the answer compared
    kind = type(exc)
    actual = {{"error": kind.__qualname__ if kind.__module__ == "builtins" else f"{{kind.__module__}}.{{kind.__qualname__}}"}}
if messages != MESSAGES:
    problems.append(f"changed the caller's messages to {{messages!a}}")
'''
RENDER = OUTCOME.format(key="text", call="engine.render_chat(TEMPLATE, messages, **ARGUMENTS)")
IDS = OUTCOME.format(key="ids", call="list(tokenizer.apply_chat_template(\n        messages, chat_template=TEMPLATE, "
                     "tokenize=True, return_dict=False, sanitize_control_tokens=SANITIZE_CONTROL_TOKENS, **ARGUMENTS))")


def _request(plan: ScriptPlan) -> tuple[str, ChatRequest]:
    """The case's template source (``template_source``, put there by the writer) and its request."""
    template = plan.case.input[INLINE_TEMPLATE]
    if CLOCK in template:
        raise Unscripted(f"the template calls {CLOCK}, and the script cannot stop the engine's clock")
    return template, ChatRequest.of(plan.case.input)


@scripted("chat", "render")
def render_script(plan: ScriptPlan) -> Script:
    """``render_chat(TEMPLATE, MESSAGES, **ARGUMENTS)`` -> EXPECTED ``{"text": "<|user|>Hi"}`` (or
    ``{"error": "jinja2.exceptions.TemplateError"}``); the case holds its template's source
    (``template_source``), put there by the writer."""
    template, request = _request(plan)
    with frozen_clock():
        text, error = outcome(lambda: render(template, request.messages, **request.arguments()))
    expected = {"error": error.error_class} if error else {"text": text}
    return Script({"TEMPLATE": template, "MESSAGES": copy.deepcopy(request.messages), "ARGUMENTS": request.arguments()},
                  expected, "transformers' apply_chat_template(MESSAGES, chat_template=TEMPLATE, tokenize=False, "
                  "**ARGUMENTS)", RENDER, imports=("import copy",))


@scripted("chat", "ids", tokenizer=True)
@scripted("chat", "sanitized_ids", tokenizer=True)
def ids_script(plan: ScriptPlan) -> Script:
    """``tokenizer.apply_chat_template(MESSAGES, chat_template=TEMPLATE, tokenize=True, return_dict=False,
    sanitize_control_tokens=..., **ARGUMENTS)`` -> EXPECTED ``{"ids": [27, 91, 82, ...]}`` (or
    ``{"error": ...}``), transformers' on the same two files."""
    from transformers import PreTrainedTokenizerFast

    template, request = _request(plan)
    sanitize = TOKENIZER_PROPERTIES[plan.case.property]
    with tempfile.TemporaryDirectory(prefix="textbound-chat-") as folder:  # the two files the script holds
        Path(folder, "tokenizer.json").write_text(json.dumps(plan.spec), encoding="utf-8")
        Path(folder, "tokenizer_config.json").write_text(json.dumps(plan.config or {}), encoding="utf-8")
        oracle = FamilyChatOracle(PreTrainedTokenizerFast.from_pretrained(folder))
    with frozen_clock():
        ids, error = outcome(lambda: oracle.ids(request.messages, template, sanitize, **request.arguments()))
    return Script({"TEMPLATE": template, "MESSAGES": copy.deepcopy(request.messages), "ARGUMENTS": request.arguments(),
                   "SANITIZE_CONTROL_TOKENS": sanitize}, {"error": error.error_class} if error else {"ids": ids},
                  "transformers' apply_chat_template(MESSAGES, chat_template=TEMPLATE, tokenize=True, "
                  "return_dict=False, sanitize_control_tokens=SANITIZE_CONTROL_TOKENS, **ARGUMENTS)", IDS,
                  imports=("import copy",))
