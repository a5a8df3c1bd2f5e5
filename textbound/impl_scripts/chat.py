"""Scripts of chat/render: the module's ``render_chat`` on the case's (minimized) template and
conversation against transformers' ``apply_chat_template`` text, or the class of the exception it
raises, and the caller's messages left as they were."""
from __future__ import annotations

import copy

from oracles.chat_oracle import ChatRequest, frozen_clock, outcome, render

from ..checks.chat import INLINE_TEMPLATE
from .registry import Script, ScriptPlan, Unscripted, scripted

CLOCK = "strftime_now"  # the template function that reads the date, which transformers' side had frozen

RENDER = '''messages = copy.deepcopy(MESSAGES)
try:
    actual = {"text": engine.render_chat(TEMPLATE, messages, **ARGUMENTS)}
except Exception as exc:  # the exception's class is the answer compared
    kind = type(exc)
    actual = {"error": kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"}
if messages != MESSAGES:
    problems.append(f"changed the caller's messages to {messages!a}")
'''


@scripted("chat", "render")
def render_script(plan: ScriptPlan) -> Script:
    """``render_chat(TEMPLATE, MESSAGES, **ARGUMENTS)`` -> EXPECTED ``{"text": "<|user|>Hi"}`` (or
    ``{"error": "jinja2.exceptions.TemplateError"}``); the case holds its template's source
    (``template_source``), put there by the writer."""
    template, request = plan.case.input[INLINE_TEMPLATE], ChatRequest.of(plan.case.input)
    if CLOCK in template:
        raise Unscripted(f"the template calls {CLOCK}, and the script cannot stop the engine's clock")
    with frozen_clock():
        text, error = outcome(lambda: render(template, request.messages, **request.arguments()))
    expected = {"error": error.error_class} if error else {"text": text}
    return Script({"TEMPLATE": template, "MESSAGES": copy.deepcopy(request.messages), "ARGUMENTS": request.arguments()},
                  expected, "transformers' apply_chat_template(MESSAGES, chat_template=TEMPLATE, tokenize=False, "
                  "**ARGUMENTS)", RENDER, imports=("import copy",))
