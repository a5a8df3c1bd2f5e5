"""Chat rendering speed: impl's ``render_chat`` against transformers' ``apply_chat_template``.

Each shared template renders one ordinary conversation (a system message, two turns, a tool call and
its result); both sides are timed in the same run, after one warm-up render that compiles the
template, so what is compared is a render, not a compilation. Templates that raise on the
conversation (strict role alternation, tools required) are left out of the sums.

    template                      impl ms  transformers ms  ratio
    vllm_hermes                     0.41             0.23    1.8x
"""
from __future__ import annotations

import time
from collections.abc import Callable

from textbound.oracles.chat_oracle import bare_tokenizer, frozen_clock, shared_templates

from ..plan.implementation import Implementation

CONVERSATION = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "content": "{\"temperature\": 21}"},
    {"role": "assistant", "content": "It is 21 °C in Paris."},
    {"role": "user", "content": "Thanks!"},
]
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
REPEATS = 20


def _per_call_ms(call: Callable[[], object]) -> float:
    """The best of a few rounds of REPEATS calls, in milliseconds per call."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(REPEATS):
            call()
        best = min(best, (time.perf_counter() - start) / REPEATS)
    return best * 1000


def chat_benchmark(impl: Implementation) -> None:
    templates = shared_templates()
    if not templates:
        print("chat: no shared templates ($TEXTBOUND_TEMPLATES is not set)")
        return
    arguments = {"tools": TOOLS, "add_generation_prompt": True}
    oracle_tokenizer = bare_tokenizer()  # built once, so only rendering is timed

    def render(source: str) -> str:
        return oracle_tokenizer.apply_chat_template(CONVERSATION, chat_template=source, tokenize=False, **arguments)

    impl_total = oracle_total = 0.0
    rendered = 0
    print(f"{'chat template':<40} {'impl ms':>8} {'transformers ms':>16} {'ratio':>7}")
    with frozen_clock():
        for template in templates:
            try:
                # The warm-up compiles the template on both sides; a template that raises is left out.
                render(template.source)
                impl.render_chat(template.source, CONVERSATION, **arguments)
            except Exception:  # noqa: BLE001 - a template may refuse this conversation by design
                continue
            impl_ms = _per_call_ms(lambda: impl.render_chat(template.source, CONVERSATION, **arguments))
            oracle_ms = _per_call_ms(lambda: render(template.source))
            impl_total, oracle_total, rendered = impl_total + impl_ms, oracle_total + oracle_ms, rendered + 1
            print(f"{template.name.removeprefix('shared:'):<40} {impl_ms:>8.2f} {oracle_ms:>16.2f} "
                  f"{impl_ms / oracle_ms:>6.1f}x")
    if rendered:
        print(f"chat: {rendered} templates, impl takes {impl_total / oracle_total:.2f}x transformers' time per "
              f"conversation ({impl_total / rendered:.2f} ms against {oracle_total / rendered:.2f} ms)")
