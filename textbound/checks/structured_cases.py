"""Cases of the ``structured`` component: the corpus's tool schemas and generated schemas, drawn
deterministically from the seed.

sound, complete, differential and errors do not depend on the vocabulary, so at the quick budget
each family takes its own seeded sample of the corpus (together the families cover it) and at default
every family takes all of it. Their cases are seeded from the run's seed and the case's own input,
never the family: a corpus schema is one case on every family, which a run of several families
checks once (registry.FAMILY_INDEPENDENT; report.md notes it). mask and guarantee walk the
vocabulary; a large one (Qwen3's 151k tokens) gets fewer cases, since each step of every engine
costs in proportion to it.
"""
from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator

from textbound.oracles.structured_oracles import outlines_can_build
from textbound.properties.schemas import draw_examples, schemas, tool_corpus, tool_schemas

from ..families import Family
from ..naming.divergence import Case
from ..plan.budget import Budget
from .registry import Subject, cases

# The tool-call formats a forced call is written in (impl.structured.tool_call's), taken in turn.
FORCED_CALL_FORMATS = ("hermes", "llama3_json", "mistral")
LARGE_VOCABULARY = 60_000
# Keywords outside impl's subset, each with a value that is valid JSON Schema; the oneOf's branches
# may overlap ("abc") and neither has a negation impl writes.
UNSUPPORTED = {"not": {"minimum": 3}, "multipleOf": 3, "prefixItems": [{"type": "string"}],
               "unevaluatedProperties": False, "contains": {"type": "string"},
               "oneOf": [{"maxLength": 3}, {"minLength": 2}]}
# Beside these, a oneOf is in impl's subset: each value is tried against the branches.
FINITE_VALUES = {"enum", "const"}


def _share(budget: Budget) -> dict[str, int]:
    """How much of each kind of case one family gets, from the budget's generated_cases (30 quick)."""
    generated = budget.generated_cases
    return {"corpus": 60 if generated >= 300 else generated // 10, "generated": generated // 10 if generated >= 300 else 1,
            "examples": 20 if generated >= 300 else 8, "mask": generated // 10, "guarantee": generated // 10,
            "runs": max(2, generated // 30)}


def input_seed(seed: int, prop: str, fields: dict) -> int:
    """A case's sampling seed from the run's ``seed`` and the case's own fields, the family left out,
    so that every family given the same schema builds the same case: ``input_seed(0, "sound",
    {"schema": {}})`` is the same number in every run and on every family."""
    text = json.dumps([seed, prop, fields], ensure_ascii=False)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=4).digest(), "big")


def _unsupported_variant(schema: dict, rng: random.Random) -> tuple[dict, str, list[str]]:
    """The schema with one unsupported keyword added at its root or in one of its properties."""
    keyword = rng.choice(sorted(UNSUPPORTED))
    names = sorted(schema.get("properties", {}))
    if names and rng.random() < 0.7:
        name = rng.choice(names)
        if keyword == "oneOf" and FINITE_VALUES & schema["properties"][name].keys():
            keyword = rng.choice(sorted(UNSUPPORTED.keys() - {"oneOf"}))
        inner = {**schema["properties"][name], keyword: UNSUPPORTED[keyword]}
        return {**schema, "properties": {**schema["properties"], name: inner}}, keyword, ["properties", name]
    return {**schema, keyword: UNSUPPORTED[keyword]}, keyword, []


@cases("structured")
def structured_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    rng = random.Random(f"{seed}/{family.name}/structured")
    share = _share(budget)
    large = subject.oracle.vocab_size > LARGE_VOCABULARY
    corpus = tool_schemas()
    sampled = rng.sample(sorted(corpus), min(share["corpus"], len(corpus)))
    generated = draw_examples(schemas(), share["generated"], rng.randrange(2**32)) if share["generated"] else []
    named = [(name, corpus[name]["function"]["parameters"]) for name in sampled]
    named += [(f"generated-{index}", schema) for index, schema in enumerate(generated)]

    def case(prop: str, **fields) -> Case:
        return Case("structured", prop, family.name, {**fields, "seed": rng.randrange(2**32)})

    def shared_case(prop: str, **fields) -> Case:
        return Case("structured", prop, family.name, {**fields, "seed": input_seed(seed, prop, fields)})

    for source, schema in named:
        for prop in ("sound", "complete", "differential"):
            yield shared_case(prop, source=source, schema=schema, examples=share["examples"])
    # outlines-core's Index takes seconds to a minute per pattern even on small vocabularies (50 s
    # for messaging/post_message on gpt2): on the smallest schema only.
    masked = named[: max(1, share["mask"] // (4 if large else 1))]
    smallest = min((source for source, schema in masked if outlines_can_build(schema)),
                   key=lambda source: len(json.dumps(dict(masked)[source])), default=None)
    for source, schema in masked:
        oracles = ["llguidance", "outlines-core"] if source == smallest and not large else ["llguidance"]
        yield case("mask", source=source, schema=schema, oracles=oracles)

    groups = tool_corpus()
    for index in range(max(1, share["guarantee"] // (4 if large else 1))):
        group = rng.choice(sorted(groups))
        tools = groups[group]
        forced = rng.choice([None, *(tool["function"]["name"] for tool in tools)])
        fmt = FORCED_CALL_FORMATS[index % len(FORCED_CALL_FORMATS)]
        yield case("guarantee", source=group, tools=tools, name=forced, format=fmt,
                   runs=max(1, share["runs"] // (4 if large else 1)))
        if index == 0:
            yield case("mask", source=group, tools=tools, name=forced, format=fmt, oracles=["llguidance"])

    for group, tools in sorted(groups.items())[: max(1, share["corpus"] // 6)]:
        yield shared_case("errors", source=group, tools=tools, name="no_such_tool")
    for source, schema in named[: max(1, share["corpus"] // 6)]:
        variant, keyword, path = _unsupported_variant(schema, rng)
        yield shared_case("errors", source=source, schema=variant, keyword=keyword, path=path)
