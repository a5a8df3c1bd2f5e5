"""Cases of the ``tools`` component: on every family, model outputs in every format, drawn by
Hypothesis (properties.model_outputs) deterministically from the seed, each parsed whole, streamed
at a few random splits (and one character per delta when short), checked delta by delta, and (every
few) streamed as the family's tokens; the fixed hard outputs (every tag inside string arguments, a
tag's beginning in content), parsed whole and streamed one character per delta, so a tag split
across deltas or a close tag inside a string is met on every run; and assistant messages rendered by
each format's own template (when $TEXTBOUND_TEMPLATES is set) for round trips, each with the whole
parse of its assistant part (the round trip leaves to it what impl reads otherwise); and the option
strata (properties.model_outputs.option_strata: one fixed output for every combination of tools,
reasoning and starts_in_reasoning, and, where the format has reasoning tags, the answer after a prompt
rendered with enable_thinking false: no reasoning tag at all), parsed whole and streamed in two
halves, each case naming its stratum in STRATUM_FIELD.

The tools component hardly depends on the family (only tools/tokens uses its tokenizer), so a
family's generated cases are shared out among the formats, and each family takes its own sample of
outputs drawn once per process.
"""
from __future__ import annotations

import functools
import random
import zlib
from collections.abc import Iterator

from textbound.oracles.chat_oracle import templates_dir
from textbound.oracles.tool_reference import TOOL_CALL_FORMATS
from textbound.properties.model_outputs import (
    ROUND_TRIP_TEMPLATES,
    THINKING_OFF,
    TOOLS,
    assistant_messages,
    hard_outputs,
    model_outputs,
    option_strata,
    thinking_off_output,
)
from textbound.properties.strategies import DRAW_CHUNK, draw_examples

from ..families import Family
from ..naming.divergence import STRATUM_FIELD, Case
from ..plan.budget import Budget
from .registry import Subject, cases, oracle_call
from .streaming import random_splits
from .shapes_cases import tool_shape_cases
from .tools import assistant_part, shared_template

MIN_OUTPUTS = 3         # per format and family, whatever the budget
POOL_FACTOR = 4         # each format's outputs are drawn once per process, this many times a family's share
CHAR_BY_CHAR_MAX = 80   # texts up to this long are also streamed one character per delta
TOKENS_EVERY = 3        # every third output is also streamed as the family's tokens
ROUND_TRIPS_EVERY = 5   # one round-trip message per five outputs
DRAWN = {"outputs": model_outputs, "messages": assistant_messages}


@functools.cache
def _pool(what: str, fmt: str, seed: int, size: int) -> tuple:
    """Hypothesis's examples, drawn once per process (a draw costs a Hypothesis run): families
    then take different samples of them."""
    return tuple(draw_examples(DRAWN[what](fmt), size, zlib.crc32(f"{seed}/tools/{fmt}/{what}".encode())))


def _sample(rng: random.Random, what: str, fmt: str, seed: int, count: int) -> list:
    pool = _pool(what, fmt, seed, max(count * POOL_FACTOR, DRAW_CHUNK))
    return rng.sample(pool, count)


@cases("tools")
def tool_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    per_format = max(MIN_OUTPUTS, budget.generated_cases // len(TOOL_CALL_FORMATS))
    for fmt in TOOL_CALL_FORMATS:
        for output in hard_outputs(fmt):
            one_by_one = list(range(1, len(output["text"])))
            yield Case("tools", "whole", family.name, {**output, "splits": []})
            yield Case("tools", "stream", family.name, {**output, "splits": one_by_one})
            yield Case("tools", "deltas", family.name, {**output, "splits": one_by_one})
        strata = option_strata(fmt)
        if (thinking_off := thinking_off_output(fmt)) is not None:
            strata[THINKING_OFF] = thinking_off
        for stratum, output in strata.items():
            named = {**output, STRATUM_FIELD: f"{fmt} {stratum}"}
            yield Case("tools", "whole", family.name, {**named, "splits": []})
            yield Case("tools", "stream", family.name, {**named, "splits": [len(output["text"]) // 2]})
        yield from tool_shape_cases(family.name, subject, fmt)
        rng = random.Random(f"{seed}/{family.name}/tools/{fmt}")
        for number, output in enumerate(_sample(rng, "outputs", fmt, seed, per_format)):
            length = len(output["text"])
            splits = [random_splits(rng, length, fewest=1, most=max(1, length // 4))
                      for _ in range(budget.stream_splits)]
            if length <= CHAR_BY_CHAR_MAX:
                splits.append(list(range(1, length)))
            yield Case("tools", "whole", family.name, {**output, "splits": []})
            for cut in splits:
                yield Case("tools", "stream", family.name, {**output, "splits": cut})
            yield Case("tools", "deltas", family.name, {**output, "splits": splits[-1]})
            if number % TOKENS_EVERY == 0:
                yield Case("tools", "tokens", family.name, {**output, "splits": []})
        if templates_dir() is not None and fmt in ROUND_TRIP_TEMPLATES:
            template = ROUND_TRIP_TEMPLATES[fmt][0]
            for message in _sample(rng, "messages", fmt, seed, max(1, per_format // ROUND_TRIPS_EVERY)):
                # Only messages the template writes right after its own generation prompt can round-trip.
                rendered, cannot = oracle_call(lambda: assistant_part(fmt, shared_template(template), message,
                                                                      list(TOOLS)))
                if not cannot:
                    part, starts_in_reasoning = rendered
                    yield Case("tools", "whole", family.name, {
                        "format": fmt, "text": part, "tools": list(TOOLS), "reasoning": True,
                        "starts_in_reasoning": starts_in_reasoning, "splits": []})
                    yield Case("tools", "round_trip", family.name,
                               {"format": fmt, "template": template, "message": message, "tools": list(TOOLS)})
