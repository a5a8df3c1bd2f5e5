"""Cases of a running server (``source == SERVER``): the prompt side through the library's builders,
the output side (textbound.checks.server_output) from the seed.

- tokenizer: the library's cases, decode keeping special tokens only (/detokenize has no
  skip_special_tokens); the vocab property is not provided by a server (textbound.server.features);
- chat: the library's cases with the family's own template and no documents (a server renders
  its own template, never a shared or named one, and takes no documents), rendered text without
  continue_final_message (llama.cpp's /apply-template, the one text a server shows, lacks it), that transformers
  renders: where it raises, a server answers 400, which is no exception to compare by class;
- detokenizer, stops: completions of prompts cut from the corpora's snippets as the family encodes
  them (or of random ids of its vocabulary), seeded, of 1 to MAX_TOKENS tokens, special tokens
  skipped (server_specials: kept, where the dialect can ask that); with ``messages``,
  the chat asked instead where the dialect has no completions (OpenAI's public API). Each is built
  for one output shape (``output_shapes``, in turn): ``steer`` names the ids the output is steered
  to, ``shape`` the shape, and a prompt ending mid-character ends with a character's first byte.
  The same requests ask the shapes of checks/server_shapes.py: ``n`` choices, logprobs, echo (of a
  prompt of whole characters), finish reasons, and MAX_CONCURRENCY requests sent at once;
- tools, structured: short conversations of corpus text, with a tool group of the corpus and a
  tool_choice ("required" or one of them by name), or with a tool's parameters as the JSON schema.

A case is the request, never the server's answer: the stop strings are picked as positions into the
text of a first unstopped run (``{"at": boundary, "before": left, "after": right}``: around the
``boundary``-th place where two streamed chunks meet, ``left`` characters before it and ``right``
after; a key left out, as minimizing leaves them, counts as 0, 0 and 1), so they occur across token
and chunk boundaries whatever the server generates.

    >>> next(server_detokenizer_cases(family, BUDGETS["quick"], 0, subject)).input    # doctest: +SKIP
    {'prompt': [464, 2068], 'max_tokens': 9, 'seed': 1804289383, 'skip_special_tokens': True,
     'steer': [127, 102, 643, 275, 280], 'shape': 'split characters', ...}
"""
from __future__ import annotations

import random
import re
from collections.abc import Iterator

from textbound.oracles.chat_oracle import ChatRequest, FamilyChatOracle, outcome
from textbound.properties.schemas import tool_corpus

from ..families import Family
from ..naming.divergence import REPLACEMENT_CHARACTER, Case
from ..plan.budget import Budget
from ..plan.implementation import SERVER
from .chat_cases import chat_cases
from .registry import Subject, cases
from .streaming import vocabulary_survey
from .tokenizer_cases import corpus_snippets, tokenizer_cases

MAX_TOKENS = 24  # tokens of text per detokenizer and stops case
CONSTRAINED_MAX_TOKENS = 160  # a forced call or JSON object needs room to close
MAX_PROMPT_IDS = 16
MAX_STOPS = 3
SEED_RANGE = 2**31  # what every server takes as a sampling seed
OWN_TEMPLATE = "family"  # the template a family folder's tokenizer_config.json holds: the one a server renders
# What a steered output meets (output_shapes): characters of two, three and four UTF-8 bytes spelled
# one byte a token, a few plain ids, special and added tokens that do not end generation, tool tags.
SPLIT_CHARACTERS = ("é", "€", "😀")
PLAIN_TEXT = " the world, said"
PLAIN_STEERED = 3
SPECIALS_STEERED = 4
END_WORDS = re.compile(r"end|eos|eot|</s>|stop|eom", re.IGNORECASE)  # an end-of-generation token's name
TOOL_TAG = re.compile(r"tool|call|python", re.IGNORECASE)
CHOICES = (2, 3)  # n of a server_choices case, in turn
MAX_CONCURRENCY = 8  # requests a server_concurrent case holds (--server-concurrency sends up to so many)
SHORT_TOOL_TOKENS = 12  # a forced call cut at max_tokens: its finish_reason is "length"



@cases("tokenizer", source=SERVER)
def server_tokenizer_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    return (case for case in tokenizer_cases(family, budget, seed, subject)
            if not case.input.get("skip_special_tokens"))


@cases("chat", source=SERVER)
def server_chat_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    oracle = FamilyChatOracle.of(family.path)

    def rendered(case: Case) -> bool:
        request = ChatRequest.of(case.input)
        return outcome(lambda: oracle.ids(request.messages, None, False, **request.arguments()))[1] is None

    def asked_of_a_server(case: Case) -> bool:
        return (case.input["template"] == OWN_TEMPLATE and case.input.get("documents") is None
                and not (case.property == "render" and case.input.get("continue_final_message")))

    return (case for case in chat_cases(family, budget, seed, subject) if asked_of_a_server(case) and rendered(case))


def _rng(seed: int, family: Family, component: str) -> random.Random:
    return random.Random(f"{seed}/{family.name}/server/{component}")


def _per_property(budget: Budget) -> int:
    return max(3, budget.generated_cases // 3)


def _prompts(subject: Subject, budget: Budget, rng: random.Random) -> Iterator[list[int]]:
    """Prompts of 1 to MAX_PROMPT_IDS ids: a corpus snippet's beginning, or (one in four) random ids."""
    snippets = [ids for ids in (subject.oracle.encode(text) for text in corpus_snippets(budget)) if ids]
    ids = vocabulary_survey(subject).ids
    while True:
        if snippets and rng.random() < 0.75:
            yield rng.choice(snippets)[: rng.randint(1, MAX_PROMPT_IDS)]
        else:
            yield [rng.choice(ids) for _ in range(rng.randint(1, MAX_PROMPT_IDS))]


def _completion(rng: random.Random, prompt: list[int], snippets: list[str]) -> dict:
    return {"prompt": prompt, "messages": _conversation(rng, snippets), "max_tokens": rng.randint(1, MAX_TOKENS),
            "seed": rng.randrange(SEED_RANGE), "skip_special_tokens": True}


def output_shapes(subject: Subject) -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
    """Each output shape the family's vocabulary can make, as (ids a prompt ends with, ids to steer
    the output to): characters split across tokens, byte-fallback runs, special and added tokens,
    tool-call tags, a prompt ending mid-character. A few plain ids go with each, so that text
    meets the shape on both sides.

    >>> output_shapes(gpt2_subject)["split characters"]          # doctest: +SKIP
    ((), (126, 102, 262, 995))                                    # "é"'s two bytes, " the", " world"
    """
    def cached() -> dict:
        survey, oracle = vocabulary_survey(subject), subject.oracle
        plain = tuple(dict.fromkeys(oracle.encode(PLAIN_TEXT)))[:PLAIN_STEERED]
        spelled = {char: survey.spelled(char) for char in SPLIT_CHARACTERS}
        two, longer = spelled[SPLIT_CHARACTERS[0]], [i for char in SPLIT_CHARACTERS[1:] for i in spelled[char]]
        added = {survey.vocab[token] for token in survey.added_tokens if token in survey.vocab}
        specials = [i for i in sorted(set(survey.special_ids) | added)
                    if not END_WORDS.search(oracle.decode([i], False))][:SPECIALS_STEERED]
        tags = [i for i in sorted(added) if TOOL_TAG.search(oracle.decode([i], False))][:SPECIALS_STEERED]
        shapes = {"split characters": ((), tuple(two) + plain), "byte runs": ((), tuple(longer) + plain[:1]),
                  "special and added tokens": ((), tuple(specials) + plain), "tool-call tags": ((), tuple(tags) + plain),
                  "prompt mid-character": (tuple(two[:1]), tuple(two[1:]) + tuple(two[:1]) + plain[:1])}
        return {name: shape for name, shape in shapes.items() if set(shape[1]) - set(plain)}
    return subject.cached("output shapes", cached)


def _steered(subject: Subject, request: dict, index: int) -> dict:
    """``request`` with the ``index``-th output shape (in turn, so that every run draws each): its
    ``steer`` ids and, for a prompt ending mid-character, the prompt's last ids."""
    shapes = output_shapes(subject)
    if not shapes:
        return request
    name = sorted(shapes)[index % len(shapes)]
    ending, steer = shapes[name]
    return {**request, "prompt": list(request["prompt"]) + list(ending), "steer": list(steer), "shape": name}


@cases("detokenizer", source=SERVER)
def server_detokenizer_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    rng = _rng(seed, family, "detokenizer")
    snippets = corpus_snippets(budget)
    for index, prompt in zip(range(_per_property(budget)), _prompts(subject, budget, rng)):
        request = _steered(subject, _completion(rng, prompt, snippets), index)
        yield Case("detokenizer", "server_stream", family.name, request)
        yield Case("detokenizer", "server_specials", family.name, {**request, "skip_special_tokens": False})
        yield Case("detokenizer", "server_whole", family.name, request)
        yield Case("detokenizer", "server_choices", family.name, {**request, "n": CHOICES[index % len(CHOICES)]})
        yield Case("detokenizer", "server_finish", family.name, request)
        yield Case("detokenizer", "server_logprobs", family.name, {**request, "top_logprobs": rng.randint(0, 2)})
        echoed = _steered(subject, _completion(rng, _snippet_prompt(subject, budget, rng), snippets), index)
        if echoed.get("shape") != "prompt mid-character":  # an echo shows the prompt's text: whole characters
            yield Case("detokenizer", "server_echo", family.name, echoed)
        yield Case("detokenizer", "server_concurrent", family.name, {"requests": [
            _steered(subject, _completion(rng, prompt, snippets), index + offset) for offset in range(MAX_CONCURRENCY)]})


def _snippet_prompt(subject: Subject, budget: Budget, rng: random.Random) -> list[int]:
    """A corpus snippet's first ids, ending on a whole character (an echo case's prompt)."""
    for prompt in _prompts(subject, budget, rng):
        if not subject.oracle.decode(prompt, True).endswith(REPLACEMENT_CHARACTER):
            return prompt


@cases("stops", source=SERVER)
def server_stop_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    rng = _rng(seed, family, "stops")
    for index, prompt in zip(range(_per_property(budget)), _prompts(subject, budget, rng)):
        picks = [{"at": rng.randrange(MAX_TOKENS), "before": rng.randint(0, 3), "after": rng.randint(1, 3)}
                 for _ in range(rng.randint(1, MAX_STOPS))]
        request = _steered(subject, _completion(rng, prompt, corpus_snippets(budget)), index)
        yield Case("stops", "server", family.name, {**request, "stops": picks})


def _conversation(rng: random.Random, snippets: list[str]) -> list[dict]:
    """One to three user turns (with the assistant's answers between them) of corpus text."""
    def text() -> str:
        snippet = rng.choice(snippets)
        start = rng.randrange(len(snippet))
        return snippet[start:start + rng.randint(1, 80)].strip() or "Hello"

    messages = []
    for turn in range(rng.randint(1, 3)):
        if turn:
            messages.append({"role": "assistant", "content": text()})
        messages.append({"role": "user", "content": text()})
    return messages


@cases("tools", source=SERVER)
def server_tool_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    rng = _rng(seed, family, "tools")
    snippets, groups = corpus_snippets(budget), tool_corpus()
    for _ in range(_per_property(budget)):
        tools = groups[rng.choice(sorted(groups))]
        named = rng.choice([None, *(tool["function"]["name"] for tool in tools)])
        choice = {"type": "function", "function": {"name": named}} if named else "required"
        yield Case("tools", "server", family.name, {
            "messages": _conversation(rng, snippets), "tools": tools, "tool_choice": choice,
            "max_tokens": rng.choice((CONSTRAINED_MAX_TOKENS, CONSTRAINED_MAX_TOKENS, SHORT_TOOL_TOKENS)),
            "seed": rng.randrange(SEED_RANGE)})


@cases("structured", source=SERVER)
def server_structured_cases(family: Family, budget: Budget, seed: int, subject: Subject) -> Iterator[Case]:
    rng = _rng(seed, family, "structured")
    snippets = corpus_snippets(budget)
    tools = [tool for group in tool_corpus().values() for tool in group]
    for _ in range(_per_property(budget)):
        tool = rng.choice(tools)["function"]
        yield Case("structured", "server", family.name, {
            "messages": _conversation(rng, snippets), "schema_name": tool["name"], "schema": tool["parameters"],
            "max_tokens": CONSTRAINED_MAX_TOKENS, "seed": rng.randrange(SEED_RANGE)})
